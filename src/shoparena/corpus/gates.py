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
import re
from collections import defaultdict
from collections.abc import Callable, Sequence
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


def _backend(tokenizer: Any) -> Any:
    """The ``tokenizers.Tokenizer`` behind ``tokenizer`` (a transformers fast tokenizer's, or itself); None
    for any other callable tokenizer."""
    backend = getattr(tokenizer, "_tokenizer", None)
    if backend is None and type(tokenizer).__module__.startswith("tokenizers"):
        backend = tokenizer
    return backend


def _count(tokenizer: Any, text: str) -> int:
    """Tokens of ``text`` without special tokens: through the backend of a transformers fast tokenizer, a
    ``tokenizers.Tokenizer`` itself, or any callable tokenizer."""
    backend = _backend(tokenizer)
    if backend is not None:
        return len(backend.encode(text, add_special_tokens=False).ids)
    return len(tokenizer(text, add_special_tokens=False)["input_ids"])


#: A newline after a printable ASCII character that is not a space: always a boundary of the byte-level
#: pre-tokenizer's words (GPT-2's pattern: no word holds both a non-space character and a newline, and the
#: pattern looks only ahead), so the text after it is split into the same words as on its own.
_WORD_BOUNDARY = re.compile(r"(?<=[!-~])(?=\n)")


def _first_boundary(piece: str) -> int:
    """Where :data:`_WORD_BOUNDARY` first matches in ``piece`` (-1: nowhere), newline to newline with
    ``str.find``: the regex tries its look-behind at every position of a long piece."""
    i = piece.find("\n", 1)
    while i > 0 and not "!" <= piece[i - 1] <= "~":
        i = piece.find("\n", i + 1)
    return i


def _ends_cut(piece: str) -> list[str]:
    """``piece`` cut at its first and its last word-boundary newline: a turn's role line (``"tool"`` of
    ``"tool\\n{result}"``) and a closing newline come off, so the same text counts once in the gate's message
    texts and in the rendered rows. Fewer cuts than every boundary: each piece is one more encode call."""
    i = _first_boundary(piece)
    if i < 0:
        return [piece]
    j = piece.rfind("\n")
    if j > i and "!" <= piece[j - 1] <= "~":
        return [piece[:i], piece[i:j], piece[j:]]
    return [piece[:i], piece[i:]]


def _piece_splitter(tokenizer: Any) -> Callable[[str], list[str | None]] | None:
    """For a byte-level BPE without normaliser whose added tokens match plainly: a function cutting a text
    into pieces whose token counts add up to the text's (None stands for one added token); None for any
    other tokenizer (counted a whole text at a time).

    The backend cuts a text at its added tokens and tokenises the pieces between them independently, then
    the BPE works word by word, so cutting at word boundaries (:data:`_WORD_BOUNDARY`) changes no count. A
    firehose repeats most pieces: the lines of the system prompt and tool list, the user turns, and tool
    results, which the token gate and the published rows' lengths (``card.sft_row_lengths``) both count.
    """
    backend = _backend(tokenizer)
    pre = getattr(backend, "pre_tokenizer", None)
    if backend is None or backend.normalizer is not None or type(pre).__name__ != "ByteLevel":
        return None
    if pre.add_prefix_space or not pre.use_regex:
        return None
    added = list(backend.get_added_tokens_decoder().values())
    if any(t.lstrip or t.rstrip or t.single_word or t.normalized for t in added):
        return None
    contents = sorted((t.content for t in added), key=len, reverse=True)  # the longest at one position wins
    tokens = re.compile("|".join(re.escape(c) for c in contents)) if contents else None

    def split(text: str) -> list[str | None]:
        pieces: list[str | None] = []
        start = 0
        for match in tokens.finditer(text) if tokens is not None else ():
            if match.start() > start:
                pieces += _ends_cut(text[start : match.start()])
            pieces.append(None)
            start = match.end()
        if start < len(text):
            pieces += _ends_cut(text[start:])
        return pieces

    return split


#: GPT-2's pre-tokenizer pattern,
#: ``'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+``,
#: for ASCII text, where ``\p{L}`` is ``[A-Za-z]``, ``\p{N}`` is ``[0-9]`` and ``\s`` (Unicode White_Space)
#: is ``[\t\n\v\f\r ]``: the stdlib ``re`` splits such text into the byte-level pre-tokenizer's words several
#: times faster than the backend tokenises it.
_ASCII_SPACE = "\t\n\v\f\r "
_ASCII_WORDS = re.compile(
    rf"'s|'t|'re|'ve|'m|'ll|'d| ?[A-Za-z]+| ?[0-9]+| ?[^{_ASCII_SPACE}A-Za-z0-9]+"
    rf"|[{_ASCII_SPACE}]+(?![^{_ASCII_SPACE}])|[{_ASCII_SPACE}]+"
)
#: A space after a character that is not whitespace: always a word boundary of that pattern (no word ends in
#: a space unless it is all whitespace, and the pattern looks only ahead). Python's ``\s`` holds every
#: Unicode White_Space character (and a few more), so its ``[^\s]`` is never whitespace to the backend.
_SPACE_AFTER_WORD = re.compile(r"(?<=[^\s])(?= )")


#: A space after ASCII whitespace: the one place an ASCII text's space is not a word boundary.
_SPACE_AFTER_SPACE = tuple(f"{c} " for c in _ASCII_SPACE)
#: The same for any text (Python's ``\s`` holds every Unicode White_Space character, and a few more).
_WHITESPACE_THEN_SPACE = re.compile(r"\s ")


def space_parts(text: str) -> list[str] | None:
    """``text.split(" ")`` when every space of ``text`` is a word boundary (it follows a character that is
    not whitespace, or starts the text), else None: the text is its first part, then a space before each
    other part, and each of those chunks splits into the same words on its own."""
    if text.isascii():
        if any(pair in text for pair in _SPACE_AFTER_SPACE):
            return None
    elif _WHITESPACE_THEN_SPACE.search(text):
        return None
    return text.split(" ")


class _SpacedParts(dict[str, int]):
    """Token counts of ``" " + part`` for the parts of :func:`space_parts`, each counted once."""

    def __init__(self, words: _WordCounts) -> None:
        super().__init__()
        self.words = words

    def __missing__(self, part: str) -> int:
        if len(self) >= self.words.size:
            self.clear()
        count = self[part] = self.words.chunk(" " + part)
        return count


class _WordCounts(dict[str, int]):
    """Token counts of words (or of chunks between word boundaries), each tokenised once by ``backend``:
    a byte-level BPE tokenises every pre-tokenizer word on its own, so a text's count is its words' sum."""

    def __init__(self, backend: Any, size: int) -> None:
        super().__init__()
        self.backend = backend
        self.size = size
        self.parts = _SpacedParts(self)

    def __missing__(self, word: str) -> int:
        if len(self) >= self.size:
            self.clear()
        count = self[word] = len(self.backend.encode(word, add_special_tokens=False).ids)
        return count

    def chunk(self, text: str) -> int:
        """Tokens of a chunk between word boundaries: ASCII word by word (:data:`_ASCII_WORDS`), other text
        tokenised whole, once."""
        if text.isascii():
            return sum(map(self.__getitem__, _ASCII_WORDS.findall(text)))
        return self[text]

    def text(self, text: str) -> int:
        """Tokens of ``text`` (no added tokens in it): cut at its spaces where all are word boundaries
        (:func:`space_parts`; a firehose's JSON repeats most space-led parts), else at the spaces that
        follow a word (:data:`_SPACE_AFTER_WORD`)."""
        parts = space_parts(text)
        if parts is None:
            return sum(map(self.chunk, _SPACE_AFTER_WORD.split(text)))
        return self.chunk(parts[0]) + sum(map(self.parts.__getitem__, parts[1:]))


#: Texts up to this many characters key the count cache themselves (most pieces: a word, a line of JSON);
#: longer ones by their digest. A digest and a text never compare equal (bytes, str).
_DIGEST_FROM = 64


def _digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


class TokenCounter:
    """Token counts of texts, each distinct text (or piece of one) tokenised once.

    A firehose repeats most message texts: every record opens with the same system prompt, the miners of a
    race share each problem's user turn, and teachers that search alike get the same tool results. Counts
    are keyed by a 128-bit BLAKE2b digest of the text (not the text: tool results run to kilobytes; a short
    piece, up to :data:`_DIGEST_FROM` characters, by itself, which costs no hashing), at most ``size`` of
    them (then the cache starts over); a count never depends on the cache. A byte-level
    BPE (the tiny tokenizer) counts by pieces that add up (:func:`_piece_splitter`), so texts that share
    lines share their counts.
    """

    def __init__(self, tokenizer: Any, size: int = 200_000) -> None:
        self.tokenizer = tokenizer
        self.size = size
        self._counts: dict[bytes | str, int] = {}
        self._split = _piece_splitter(tokenizer)
        # Pieces of a text split into words the same way as the backend does (see _piece_splitter).
        self._words = _WordCounts(_backend(tokenizer), size) if self._split is not None else None

    def _cached(self, text: str, split: Callable[[str], list[str | None]] | None = None) -> int:
        key = text if len(text) <= _DIGEST_FROM else _digest(text)
        count = self._counts.get(key)
        if count is None:
            if split is None:
                count = _count(self.tokenizer, text) if self._words is None else self._words.text(text)
            else:  # a text seen before is one lookup; a new one costs only its new pieces
                count = sum(1 if piece is None else self._cached(piece) for piece in split(text))
            if len(self._counts) >= self.size:
                self._counts.clear()
            self._counts[key] = count
        return count

    def __call__(self, text: str) -> int:
        return self._cached(text, self._split)


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
