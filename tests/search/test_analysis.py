"""The analyzer behaves like Lucene's English analyzer; norms and idf match Lucene's arithmetic."""

from __future__ import annotations

import random

import numpy as np
import pytest

from shoparena.search.analysis import (
    LUCENE_ENGLISH_STOP_WORDS,
    LuceneEnglishAnalyzer,
    porter_measure,
    raw_tokens,
    sanitize_query,
)
from shoparena.search.bm25 import decode_norm, encode_norm, lossy_length, lucene_idf, scalar_idf


@pytest.fixture(scope="module")
def analyzer() -> LuceneEnglishAnalyzer:
    return LuceneEnglishAnalyzer()


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("Running-Shoes, SIZE 42", ["running", "shoes", "size", "42"]),
        ("3.5mm jack 1,000pcs", ["3.5mm", "jack", "1,000pcs"]),
        ("U.S.A. made", ["u.s.a", "made"]),
        ("eu:30 waist:28", ["eu", "30", "waist", "28"]),  # colon joins letters only
        ("a b c", ["a", "b", "c"]),  # single characters are tokens
        ("iPhone_14 ___ x", ["iphone_14", "x"]),
        ("中文 ok", ["中", "文", "ok"]),
        ("end. 5.", ["end", "5"]),
    ],
)
def test_tokenizer_splits_like_standard_tokenizer(text: str, tokens: list[str]) -> None:
    assert raw_tokens(text) == tokens


def test_possessive_stripped_before_stop_words(analyzer: LuceneEnglishAnalyzer) -> None:
    assert raw_tokens("Men's MEN’S dogs' it's") == ["men", "men", "dogs", "it"]
    # "it's" -> "it", a stop word: gone.
    assert analyzer.analyze("it's") == []


def test_stop_words_are_lucenes_33(analyzer: LuceneEnglishAnalyzer) -> None:
    assert len(LUCENE_ENGLISH_STOP_WORDS) == 33
    assert analyzer.analyze("the") == []
    assert analyzer.analyze("The Shoes for the Kids") == ["shoe", "kid"]
    # Words outside Lucene's list stay (other stop lists would drop them).
    assert analyzer.analyze("you all") == ["you", "all"]


@pytest.mark.parametrize(
    ("word", "stem"),
    [
        ("shoes", "shoe"),
        ("running", "run"),
        ("caresses", "caress"),
        ("ponies", "poni"),
        ("generalization", "gener"),
        ("us", "us"),  # Lucene never stems words of 1-2 chars (Snowball gives "u")
        ("ps", "ps"),
        ("possibly", "possibl"),  # reference-implementation rule BLI -> BLE
        ("analogies", "analog"),  # reference-implementation rule LOGI -> LOG
        ("capably", "capabl"),
        ("3.5", "3.5"),
    ],
)
def test_porter_matches_lucene_reference(analyzer: LuceneEnglishAnalyzer, word: str, stem: str) -> None:
    assert analyzer.stem_words([word]) == [stem]
    assert analyzer.stem(word) == stem


def test_porter_measure() -> None:
    assert [porter_measure(w) for w in ("tr", "ee", "tree", "y", "by")] == [0, 0, 0, 0, 0]
    assert [porter_measure(w) for w in ("trouble", "oats", "trees", "ivy")] == [1, 1, 1, 1]
    assert [porter_measure(w) for w in ("troubles", "private", "oaten")] == [2, 2, 2]


def test_analyze_is_cached_and_consistent(analyzer: LuceneEnglishAnalyzer) -> None:
    first = analyzer.analyze("Wireless Earphones wireless")
    assert first == ["wireless", "earphon", "wireless"]
    assert analyzer.analyze("Wireless Earphones wireless") == first


def test_sanitize_query() -> None:
    assert sanitize_query('  shoes+(red) "nike"~2 a/b c:d \\ ') == "shoes  red   nike  2 a b c d"
    assert sanitize_query('+-&|!(){}[]^"~*?:\\/') == ""


def test_lossy_norm_exact_below_24() -> None:
    small = np.arange(24)
    assert np.array_equal(lossy_length(small), small)
    assert np.array_equal(encode_norm(small), small.astype(np.uint8))


def _reference_int_to_byte4(i: int) -> int:
    """Scalar transcription of the documented SmallFloat scheme, for cross-checking the vectorised one."""
    if i < 24:
        return i
    v = i - 24
    nbits = v.bit_length()
    if nbits < 4:
        return 24 + v
    shift = nbits - 4
    return 24 + (((v >> shift) & 0x07) | ((shift + 1) << 3))


def test_lossy_norm_against_scalar_reference() -> None:
    rng = np.random.default_rng(0)
    values = np.concatenate([np.arange(0, 5000), rng.integers(0, 2**31 - 1, size=5000)])
    expected = np.array([_reference_int_to_byte4(int(v)) for v in values], dtype=np.uint8)
    assert np.array_equal(encode_norm(values), expected)
    decoded = lossy_length(values)
    assert np.all(decoded <= values)
    # Decoding is a fixed point: encode(decode(c)) == c.
    codes = np.arange(256)
    assert np.array_equal(encode_norm(decode_norm(codes)), codes.astype(np.uint8))
    assert int(decode_norm(encode_norm(2**31 - 1))) == 2013265944
    # Known rounding: 100 tokens are scored as 96; the norm is monotone.
    assert int(lossy_length(100)) == 96
    assert np.all(np.diff(decoded[:5000]) >= 0)


def test_vectorised_idf_matches_bm25s() -> None:
    n = 2_500_000
    dfs = np.array([1, 2, 10, 999, 125_000, n])
    ours = lucene_idf(dfs, n)
    assert ours.dtype == np.float32
    for df, value in zip(dfs, ours, strict=True):
        assert value == pytest.approx(scalar_idf(int(df), n), rel=1e-6)
    assert np.all(np.diff(ours) < 0)


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        # Emoji are tokens of their own, with their variation selector, skin tone and ZWJ followers.
        ("COD✅", ["cod", "✅"]),
        ("❤️no brand❤️", ["❤️", "no", "brand", "❤️"]),
        ("👍🏽 ok", ["👍🏽", "ok"]),
        ("👨\u200d👩\u200d👧 fam", ["👨\u200d👩\u200d👧", "fam"]),
        ("🇵🇭🇺🇸", ["🇵🇭", "🇺🇸"]),
        ("Pro™ x", ["pro", "™", "x"]),
        ("✓ check", ["check"]),  # not an emoji for Lucene
        # Superscripts and fractions are not word characters; marks and soft hyphens attach.
        ("m² ½ cup", ["m", "cup"]),
        ("cafe\u0301 co\u00adop zero\u200bwidth", ["cafe\u0301", "co\u00adop", "zero", "width"]),
        # Java lower-cases one code point at a time.
        ("ΟΔΟΣ İstanbul", ["οδοσ", "istanbul"]),
        # Katakana and Thai runs are one token; hiragana and ideographs one per character.
        ("カタカナ ひら 中文 ไทยภาษา", ["カタカナ", "ひ", "ら", "中", "文", "ไทยภาษา"]),
    ],
)
def test_tokenizer_non_ascii_like_lucene(text: str, tokens: list[str]) -> None:
    assert raw_tokens(text) == tokens


# Characters that exercise every rule of the Unicode tokenizer: letters and digits with the joiners of
# both kinds, underscores, apostrophes (possessives), every white-space character, emoji sequences (flags,
# keycaps, skin tones, ZWJ), combining marks, CJK, katakana, Thai, and the two characters Java lower-cases
# differently from Python.
_WHITESPACE = [chr(c) for c in range(0x110000) if chr(c).isspace()]
_ALPHABET = [
    *"aZk9_'’＇.,;:·-/&",
    "Σ",
    "İ",
    "ß",
    "é",
    "\u0301",
    "\u200d",
    "\ufe0f",
    "\u20e3",
    "#",
    "❤",
    "🇵",
    "🇭",
    "👍",
    "🏽",
    "日",
    "本",
    "テ",
    "キ",
    "ภ",
    "า",
    "㎏",
    "½",
    "²",
    "ǅ",
    "𝐀",
    "\U00020000",
]


def test_mixed_text_tokenizes_like_the_unicode_rules_on_the_whole_text() -> None:
    from shoparena.search.analysis import _finish, _unicode_tokens

    rng = random.Random(5)
    texts = [f"ab{ws}cd{ws}é{ws}x.y{ws}❤{ws}12,5" for ws in _WHITESPACE]
    for _ in range(1500):
        texts.append(
            "".join(
                rng.choice(_WHITESPACE) if rng.random() < 0.2 else rng.choice(_ALPHABET)
                for _ in range(rng.randrange(1, 40))
            )
        )
    texts.append("x" + "é" * 300 + " ok")
    for text in texts:
        if not text.isascii():
            assert raw_tokens(text) == _finish(_unicode_tokens(text), text), repr(text)


def test_cached_word_tokens_change_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    # _mixed_tokens remembers the tokens of non-ASCII words (a small cache here, so that it is emptied
    # many times): every text, read twice, gives the Unicode rules' tokens.
    from shoparena.search import analysis

    monkeypatch.setattr(analysis, "_WORD_CACHE_SIZE", 3)
    monkeypatch.setattr(analysis, "_WORD_TOKENS", {})
    rng = random.Random(35)
    texts = [
        "".join(rng.choice(_WHITESPACE) if rng.random() < 0.2 else rng.choice(_ALPHABET) for _ in range(30))
        for _ in range(300)
    ]
    for text in texts + texts:
        if not text.isascii():
            assert raw_tokens(text) == analysis._finish(analysis._unicode_tokens(text), text), repr(text)
    assert len(analysis._WORD_TOKENS) <= 3


def test_white_space_separates_tokens_and_their_context() -> None:
    # What _mixed_tokens relies on: the tokens of "x<ws>y" are those of x followed by those of y.
    from shoparena.search.analysis import _unicode_tokens

    pieces = ["x.", "1,", "❤\u200d", "🇵", "テ", "ภา", "\u0301", "s'", "#\ufe0f"]
    for ws in _WHITESPACE:
        for left in pieces:
            for right in pieces:
                text = f"{left}{ws}{right}"
                assert _unicode_tokens(text) == _unicode_tokens(left) + _unicode_tokens(right), repr(text)
