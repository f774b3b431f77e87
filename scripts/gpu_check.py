"""Device check for the ``qwen3-4b`` preset (run by scripts/gpu_check.sh on one H100/H200, ≤ 8 minutes).

Trains a few SFT steps and a few offline Dr. GRPO steps with the preset unchanged except for the step counts,
on a slice of a corpus, and prints tokens/s and peak GPU memory. Model: ``$QWEN3_4B`` (a local Qwen3-4B
folder)
or, without it, a random-init model of Qwen3-4B's exact shape with the tiny 4k tokenizer (same compute and
memory per token, no download). Corpus: ``$CORPUS`` or the test fixture corpus over the hand catalog.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def qwen3_4b_shaped(out: Path) -> str:
    import torch
    from transformers import Qwen3Config, Qwen3ForCausalLM

    from shoparena.models.tiny import train_tiny_tokenizer

    tok = train_tiny_tokenizer()
    config = Qwen3Config(
        vocab_size=151936,
        hidden_size=2560,
        intermediate_size=9728,
        num_hidden_layers=36,
        num_attention_heads=32,
        num_key_value_heads=8,
        head_dim=128,
        max_position_embeddings=40960,
        tie_word_embeddings=True,
        rope_theta=1_000_000,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id,
    )
    with torch.device("cuda"):
        model = Qwen3ForCausalLM(config).to(torch.bfloat16)
    model.save_pretrained(out)
    tok.save_pretrained(out)
    del model
    torch.cuda.empty_cache()
    return str(out)


def fixture_corpus(root: Path) -> str:
    sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "train")]
    from corpus_fixture import write_fixture_corpus

    from conftest import HAND, _build  # tests/conftest.py: the hand catalog
    from shoparena.records.problem import Intent, Problem, RewardItem

    hand = _build(root / "hand", HAND)
    problems = [
        Problem(
            problem_id=f"p{i}",
            query=f"nike running shoes {i}",
            intent=Intent.PRODUCT,
            category="Product",
            reward=[RewardItem(product_id="101", title=["Nike Running Shoes"])],
        )
        for i in range(8)
    ]
    return str(write_fixture_corpus(root / "corpus", hand.index, problems))


def main() -> None:
    import torch

    from shoparena.train.config import load_config
    from shoparena.train.runner import train

    assert torch.cuda.is_available(), "gpu_check needs a CUDA device"
    work = Path(tempfile.mkdtemp(prefix="gpu_check-"))
    t0 = time.time()
    model = os.environ.get("QWEN3_4B") or qwen3_4b_shaped(work / "qwen3-4b-shaped")
    corpus = os.environ.get("CORPUS") or fixture_corpus(work)
    print(f"model {model}\ncorpus {corpus}\nsetup {time.time() - t0:.0f} s", flush=True)
    common = [f"model={model}", f"data.corpus={corpus}", "data.max_rows=64"]
    results = {}
    for method, sets in (
        ("sft", ["sft.max_steps=6", "sft.num_train_epochs=1", "sft.save_steps=1000", "sft.logging_steps=1"]),
        (
            "grpo",
            [
                "grpo.max_steps=3",
                "grpo.num_train_epochs=1",
                "grpo.save_steps=1000",
                "grpo.logging_steps=1",
                "grpo.max_completion_length=256",
                "grpo.gradient_accumulation_steps=1",
            ],
        ),
    ):
        torch.cuda.reset_peak_memory_stats()
        started = time.time()
        summary = train(
            load_config("qwen3-4b", method, common + sets), work / f"run-{method}", progress=False
        )
        results[method] = {
            "steps": summary["global_step"],
            "seconds": round(time.time() - started, 1),
            "tokens_per_s": summary["tokens_per_s"],
            "peak_memory_gb": summary["peak_memory_gb"],
        }
        print(method, json.dumps(results[method]), flush=True)
    print(json.dumps({"device": torch.cuda.get_device_name(0), **results}, indent=2))


if __name__ == "__main__":
    main()
