"""Prime the tiny Qwen3 with a short SFT on the fixture corpus's steps, so that GRPO tests see real reward
variation: sampled at temperature 1 its steps are sometimes the teacher's call, sometimes a broken one.

A random tiny model never emits a parseable call (ToolRL −3 for every completion, so Dr. GRPO's advantages
are all zero). Priming on the full ~1.2k-token prompts (the tools block) does not converge in a test's
budget with 2 layers × 64, so the primed copy attends through a 128-token sliding window and is trained on
the last ``context`` prompt tokens + the teacher's step: what it sees at generation time is then exactly
what it was trained on (RoPE scores depend on relative positions only).
"""

from __future__ import annotations

from pathlib import Path

WINDOW = 128


def _sequences(tokenizer, corpus: Path, context: int) -> list[tuple[list[int], list[int]]]:
    """Unique (prompt tail, teacher step) token pairs of the corpus's steps view, rendered with the tools."""
    import datasets

    from shoparena.train.config import DataSection
    from shoparena.train.data import clean_messages, parse_tools, step_prompts

    rows = datasets.load_from_disk(str(corpus / "views" / "steps"))["train"]
    prompts = step_prompts(DataSection(corpus=str(corpus), split="train"), rows)
    seqs: list[tuple[list[int], list[int]]] = []
    for row, prompt in zip(rows, prompts, strict=True):
        tools = parse_tools(row["tools"])
        prefix = tokenizer.apply_chat_template(
            clean_messages(prompt), tools=tools, tokenize=False, add_generation_prompt=True
        )
        full = tokenizer.apply_chat_template(
            clean_messages(prompt + row["completion"]), tools=tools, tokenize=False
        )
        assert full.startswith(prefix)
        pair = (
            tokenizer(prefix, add_special_tokens=False)["input_ids"][-context:],
            tokenizer(full[len(prefix) :], add_special_tokens=False)["input_ids"],
        )
        if pair not in seqs:
            seqs.append(pair)
    return seqs


def prime_tiny(
    model_path: str, corpus: Path, out: Path, *, steps: int = 80, lr: float = 1e-2, context: int = 96
) -> Path:
    """SFT (plain PyTorch, full batch, loss on the teacher's step only) into ``out``; returns ``out``."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    from shoparena.train.models import prepare_tokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_path)
    prepare_tokenizer(tokenizer)
    seqs = _sequences(tokenizer, corpus, context)
    width = max(len(p) + len(c) for p, c in seqs)
    ids = torch.full((len(seqs), width), tokenizer.pad_token_id)
    labels = torch.full((len(seqs), width), -100)
    attention = torch.zeros((len(seqs), width), dtype=torch.long)
    for i, (prompt, completion) in enumerate(seqs):
        n = len(prompt) + len(completion)
        ids[i, :n] = torch.tensor(prompt + completion)
        attention[i, :n] = 1
        labels[i, len(prompt) : n] = torch.tensor(completion)

    config = AutoConfig.from_pretrained(model_path)
    config.sliding_window, config.use_sliding_window, config.max_window_layers = WINDOW, True, 0
    config.layer_types = ["sliding_attention"] * config.num_hidden_layers
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_pretrained(model_path, config=config, dtype=torch.float32)
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    for _ in range(steps):
        model(input_ids=ids, attention_mask=attention, labels=labels).loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out
