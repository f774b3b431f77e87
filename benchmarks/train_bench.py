"""Training throughput: TRL SFT and Dr. GRPO steps next to a bare PyTorch forward+backward(+AdamW) of the
same batch, for the tiny model, SmolLM2-135M and the student-cpu.

Usage: ``python benchmarks/train_bench.py [--quick] [--no-write]`` (quick: fewer steps, no SmolLM2). Writes
its section of docs/benchmarks.md between ``<!-- train_bench:start -->`` and ``<!-- train_bench:end -->``.
The SFT overhead target is ≤ 1.3× the bare step; a GRPO step also generates, so its ratio is reported, not
targeted.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

DOC = Path(__file__).resolve().parent.parent / "docs" / "benchmarks.md"
START, END = "<!-- train_bench:start -->", "<!-- train_bench:end -->"


def conversation(turns: int) -> list[dict]:
    """A tool conversation of ``turns`` find/view rounds then recommend+terminate (~1k tokens at 6)."""
    messages = [
        {"role": "system", "content": "You are a shopping assistant."},
        {"role": "user", "content": "Find red nike running shoes under 100 with free shipping."},
    ]
    for i in range(turns):
        args = json.dumps({"q": f"red nike running shoes {i}", "page": 1, "price": "0-100"})
        messages += [
            {
                "role": "assistant",
                "content": f"<think>\nSearch round {i}.\n</think>\n\n",
                "tool_calls": [{"type": "function", "function": {"name": "find_product", "arguments": args}}],
            },
            {
                "role": "tool",
                "content": json.dumps(
                    [
                        {
                            "product_id": str(100000 + i),
                            "title": "Nike Red Runner",
                            "price": 89.0,
                            "service": ["freeShipping"],
                        }
                    ]
                ),
            },
        ]
    messages.append(
        {
            "role": "assistant",
            "content": "I recommend 100000.",
            "tool_calls": [
                {
                    "type": "function",
                    "function": {"name": "recommend_product", "arguments": '{"product_ids": "100000"}'},
                },
                {"type": "function", "function": {"name": "terminate", "arguments": '{"status": "success"}'}},
            ],
        }
    )
    return messages


def tools() -> list[dict]:
    from shoparena.env.shop_tools import ShopTools

    return [s.to_openai() for s in ShopTools(None).tool_schemas()[:4]]


class StepTimer:
    def __init__(self):
        from transformers import TrainerCallback

        timer = self

        class _CB(TrainerCallback):
            def on_step_begin(self, args, state, control, **kw):
                timer.t0 = time.perf_counter()

            def on_step_end(self, args, state, control, **kw):
                timer.times.append(time.perf_counter() - timer.t0)

        self.times: list[float] = []
        self.callback = _CB()

    def median(self) -> float:
        return statistics.median(self.times[1:] or self.times)  # first step warms up


def bare_steps(model_path: str, batch: list[list[int]], masks: list[list[int]], steps: int) -> float:
    """Median seconds of forward+backward+AdamW on ``batch`` in plain PyTorch."""
    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(model_path, dtype=torch.float32)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-5)
    width = max(len(b) for b in batch)
    ids = torch.tensor([b + [0] * (width - len(b)) for b in batch])
    att = torch.tensor([[1] * len(b) + [0] * (width - len(b)) for b in batch])
    labels = ids.clone()
    labels[torch.tensor([m + [0] * (width - len(m)) for m in masks]) == 0] = -100
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        model(input_ids=ids, attention_mask=att, labels=labels).loss.backward()
        opt.step()
        opt.zero_grad()
        times.append(time.perf_counter() - t0)
    return statistics.median(times[1:])


def bench_sft(model_path: str, steps: int) -> dict:
    import datasets
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import SFTTrainer

    from shoparena.train.data import render_sft_record
    from shoparena.train.models import prepare_tokenizer
    from shoparena.train.trl_configs import ShopSFTConfig

    tok = AutoTokenizer.from_pretrained(model_path)
    prepare_tokenizer(tok)
    enc = render_sft_record(tok, conversation(6), json.dumps(tools()))
    ds = datasets.Dataset.from_list([enc] * (steps + 1))
    before_s = bare_steps(model_path, [enc["input_ids"]], [enc["assistant_masks"]], steps)
    timer = StepTimer()
    with tempfile.TemporaryDirectory() as out:
        args = ShopSFTConfig(
            output_dir=out,
            use_cpu=True,
            bf16=False,
            per_device_train_batch_size=1,
            max_steps=steps,
            report_to="none",
            save_strategy="no",
            logging_steps=1000,
            assistant_only_loss=False,
            learning_rate=1e-5,
            disable_tqdm=True,
            max_length=None,
        )
        trainer = SFTTrainer(
            model=AutoModelForCausalLM.from_pretrained(model_path),
            args=args,
            train_dataset=ds,
            processing_class=tok,
            callbacks=[timer.callback],
        )
        trainer.train()
    trl_s = timer.median()
    # Bare steps before and after the TRL run, so a load change on a shared host hits both sides alike.
    bare_s = statistics.median(
        [before_s, bare_steps(model_path, [enc["input_ids"]], [enc["assistant_masks"]], steps)]
    )
    n = len(enc["input_ids"])
    return {"tokens": n, "trl_s": trl_s, "bare_s": bare_s, "trl_tok_s": n / trl_s, "bare_tok_s": n / bare_s}


def bench_grpo(model_path: str, steps: int, completion: int = 64, generations: int = 4) -> dict:
    import datasets
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOTrainer

    from shoparena.train.models import prepare_tokenizer
    from shoparena.train.reward import toolrl_reward
    from shoparena.train.trl_configs import ShopGRPOConfig

    tok = AutoTokenizer.from_pretrained(model_path)
    prepare_tokenizer(tok)
    tok.padding_side = "left"
    messages = conversation(2)
    prompt = tok.apply_chat_template(messages[:-1], tools=tools(), tokenize=False, add_generation_prompt=True)
    teacher = json.dumps([{"name": "recommend_product", "arguments": {"product_ids": "100000"}}])
    ds = datasets.Dataset.from_list([{"prompt": prompt, "teacher_action": teacher}] * (steps + 1))
    timer = StepTimer()
    with tempfile.TemporaryDirectory() as out:
        args = ShopGRPOConfig(
            output_dir=out,
            use_cpu=True,
            bf16=False,
            per_device_train_batch_size=generations,
            num_generations=generations,
            max_completion_length=completion,
            max_steps=steps,
            report_to="none",
            save_strategy="no",
            logging_steps=1000,
            disable_tqdm=True,
        )
        trainer = GRPOTrainer(
            model=AutoModelForCausalLM.from_pretrained(model_path),
            reward_funcs=[toolrl_reward],
            args=args,
            train_dataset=ds,
            processing_class=tok,
            callbacks=[timer.callback],
        )
        trainer.train()
    trl_s = timer.median()
    prompt_ids = tok(prompt)["input_ids"]
    seq = prompt_ids + [tok.eos_token_id] * completion
    mask = [0] * len(prompt_ids) + [1] * completion
    bare_s = bare_steps(model_path, [seq] * generations, [mask] * generations, steps)
    n = len(seq) * generations
    return {"tokens": n, "trl_s": trl_s, "bare_s": bare_s, "trl_tok_s": n / trl_s, "bare_tok_s": n / bare_s}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="Fewer steps, skip SmolLM2-135M.")
    parser.add_argument("--no-write", action="store_true", help="Do not update docs/benchmarks.md.")
    parser.add_argument("--models", nargs="*", help="Subset of tiny, student-cpu, smollm2.")
    args = parser.parse_args()
    from shoparena.train.models import resolve_model

    names = args.models or ["tiny", "student-cpu"] + ([] if args.quick else ["smollm2"])
    steps = 4 if args.quick else 8
    rows = []
    for name in names:
        path = resolve_model(name)
        sft = bench_sft(path, steps)
        grpo = bench_grpo(path, max(2, steps // 2))
        rows.append((name, sft, grpo))
        print(name, json.dumps({"sft": sft, "grpo": grpo}, default=lambda v: round(v, 4)))
    load = os.getloadavg()[0]
    lines = [
        "## Training throughput (`benchmarks/train_bench.py`)",
        "",
        f"Command: `python benchmarks/train_bench.py{' --quick' if args.quick else ''}`; "
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC; {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} cores, load average {load:.1f} at the end (shared host: absolute numbers are "
        "pessimistic, the ratios are the comparison). fp32, batch 1 SFT conversation with tools, GRPO 4 "
        "generations × 64 tokens.",
        "",
        "| model | SFT tokens | SFT tok/s (TRL) | bare tok/s | SFT overhead | GRPO tokens | "
        "GRPO tok/s (TRL) | "
        "bare fwd+bwd tok/s | GRPO / bare |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, sft, grpo in rows:
        lines.append(
            f"| {name} | {sft['tokens']} | {sft['trl_tok_s']:.0f} | {sft['bare_tok_s']:.0f} | "
            f"{sft['trl_s'] / sft['bare_s']:.2f}× | {grpo['tokens']} | {grpo['trl_tok_s']:.0f} | "
            f"{grpo['bare_tok_s']:.0f} | {grpo['trl_s'] / grpo['bare_s']:.1f}× |"
        )
    lines += [
        "",
        "Target: SFT overhead ≤ 1.3×. GRPO includes sampling the completions, which the bare step "
        "does not; its ratio is the generation cost, not trainer overhead.",
    ]
    section = "\n".join([START, *lines, END])
    print(section)
    if not args.no_write:
        text = DOC.read_text(encoding="utf-8") if DOC.exists() else "# Benchmarks\n"
        if START in text:
            text = text[: text.index(START)] + section + text[text.index(END) + len(END) :]
        else:
            text = text.rstrip() + "\n\n" + section + "\n"
        DOC.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
