"""Self-supervised copy pretraining of a from-scratch student (the ``student-word`` base of ``make run``).

Why: a randomly initialised transformer must copy the user's words into ``find_product``'s ``q`` (and handles
into later calls), and copying needs induction heads, which a few hundred SFT steps on a few hundred
trajectories do not form (docs/fidelity.md, pilot table: 29-34 % of query tokens right under teacher forcing
after 1.2 M SFT tokens). Pretraining on text whose reply repeats the user turn makes the copy circuit the
cheapest way to lower the loss, so it forms within minutes (copy accuracy 0.9 after ~500 steps in the pilot).
The texts are unlabelled: the catalogue's titles and the training-side suites' requests; no tool call, no
answer and no held-out request is seen, so the pretrained base still scores ~0 on the benchmark (it has never
seen the tool-call format).

Each training sequence packs several (user turn, identical reply) pairs in the tokenizer's own chat frame, up
to ``seq_len`` tokens, GPT-style (pairs see earlier pairs); the loss is on the replies only, with the LM head
applied at those positions only. This is a plain PyTorch loop on purpose: TRL's packing needs a
flash-attention kernel to keep packed rows apart, and unpacked prompt-completion rows (one pair per row)
did not form the copy circuit in 400 steps (loss 5.1 against 0.7 packed, same tokens; docs/fidelity.md).
"""

from __future__ import annotations

import json
import math
import random
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any


def copy_pairs(
    groups: Sequence[Sequence[str]],
    tokenizer: Any,
    *,
    rows: int,
    seed: int,
    max_chars: int = 600,
    frame: str = "json",
) -> list[dict[str, str]]:
    """``rows`` prompt-completion pairs: a text as a user turn (the tokenizer's chat template with its
    generation prompt) and the same text as the reply, bare (``frame="plain"``) or as the string value of a
    one-key JSON object (``frame="json"``: the copy then starts after ``": "`` as it does inside any tool
    call's arguments). Each row draws a group uniformly, then a text from it, so short catalogue titles and
    long requests are equally represented."""
    if frame not in ("plain", "json"):
        raise ValueError(f"copy pretraining: frame must be plain or json, got {frame!r}")
    pools = [[t.strip()[:max_chars] for t in group if t and t.strip()] for group in groups]
    pools = [p for p in pools if p]
    if not pools:
        raise ValueError("copy pretraining: no texts")
    rng = random.Random(seed)
    out = []
    for _ in range(rows):
        text = rng.choice(rng.choice(pools))
        prompt = tokenizer.apply_chat_template(
            [{"role": "user", "content": text}], tokenize=False, add_generation_prompt=True
        )
        reply = json.dumps({"text": text}, ensure_ascii=False) if frame == "json" else text
        out.append({"prompt": prompt, "completion": reply})
    return out


def item_pairs(requests: Sequence[str], tokenizer: Any, *, rows: int, seed: int) -> list[dict[str, str]]:
    """``rows`` item-listing pairs: a request as the compact profile shows it (``U1 | ...`` lines) as the user
    turn, and as the reply the handles of its listed items in order (``{"items": "U2,U3,U4"}``;
    :func:`shoparena.formats.profiles.listed_lines`). Why: a basket is one search per listed line, and the
    student's commonest basket error was losing count of them (docs/fidelity.md, "Pilots for baskets"); the
    reply is read off the request's own list markers, so it is no answer and no tool call. (Pilot P replied
    with the planning turn's words, ``items: U2,U3,U4``, at e108e2a; not adopted.)"""
    from shoparena.formats.profiles import compact_request, listed_lines

    texts = [t for t in requests if t and t.strip()]
    if not texts:
        raise ValueError("item pretraining: no requests")
    rng = random.Random(seed)
    out = []
    for _ in range(rows):
        text = rng.choice(texts)
        prompt = tokenizer.apply_chat_template(
            [{"role": "user", "content": compact_request(text)}], tokenize=False, add_generation_prompt=True
        )
        out.append({"prompt": prompt, "completion": json.dumps({"items": ",".join(listed_lines(text))})})
    return out


def packed_batch(
    pairs: Sequence[dict[str, str]], tokenizer: Any, *, seq_len: int
) -> tuple[list[int], list[int]]:
    """One packed sequence of ``pairs`` (ids, labels): prompt tokens −100, reply + end-of-turn labelled."""
    end = tokenizer(f"{tokenizer.eos_token}\n", add_special_tokens=False)["input_ids"]
    ids: list[int] = []
    labels: list[int] = []
    for pair in pairs:
        prompt = tokenizer(pair["prompt"], add_special_tokens=False)["input_ids"]
        reply = tokenizer(pair["completion"], add_special_tokens=False)["input_ids"] + end
        ids += prompt + reply
        labels += [-100] * len(prompt) + reply
        if len(ids) >= seq_len:
            break
    return ids[:seq_len], labels[:seq_len]


def copy_pretrain(
    model_dir: str | Path,
    texts: Sequence[Sequence[str]],
    out_dir: str | Path,
    *,
    steps: int = 500,
    batch_size: int = 12,
    seq_len: int = 400,
    learning_rate: float = 3e-3,
    seed: int = 0,
    threads: int | None = None,
    requests: Sequence[str] = (),
    item_share: float = 0.0,
    progress: Callable[[int, float, float], None] | None = None,
) -> dict[str, Any]:
    """Train ``model_dir`` to repeat ``texts`` (groups of strings) for ``steps`` AdamW steps (cosine schedule,
    5 % warm-up) and save it to ``out_dir`` (a temporary sibling renamed at the end). With ``item_share`` > 0,
    that share of the pairs lists the items of ``requests`` instead (:func:`item_pairs`).

    Returns:
        ``steps``, ``tokens``, the last ``loss`` and ``copy_accuracy`` (greedy next-token accuracy on the
        replies of the last batch).
    """
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from shoparena.train.methods import sparse_head_loss

    if threads:
        torch.set_num_threads(threads)
    torch.manual_seed(seed)
    out = Path(out_dir)
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir)
    model.train()
    rows = max(2000, steps * batch_size)
    items = round(rows * item_share) if requests else 0
    pool = copy_pairs(texts, tokenizer, rows=rows - items, seed=seed)
    if items:
        pool += item_pairs(requests, tokenizer, rows=items, seed=seed + 1)
    rng = random.Random(seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate, weight_decay=0.01)
    warmup = max(1, steps // 20)

    def factor(step: int) -> float:
        return min(1.0, (step + 1) / warmup) * 0.5 * (1 + math.cos(math.pi * min(step, steps) / steps))

    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, factor)
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    tokens, loss_value, accuracy = 0, float("nan"), 0.0
    for step in range(steps):
        rows = [packed_batch(rng.sample(pool, 8), tokenizer, seq_len=seq_len) for _ in range(batch_size)]
        width = max(len(ids) for ids, _ in rows)
        input_ids = torch.tensor([ids + [pad] * (width - len(ids)) for ids, _ in rows])
        labels = torch.tensor([lab + [-100] * (width - len(lab)) for _, lab in rows])
        mask = torch.tensor([[1] * len(ids) + [0] * (width - len(ids)) for ids, _ in rows])
        loss = sparse_head_loss(model, {"input_ids": input_ids, "labels": labels, "attention_mask": mask})
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        optimizer.zero_grad()
        tokens += int(mask.sum())
        loss_value = loss.item()
        if progress is not None and (step % 25 == 0 or step == steps - 1):
            accuracy = _copy_accuracy(model, input_ids, labels, mask)
            progress(step + 1, loss_value, accuracy)
    accuracy = _copy_accuracy(model, input_ids, labels, mask)
    model.save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)
    return {"steps": steps, "tokens": tokens, "loss": loss_value, "copy_accuracy": accuracy}


def _copy_accuracy(model: Any, input_ids: Any, labels: Any, mask: Any) -> float:
    import torch

    with torch.no_grad():
        hidden = model.get_decoder()(input_ids=input_ids, attention_mask=mask).last_hidden_state[:, :-1]
        targets = labels[:, 1:]
        picked = targets != -100
        predicted = model.get_output_embeddings()(hidden[picked]).argmax(-1)
        return float((predicted == targets[picked]).float().mean())


__all__ = ["copy_pairs", "copy_pretrain", "item_pairs", "packed_batch"]
