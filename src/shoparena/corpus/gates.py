"""Corpus-level gates on the records the filter kept: exact / near duplicates and trainable tokens.

Duplicates are judged per problem on the assistant side of the conversation, normalised with the problem
bank's normaliser and compared with its shingle Jaccard (:mod:`shoparena.suites.clusters`); the first record
in ``record_id`` order stays. The token gate counts trainable tokens that survive truncation to
``max_tokens`` (messages tokenised one by one, in order).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from functools import cache
from typing import Any

from shoparena.corpus.config import GateConfig
from shoparena.records.corpus import CorpusMessage, CorpusRecord
from shoparena.suites.clusters import jaccard, normalize_query, shingles


def assistant_text(messages: Sequence[CorpusMessage]) -> str:
    """The assistant side of a conversation as one normalised string (content + calls)."""
    parts: list[str] = []
    for message in messages:
        if message.role != "assistant":
            continue
        parts.append(message.content or "")
        for call in message.tool_calls or []:
            parts.append(f"{call['function']['name']} {call['function']['arguments']}")
    return normalize_query(" ".join(parts))


def dedup(records: Sequence[CorpusRecord], threshold: float) -> None:
    """Mark later exact / near duplicates (same problem, same origin) among kept records, in place."""
    groups: dict[tuple[str, str], list[CorpusRecord]] = defaultdict(list)
    for record in sorted(records, key=lambda r: r.record_id):
        if record.outcome == "kept":
            groups[(record.problem_id, record.origin)].append(record)
    for members in groups.values():
        seen_exact: set[str] = set()
        seen: list[frozenset[str]] = []
        for record in members:
            text = assistant_text(record.messages)
            if text in seen_exact:
                record.outcome = "duplicate"
                continue
            grams = shingles(text)
            if any(jaccard(grams, other) >= threshold for other in seen):
                record.outcome = "near_duplicate"
                continue
            seen_exact.add(text)
            seen.append(grams)


@cache
def default_tokenizer() -> Any:
    """The tiny Qwen3 tokenizer (built locally, seconds)."""
    from shoparena.models.tiny import train_tiny_tokenizer

    return train_tiny_tokenizer()


def message_text(message: CorpusMessage) -> str:
    calls = json.dumps(message.tool_calls, ensure_ascii=False) if message.tool_calls else ""
    return f"<|im_start|>{message.role}\n{message.content or ''}{calls}<|im_end|>\n"


def trainable_tokens(records: Sequence[CorpusRecord], tokenizer: Any, max_tokens: int) -> None:
    """Set ``trainable_tokens`` on each record: trainable-message tokens inside the first ``max_tokens``."""
    backend = getattr(tokenizer, "_tokenizer", None)
    for record in records:
        texts = [message_text(m) for m in record.messages]
        if not texts:
            record.trainable_tokens = 0
            continue
        if backend is not None:
            lengths = [len(e.ids) for e in backend.encode_batch(texts, add_special_tokens=False)]
        else:
            lengths = [len(ids) for ids in tokenizer(texts, add_special_tokens=False)["input_ids"]]
        used = total = 0
        for message, length in zip(record.messages, lengths, strict=True):
            room = max(0, max_tokens - used)
            if message.trainable:
                total += min(room, length)
            used += length
        record.trainable_tokens = total


def apply_gates(records: Sequence[CorpusRecord], cfg: GateConfig, tokenizer: Any) -> None:
    """Dedup, then the token gate, on records still kept (in place)."""
    dedup(records, cfg.near_dup_threshold)
    trainable_tokens(records, tokenizer, cfg.max_tokens)
    for record in records:
        if record.outcome == "kept" and (record.trainable_tokens or 0) < cfg.min_trainable_tokens:
            record.outcome = "too_few_tokens"


__all__ = ["apply_gates", "assistant_text", "dedup", "default_tokenizer", "trainable_tokens"]
