"""Corpus-level gates on records the filter kept: exact / near duplicates, then trainable tokens.

Both run online in ingest order (the first of a group of duplicates stays), so memory holds only one small
MinHash signature per unique kept trajectory. Duplicates are judged per (problem, origin) on the assistant
side of the conversation, normalised with the problem bank's normaliser and shingled like its queries
(:mod:`shoparena.suites.clusters`); near-duplicates by the MinHash estimate of their shingle Jaccard.
The token gate counts trainable tokens that survive truncation to ``max_tokens``.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Sequence
from functools import cache
from typing import Any

from datasketch import MinHash

from shoparena.corpus.config import GateConfig
from shoparena.corpus.minhash import ShingleSigner
from shoparena.records.corpus import CorpusMessage, CorpusRecord, Outcome
from shoparena.suites.clusters import normalize_query, shingles

NUM_PERM = 64
#: A byte-level BPE token never covers more than this many characters in practice; prefixes of this many
#: characters per remaining token decide "this message fills the window" without tokenising all of it.
CHARS_PER_TOKEN_BOUND = 16


def gate_outcome(record: CorpusRecord, gates: GateConfig) -> Outcome | None:
    """The judge and success gates on one record: their first failing reason, or None (both pass). The
    filter runs them after its structural reasons (:func:`shoparena.corpus.filter.first_failure`); a
    recovered copy runs only them (:func:`shoparena.corpus.recover.recover_record`)."""
    if gates.judge_bar is not None:
        if record.labels.judge_q is None:
            return Outcome.JUDGE_MISSING
        if record.labels.judge_q < gates.judge_bar:
            return Outcome.JUDGE_BELOW_BAR
    if gates.success_profile != "off":
        success = (
            record.labels.success
            if gates.success_profile == "strict"
            else record.labels.success_shoppingbench
        )
        if success is None:
            return Outcome.SUCCESS_UNSCORED
        if not success:
            return Outcome.NOT_SUCCESSFUL
    return None


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


@cache
def default_tokenizer() -> Any:
    """The tiny Qwen3 tokenizer as a transformers tokenizer (chat template included; trained once per
    machine, :func:`shoparena.models.tiny.tiny_tokenizer_json`)."""
    from tokenizers import Tokenizer

    from shoparena.models.tiny import tiny_tokenizer_json, wrap_tiny_tokenizer

    return wrap_tiny_tokenizer(Tokenizer.from_str(tiny_tokenizer_json()))


@cache
def default_chat_tokenizer() -> Any:
    """The tiny tokenizer's backend with its chat template (``models.tiny.tiny_chat_tokenizer``): the same
    rendered text and token ids as :func:`default_tokenizer` for ``sft_row_lengths``, without
    importing transformers."""
    from shoparena.models.tiny import tiny_chat_tokenizer

    return tiny_chat_tokenizer(default_gate_tokenizer())


@cache
def default_gate_tokenizer() -> Any:
    """The same tiny tokenizer as its ``tokenizers`` backend: all the token gate needs, without importing
    transformers (seconds of a build that keeps nothing for ``sft_row_lengths``)."""
    from tokenizers import Tokenizer

    from shoparena.models.tiny import tiny_tokenizer_json

    return Tokenizer.from_str(tiny_tokenizer_json())


@cache
def _signer() -> ShingleSigner:
    return ShingleSigner(NUM_PERM, seed=1)


def message_text(message: CorpusMessage) -> str:
    calls = json.dumps(message.tool_calls, ensure_ascii=False) if message.tool_calls else ""
    return f"<|im_start|>{message.role}\n{message.content or ''}{calls}<|im_end|>\n"


def _count(tokenizer: Any, text: str) -> int:
    """Tokens of ``text`` without special tokens: through the backend of a transformers fast tokenizer, a
    ``tokenizers.Tokenizer`` itself, or any callable tokenizer."""
    backend = getattr(tokenizer, "_tokenizer", None)
    if backend is None and type(tokenizer).__module__.startswith("tokenizers"):
        backend = tokenizer
    if backend is not None:
        return len(backend.encode(text, add_special_tokens=False).ids)
    return len(tokenizer(text, add_special_tokens=False)["input_ids"])


class TokenCounter:
    """Token counts of texts, each distinct text tokenised once.

    A firehose repeats most message texts: every record opens with the same system prompt, the miners of a
    race share each problem's user turn, and teachers that search alike get the same tool results. Counts
    are keyed by a 128-bit BLAKE2b digest of the text (not the text: tool results run to kilobytes), at
    most ``size`` of them (then the cache starts over); a count never depends on the cache.
    """

    def __init__(self, tokenizer: Any, size: int = 200_000) -> None:
        self.tokenizer = tokenizer
        self.size = size
        self._counts: dict[bytes, int] = {}

    def __call__(self, text: str) -> int:
        key = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
        count = self._counts.get(key)
        if count is None:
            if len(self._counts) >= self.size:
                self._counts.clear()
            count = self._counts[key] = _count(self.tokenizer, text)
        return count


def trainable_tokens(record: CorpusRecord, tokenizer: Any, max_tokens: int) -> int:
    """Trainable-message tokens inside the first ``max_tokens`` of the conversation (exact).

    ``tokenizer``: a tokenizer, or a :class:`TokenCounter` over one (the same counts, repeated texts once).
    """
    count = tokenizer if isinstance(tokenizer, TokenCounter) else TokenCounter(tokenizer, size=1_000)
    used = total = 0
    for message in record.messages:
        room = max_tokens - used
        if room <= 0:
            break
        text = message_text(message)
        prefix = text[: room * CHARS_PER_TOKEN_BOUND]
        length = count(prefix)
        if length < room and len(prefix) < len(text):
            length = count(text)
        if message.trainable:
            total += min(room, length)
        used += length
    return total


class OnlineGates:
    """Dedup then token gate, one record at a time in a fixed order (ingest order)."""

    def __init__(self, cfg: GateConfig, tokenizer: Any) -> None:
        """``tokenizer``: a tokenizer, or a zero-argument callable that loads one (called once, on the
        first record that reaches the token gate, so a build that keeps nothing never trains one)."""
        self.cfg = cfg
        self._tokenizer = tokenizer
        self.exact: dict[tuple[str, str], set[str]] = defaultdict(set)
        self.signatures: dict[tuple[str, str], list[MinHash]] = defaultdict(list)
        self._counter: TokenCounter | None = None

    @property
    def tokenizer(self) -> Any:
        if callable(self._tokenizer) and not hasattr(self._tokenizer, "encode"):
            self._tokenizer = self._tokenizer()
        return self._tokenizer

    @property
    def counter(self) -> TokenCounter:
        if self._counter is None:
            self._counter = TokenCounter(self.tokenizer)
        return self._counter

    def apply(self, record: CorpusRecord) -> CorpusRecord:
        if record.outcome != "kept":
            return record
        key = (record.problem_id, record.origin)
        text = assistant_text(record.messages)
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        if digest in self.exact[key]:
            record.outcome = Outcome.DUPLICATE
            return record
        signature = _signer()(shingles(text))
        if any(signature.jaccard(other) >= self.cfg.near_dup_threshold for other in self.signatures[key]):
            record.outcome = Outcome.NEAR_DUPLICATE
            return record
        self.exact[key].add(digest)
        self.signatures[key].append(signature)
        record.trainable_tokens = trainable_tokens(record, self.counter, self.cfg.max_tokens)
        if record.trainable_tokens < self.cfg.min_trainable_tokens:
            record.outcome = Outcome.TOO_FEW_TOKENS
        return record


__all__ = [
    "OnlineGates",
    "TokenCounter",
    "assistant_text",
    "default_chat_tokenizer",
    "default_gate_tokenizer",
    "default_tokenizer",
    "trainable_tokens",
]
