"""Generation speed of a local model folder, as reported in ``docs/models.md``."""

from __future__ import annotations

import time
from pathlib import Path

from pydantic import BaseModel, ConfigDict

_BENCH_MESSAGES = [
    {"role": "system", "content": "You are a shopping assistant."},
    {"role": "user", "content": "I need red running shoes under 300 yuan, size 42, with free shipping."},
]


class GenerationSpeed(BaseModel):
    """One timed greedy generation.

    Attributes:
        model_dir: The folder measured.
        dtype: Weight dtype used.
        threads: torch CPU threads.
        prompt_tokens: Tokens in the rendered prompt.
        new_tokens: Tokens generated (forced: EOS is ignored).
        load_s: Seconds to load tokenizer and model.
        generate_s: Seconds for the timed generation (prefill included).
        tokens_per_s: ``new_tokens / generate_s``.
    """

    model_config = ConfigDict(extra="forbid")

    model_dir: str
    dtype: str
    threads: int
    prompt_tokens: int
    new_tokens: int
    load_s: float
    generate_s: float
    tokens_per_s: float


def measure_generation(
    model_dir: str | Path,
    *,
    new_tokens: int = 64,
    dtype: str = "float32",
    repeats: int = 2,
    threads: int | None = None,
) -> GenerationSpeed:
    """Time greedy generation of exactly ``new_tokens`` tokens on CPU (best of ``repeats``, after a warm-up).

    Args:
        model_dir: A folder loadable by ``AutoModelForCausalLM`` with a chat template.
        new_tokens: Tokens to generate per run.
        dtype: ``float32`` or ``bfloat16``.
        repeats: Timed runs; the fastest is reported (the host is shared, so the minimum is the least noisy).
        threads: torch CPU threads (None keeps torch's default, one per core). On a busy host one thread is
            often faster: OpenMP workers spin while waiting for a core.

    Returns:
        The measurement.
    """
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if threads:
        torch.set_num_threads(threads)
    started = time.perf_counter()
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=getattr(torch, dtype))
    model.eval()
    load_s = time.perf_counter() - started
    prompt = tokenizer.apply_chat_template(_BENCH_MESSAGES, tokenize=False, add_generation_prompt=True)
    inputs = tokenizer(prompt, return_tensors="pt", add_special_tokens=False)
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    kwargs = {"do_sample": False, "pad_token_id": pad, "min_new_tokens": new_tokens}
    with torch.inference_mode():
        model.generate(**inputs, max_new_tokens=2, **{**kwargs, "min_new_tokens": 2})
        best = float("inf")
        for _ in range(max(1, repeats)):
            t0 = time.perf_counter()
            out = model.generate(**inputs, max_new_tokens=new_tokens, **kwargs)
            best = min(best, time.perf_counter() - t0)
    produced = int(out.shape[-1] - inputs["input_ids"].shape[-1])
    return GenerationSpeed(
        model_dir=str(model_dir),
        dtype=dtype,
        threads=torch.get_num_threads(),
        prompt_tokens=int(inputs["input_ids"].shape[-1]),
        new_tokens=produced,
        load_s=round(load_s, 2),
        generate_s=round(best, 6),  # ms rounding skews the rate of a tiny model
        tokens_per_s=round(produced / best, 1),
    )
