"""The token gate counts each distinct message text once, with the counts of tokenising every message."""

from __future__ import annotations

import random

from shoparena.corpus.gates import TokenCounter, default_gate_tokenizer, default_tokenizer, trainable_tokens
from shoparena.records.corpus import CorpusMessage, CorpusRecord


class CountingTokenizer:
    """The tiny tokenizer, counting the texts it is asked to encode."""

    def __init__(self) -> None:
        self.inner = default_tokenizer()
        self.calls = 0

    def __call__(self, text: str, add_special_tokens: bool = False) -> dict:
        self.calls += 1
        return self.inner(text, add_special_tokens=add_special_tokens)


def _record(rng: random.Random, i: int) -> CorpusRecord:
    words = ["find_product", "wireless", "earbuds", "ñandú", "😀", "shop", "price", "{", "}", "\u2028"]
    messages = [
        CorpusMessage(role="system", content="You are a shopping agent. " * 20),
        CorpusMessage(role="user", content=f"buy item {i % 5}"),
    ]
    for _ in range(rng.randint(1, 6)):
        text = " ".join(rng.choice(words) for _ in range(rng.randint(0, 150)))
        messages.append(CorpusMessage(role="assistant", content=text, trainable=rng.random() < 0.7))
        messages.append(CorpusMessage(role="tool", content=f"result {rng.randint(0, 3)}", tool_call_id="c1"))
    return CorpusRecord.model_construct(messages=messages)  # the gate reads only the messages


def test_cached_counts_equal_counting_every_message_and_tokenise_repeats_once():
    rng = random.Random(5)
    records = [_record(rng, i) for i in range(16)]
    direct = CountingTokenizer()
    expected = [trainable_tokens(r, direct, max_tokens) for r in records for max_tokens in (64, 700, 8192)]
    cached_tokenizer = CountingTokenizer()
    counter = TokenCounter(cached_tokenizer)
    got = [trainable_tokens(r, counter, max_tokens) for r in records for max_tokens in (64, 700, 8192)]
    assert got == expected and any(0 < n < 8192 for n in got)
    assert cached_tokenizer.calls < direct.calls / 2  # the system and user turns and tool results repeat
    # A full cache starts over and still counts right.
    tiny = TokenCounter(CountingTokenizer(), size=3)
    assert [trainable_tokens(r, tiny, 700) for r in records] == expected[1::3]
    assert len(tiny._counts) <= 3


def test_gate_counts_through_the_backend_equal_the_transformers_tokenizer():
    messages = [CorpusMessage(role="system", content="You are a shopping agent.")]
    messages += [
        CorpusMessage(role="assistant", content=t, trainable=True)
        for t in ("ñandú 😀 \u2028 earbuds", "", "<tool_call>x</tool_call>")
    ]
    record = CorpusRecord.model_construct(messages=messages)
    limits = (8, 20, 30, 40, 8192)
    backend = [trainable_tokens(record, default_gate_tokenizer(), n) for n in limits]
    assert backend == [trainable_tokens(record, default_tokenizer(), n) for n in limits]
    assert backend[-1] > 0 and len(set(backend)) > 2  # the window cuts inside the conversation


TRICKY = [
    "",
    "\n",
    "a\n",
    "\n\n  \n",
    "x \nfoo\n bar\n\tbaz",  # a newline after a space is not cut: it joins the whitespace run
    "it'\nll be\n's",
    "ñandú\n😀\n\u2028\nend\r\n",
    '[{"product_id": "111", "title": "Röd sko"}]\n{"q": 1}\n',
    "<|im_start|>user\nhi there<|im_end|>\n<|im_start|>assistant\n<think>\nhm\n</think>\n\n"
    "<tool_call>\n{}\n</tool_call>",
    "<|im_end|><|im_start|>\n<tool_call<tool_call>>\n",
    "system\n" + "You are a shopping agent.\n" * 40,
]


def test_counting_by_pieces_equals_counting_whole_texts():
    from shoparena.corpus.gates import _count, _piece_splitter

    backend = default_gate_tokenizer()
    assert _piece_splitter(backend) is not None  # the tiny byte-level BPE counts by pieces
    counter = TokenCounter(backend)
    rng = random.Random(3)
    texts = TRICKY + ["\n".join(rng.sample(TRICKY, 4)) + rng.choice(["", " ", "\n", "x"]) for _ in range(200)]
    for _ in range(2):  # the second round: whole texts and pieces served from the cache
        assert [counter(t) for t in texts] == [_count(backend, t) for t in texts]
    pieces = TokenCounter(backend, size=5)  # the cache starting over mid-text changes no count
    assert [pieces(t) for t in texts] == [_count(backend, t) for t in texts]


def test_a_tokenizer_whose_pieces_may_not_add_up_is_counted_whole():
    from tokenizers import Tokenizer, normalizers, pre_tokenizers

    from shoparena.corpus.gates import _piece_splitter

    def tiny() -> Tokenizer:
        return Tokenizer.from_str(default_gate_tokenizer().to_str())

    assert _piece_splitter(tiny()) is not None
    assert _piece_splitter(CountingTokenizer()) is None  # any callable tokenizer
    lowercase = tiny()
    lowercase.normalizer = normalizers.Lowercase()
    spaced = tiny()
    spaced.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
    whitespace = tiny()
    whitespace.pre_tokenizer = pre_tokenizers.Whitespace()
    for tokenizer in (lowercase, spaced, whitespace):
        assert _piece_splitter(tokenizer) is None
        assert TokenCounter(tokenizer)("Hello\nWorld") == len(
            tokenizer.encode("Hello\nWorld", add_special_tokens=False).ids
        )


def test_word_counts_equal_the_backends_on_every_ascii_character_and_unicode_text():
    """The ASCII word pattern and the space boundary split text as the backend's pre-tokenizer does: every
    ASCII character (controls included), runs of whitespace, contractions, and non-ASCII words beside them."""
    from shoparena.corpus.gates import _count, _WordCounts

    backend = default_gate_tokenizer()
    rng = random.Random(11)
    ascii_chars = [chr(i) for i in range(128)]
    others = ["é", "ñandú", "😀", "\u2028", "\u00a0", "\u3000", "\x85", "٣", "Ⅷ", "ß", "中文", "\u200b"]
    alphabet = [*ascii_chars, " ", " ", "  ", "\n", "'s", "'ll", "'t", "ab", "12", *others]
    texts = [c * k for c in ascii_chars for k in (1, 3)]
    # Whitespace runs beside non-ASCII words: only a space right after a word is a boundary.
    runs = [" ", "  ", " \n", "  \t ", "\n  ", " \u3000 ", "\u00a0 ", " \x85"]
    texts += [f"{a}{r}{b}" for a in ("é", "x", "") for r in runs for b in ("é", "x", "", " ", "'s")]
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 60))) for _ in range(3000)]
    texts += ["".join(rng.choice([*ascii_chars, " ", "'s", "ab"]) for _ in range(80)) for _ in range(1000)]
    words = _WordCounts(backend, size=50)  # a small cache: starting over changes no count
    assert sum(not t.isascii() for t in texts) > 500
    assert [words.text(t) for t in texts] == [_count(backend, t) for t in texts]


def test_ascii_words_and_space_boundaries_are_the_pre_tokenizers_own():
    """Beyond counts (a small vocabulary may count two splits alike): the words of the ASCII pattern are the
    backend pre-tokenizer's words, and every space boundary is one of its word boundaries."""
    from shoparena.corpus.gates import _ASCII_WORDS, _SPACE_AFTER_WORD

    pre = default_gate_tokenizer().pre_tokenizer
    rng = random.Random(12)
    ascii_alphabet = [chr(i) for i in range(128)] + [" ", "  ", "\n", "'s", "'re", "ab", "12"]
    alphabet = [*ascii_alphabet, "é", "😀", "\u3000", "\xa0", "\x85", "٣", "中文"]

    def boundaries(text: str) -> set[int]:
        return {end for _, (_, end) in pre.pre_tokenize_str(text)}

    for _ in range(2000):
        text = "".join(rng.choice(ascii_alphabet) for _ in range(rng.randint(1, 50)))
        ends, at = set(), 0
        for word in _ASCII_WORDS.findall(text):
            at += len(word)
            ends.add(at)
        assert at == len(text) and ends == boundaries(text), repr(text)
    cut = 0
    for _ in range(2000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 50)))
        starts = {m.start() for m in _SPACE_AFTER_WORD.finditer(text)}
        assert starts <= boundaries(text), repr(text)
        cut += len(starts)
    assert cut > 500


def test_space_parts_cut_only_at_the_pre_tokenizers_word_boundaries():
    from shoparena.corpus.gates import space_parts

    pre = default_gate_tokenizer().pre_tokenizer
    rng = random.Random(13)
    alphabet = [chr(i) for i in range(128)] + [" ", " ", "  ", "\n ", "é", "\u3000", "\u00a0 ", "😀", "ab"]
    split = refused = 0
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 40)))
        parts = space_parts(text)
        if parts is None:
            refused += 1
            continue
        assert " ".join(parts) == text
        cuts, at = set(), 0
        for part in parts[:-1]:
            at += len(part)
            cuts.add(at)
            at += 1
        ends = {end for _, (_, end) in pre.pre_tokenize_str(text)} | {0}
        assert cuts <= ends, repr(text)
        split += bool(cuts)
    assert split > 500 and refused > 500


def test_first_boundary_is_the_word_boundary_patterns_first_match():
    from shoparena.corpus.gates import _WORD_BOUNDARY, _first_boundary

    rng = random.Random(14)
    alphabet = ["\n", "\n", " ", "a", "}", "\t", "é", "\r", "~", "\x7f"]
    texts = ["", "\n", "a\n", "\n\n", " \n", "é\na\n"]
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12))) for _ in range(3000)]
    for text in texts:
        match = _WORD_BOUNDARY.search(text)
        assert _first_boundary(text) == (match.start() if match else -1), repr(text)
