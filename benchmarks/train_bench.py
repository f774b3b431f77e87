"""Training throughput: TRL SFT and Dr. GRPO steps next to a bare PyTorch forward+backward(+AdamW) of the
same batch, for the tiny model, SmolLM2-135M and the student-cpu.

Usage: ``python benchmarks/train_bench.py [--quick] [--no-write]`` (quick: 14 SFT / 5 GRPO steps, no
SmolLM2; full: 26 / 9). TRL and bare steps alternate step by step (see :class:`Interleaved`). Writes
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

from doc_sections import write_section


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


def bare_stepper(model_path: str, batch: list[list[int]], masks: list[list[int]]):
    """A closure running one plain-PyTorch forward+backward+AdamW step on ``batch``; returns its seconds."""
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

    def step() -> tuple[float, float]:
        t0, c0 = time.perf_counter(), time.process_time()
        model(input_ids=ids, attention_mask=att, labels=labels).loss.backward()
        opt.step()
        opt.zero_grad()
        return time.perf_counter() - t0, time.process_time() - c0

    return step


class Interleaved:
    """Times each TRL optimizer step (end of one step to the end of the next: data loading, collation,
    metrics, callbacks included) and runs one bare step right after it, so both sides see the same host
    load. Both wall and process CPU seconds are kept: on an oversubscribed host the wall clock also counts
    the time spent waiting for a core, the CPU clock only the work done. The first ``warmup`` pairs are
    dropped."""

    def __init__(self, bare, warmup: int = 2):
        from transformers import TrainerCallback

        timer = self
        self.trl: list[tuple[float, float]] = []
        self.bare: list[tuple[float, float]] = []
        self.warmup = warmup
        self._last: tuple[float, float] | None = None

        class _CB(TrainerCallback):
            def on_step_begin(self, args, state, control, **kw):
                if timer._last is None:  # the first step: start the clocks here
                    timer._last = (time.perf_counter(), time.process_time())

            def on_step_end(self, args, state, control, **kw):
                wall, cpu = timer._last
                timer.trl.append((time.perf_counter() - wall, time.process_time() - cpu))
                timer.bare.append(bare())
                timer._last = (time.perf_counter(), time.process_time())

        self.callback = _CB()

    def result(self, tokens: int) -> dict:
        trl, bare = self.trl[self.warmup :], self.bare[self.warmup :]
        out: dict = {"tokens": tokens, "pairs": len(trl)}
        for clock, k in (("wall", 0), ("cpu", 1)):
            ratios = sorted(t[k] / b[k] for t, b in zip(trl, bare, strict=True))
            q = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else [ratios[0]] * 3
            trl_s, bare_s = statistics.median(t[k] for t in trl), statistics.median(b[k] for b in bare)
            out[clock] = {
                "trl_s": trl_s,
                "bare_s": bare_s,
                "trl_tok_s": tokens / trl_s,
                "bare_tok_s": tokens / bare_s,
                "ratio": statistics.median(ratios),
                "ratio_q1": q[0],
                "ratio_q3": q[2],
                "ratio_min": ratios[0],
                "ratio_max": ratios[-1],
            }
        return out


def bench_sft(model_path: str, steps: int, *, fused_lm_head: bool = False) -> dict:
    import datasets
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from shoparena.train.data import render_sft_record
    from shoparena.train.methods import sft_trainer_class
    from shoparena.train.models import prepare_tokenizer
    from shoparena.train.trl_configs import ShopSFTConfig

    tok = AutoTokenizer.from_pretrained(model_path)
    prepare_tokenizer(tok)
    enc = render_sft_record(tok, conversation(6), json.dumps(tools()))
    ds = datasets.Dataset.from_list([enc] * (steps + 1))
    timer = Interleaved(bare_stepper(model_path, [enc["input_ids"]], [enc["assistant_masks"]]))
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
            fused_lm_head=fused_lm_head,
        )
        assert not args.gradient_checkpointing  # shoparena's default: off (TRL's is on)
        trainer = sft_trainer_class()(
            model=AutoModelForCausalLM.from_pretrained(model_path),
            args=args,
            train_dataset=ds,
            processing_class=tok,
            callbacks=[timer.callback],
        )
        trainer.train()
    return timer.result(len(enc["input_ids"]))


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
    prompt_ids = tok(prompt)["input_ids"]
    seq = prompt_ids + [tok.eos_token_id] * completion
    mask = [0] * len(prompt_ids) + [1] * completion
    timer = Interleaved(bare_stepper(model_path, [seq] * generations, [mask] * generations), warmup=1)
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
    return timer.result(len(seq) * generations)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="Fewer steps, skip SmolLM2-135M.")
    parser.add_argument("--no-write", action="store_true", help="Do not update docs/benchmarks.md.")
    parser.add_argument("--models", nargs="*", help="Subset of tiny, student-cpu, smollm2.")
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch intra-op threads (0: torch's default). One thread by default: on a shared host a "
        "descheduled worker thread stalls a multi-threaded op, which hits whichever side runs then.",
    )
    args = parser.parse_args()
    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    from shoparena.train.models import resolve_model

    names = args.models or ["tiny", "student-cpu"] + ([] if args.quick else ["smollm2"])
    sft_steps, grpo_steps = (14, 5) if args.quick else (26, 9)
    load_start = os.getloadavg()
    rows = []
    for name in names:
        path = resolve_model(name)
        sft = bench_sft(path, sft_steps)
        fused = bench_sft(path, sft_steps, fused_lm_head=True)
        grpo = bench_grpo(path, grpo_steps)
        rows.append((name, sft, fused, grpo))
        result = {"sft": sft, "sft_fused_lm_head": fused, "grpo": grpo}
        print(name, json.dumps(result, default=lambda v: round(v, 4)), flush=True)
    load_end = os.getloadavg()
    loads = ", ".join(f"{v:.1f}" for v in load_start)
    lines = [
        "## Training throughput (`benchmarks/train_bench.py`)",
        "",
        f"Command: `nice -n 10 python benchmarks/train_bench.py{' --quick' if args.quick else ''}`; "
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC; {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} cores, {torch.get_num_threads()} torch thread(s); "
        f"load average (1, 5, 15 min) {loads} at the start, "
        f"{load_end[0]:.1f} (1 min) at the end. fp32; SFT: one {rows[0][1]['tokens'] if rows else 0}-token "
        "tool conversation per step; GRPO: offline Dr. GRPO, 4 generations × 64 tokens.",
        "",
        "Method: each TRL optimizer step (end of one to the end of the next: data loading, collation, "
        "TRL's metrics and callbacks included) is followed by one bare plain-PyTorch forward+backward+AdamW "
        "step of the same batch on a second copy of the model, so the two sides alternate step by step "
        "under the same host load; warm-up pairs (2 SFT, 1 GRPO) are dropped. The overhead is the median "
        "of the per-pair ratios TRL / bare, with its interquartile range and range, on the process CPU clock "
        "(work done; robust to a loaded host) and on the wall clock; "
        f"{rows[0][1]['pairs'] if rows else 0} SFT pairs per model.",
        "",
        "| model | clock | SFT tok/s (TRL) | bare tok/s | SFT overhead (median) | IQR | range | "
        "GRPO tok/s (TRL) | bare fwd+bwd tok/s | GRPO / bare (median) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, sft, fused, grpo in rows:
        for label, run in ((name, sft), (f"{name}, TRL's fused LM head", fused)):
            for clock in ("cpu", "wall"):
                a, g = run[clock], grpo[clock]
                gcells = (
                    f"{g['trl_tok_s']:.0f} | {g['bare_tok_s']:.0f} | {g['ratio']:.1f}×"
                    if run is sft
                    else "– | – | –"
                )
                lines.append(
                    f"| {label} | {clock} | {a['trl_tok_s']:.0f} | {a['bare_tok_s']:.0f} | "
                    f"{a['ratio']:.2f}× | "
                    f"{a['ratio_q1']:.2f}–{a['ratio_q3']:.2f} | {a['ratio_min']:.2f}–{a['ratio_max']:.2f} | "
                    f"{gcells} |"
                )
    lines += [
        "",
        "Target: SFT overhead ≤ 1.3×. shoparena's SFT trainer uses the model's own cross-entropy "
        "(`sft.fused_lm_head: false`, the CPU presets' default); the `fused LM head` rows are TRL's tiled "
        "head (`fused_lm_head: true`, on in the GPU preset), which recomputes the head in backward. "
        "GRPO includes sampling the completions, which the bare step "
        "does not; its ratio is the generation cost, not trainer overhead.",
    ]
    section = "\n".join(lines)
    print(section)
    if not args.no_write:
        write_section("train_bench", section)


if __name__ == "__main__":
    main()
