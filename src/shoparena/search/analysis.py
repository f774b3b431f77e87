"""A text analyzer that behaves like Lucene's English analyzer as Pyserini configures it (spec §3.1).

The chain is: StandardTokenizer-like word splitting, English possessive removal, lower-casing, Lucene's 33
default English stop words, then the original Porter stemmer. Stemming uses PyStemmer's ``"porter"``
algorithm (the published 1980 algorithm) corrected for the three places where Lucene's ``PorterStemmer``
(the reference implementation) differs from it: words of one or two characters are never stemmed, and
step 2 rewrites ``-bli`` to ``-ble`` (instead of only ``-abli``) and ``-logi`` to ``-log``.

The tokenizer follows the Unicode word-break rules that matter for product text: runs of letters and digits
form one token (``abc123``), a ``.``/``'``/``’``/``:`` between two letters does not split (``u.s.a``,
``don't``), a ``.``/``,``/``;``/``'`` between two digits does not split (``3.5``, ``1,000``), and CJK
ideographs and kana are one token each. Everything else separates tokens.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import Stemmer

from shoparena.search._lucene_chars import EMOJI, EXTEND, EXTRA_WORD, NOT_WORD

#: Lucene's ``EnglishAnalyzer.ENGLISH_STOP_WORDS_SET`` (the default for the English analyzer).
# fmt: off
LUCENE_ENGLISH_STOP_WORDS: frozenset[str] = frozenset((
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it",
    "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there", "these", "they",
    "this", "to", "was", "will", "with",
))
# fmt: on

#: The characters ORO's server replaces with a space before searching (spec §3.2).
LUCENE_SPECIAL_CHARS = '+-&|!(){}[]^"~*?:\\/'
_SANITIZE_TABLE = str.maketrans({ch: " " for ch in LUCENE_SPECIAL_CHARS})


def _char_class(ranges: tuple[tuple[int, int], ...]) -> str:
    return "".join(
        re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in ranges
    )


_NOT_WORD = _char_class(NOT_WORD)
_EXTEND = _char_class(EXTEND)
#: One word character: Python's ``\w`` minus what Lucene does not index, plus what it indexes besides.
_WORD = rf"(?:[^\W{_NOT_WORD}]|[{_char_class(EXTRA_WORD)}])"
_LETTER = rf"[^\W\d_{_NOT_WORD}]"
_X = rf"[{_EXTEND}]*"
_RUN = rf"(?:{_WORD}{_X})+"
_EMOJI_CHAR = rf"[{_char_class(EMOJI)}]"
_REGIONAL = "[\U0001f1e6-\U0001f1ff]"
# Word-internal joiners of UAX #29: MidLetter/MidNumLet/Single_Quote between letters (WB6/7),
# MidNum/MidNumLet/Single_Quote between digits (WB11/12). ``\w`` covers letters, digits and ``_``
# (ExtendNumLet), which join anything next to them. Marks and format characters attach to the
# character before them (WB4). Emoji are tokens of their own: a flag (two regional indicators), a keycap,
# or a pictograph with its modifiers and ZWJ-joined followers.
_TOKEN_RE = re.compile(
    rf"{_REGIONAL}{{2}}{_X}|[#*]\ufe0f\u20e3|[\U0001f3fb-\U0001f3ff]{_X}"
    rf"|{_EMOJI_CHAR}{_X}(?:(?<=\u200d){_EMOJI_CHAR}{_X})*"
    rf"|{_RUN}(?:(?:(?<={_LETTER})[.'’‘:·\uff07\uff0e](?={_LETTER})"
    rf"|(?<=\d)[.,;'’‘\uff07\uff0e](?=\d)){_RUN})*"
)
#: The same rules for ASCII text (most product text), where they reduce to a much faster pattern.
_ASCII_TOKEN_RE = re.compile(
    r"[A-Za-z0-9_]+(?:(?:(?<=[A-Za-z])[.':](?=[A-Za-z])|(?<=[0-9])[.,;'](?=[0-9]))[A-Za-z0-9_]+)*"
)
# Ideographs and hiragana are single-character tokens in Lucene's StandardTokenizer; katakana runs and
# South-East Asian runs (Thai, Lao, Myanmar, Khmer, ...) are tokens of their own (they do not join letters).
_SEA = "\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u19e0-\u19ff\u1a20-\u1aaf\ua9e0-\ua9ff\uaa60-\uaa7f"
_CJK_RE = re.compile(
    r"([\u3040-\u309f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f]"
    + _X
    + r"|(?:[\u30a0-\u30ff\u31f0-\u31ff\uff66-\uff9f]"
    + _X
    + ")+"
    + "|(?:(?!["
    + _EXTEND
    + "])["
    + _SEA
    + "]"
    + _X
    + ")+)"
)
#: The characters every alternative of ``_CJK_RE`` starts with: text without them needs no spacing.
_CJK_START_RE = re.compile(
    r"[\u3040-\u309f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f"
    r"\u30a0-\u30ff\u31f0-\u31ff\uff66-\uff9f" + _SEA + "]"
)
_APOSTROPHES = ("'", "’", "\uff07")
#: Python's ``str.lower`` is context-sensitive for these; Lucene lower-cases one code point at a time.
_JAVA_LOWER = str.maketrans({"Σ": "σ", "İ": "i"})
#: Lucene's StandardTokenizer splits longer tokens at this many characters.
MAX_TOKEN_LENGTH = 255


def sanitize_query(q: str) -> str:
    """Replace each Lucene special character with a space and strip (ORO's server does this)."""
    return q.translate(_SANITIZE_TABLE).strip()


def _split_long(tokens: list[str]) -> list[str]:
    out: list[str] = []
    for tok in tokens:
        if len(tok) <= MAX_TOKEN_LENGTH:
            out.append(tok)
        else:
            out.extend(tok[i : i + MAX_TOKEN_LENGTH] for i in range(0, len(tok), MAX_TOKEN_LENGTH))
    return out


def _unicode_tokens(text: str) -> list[str]:
    """Tokens of any text by the full Unicode rules, lower-cased (possessives and long tokens untouched)."""
    text = text.translate(_JAVA_LOWER)
    if _CJK_START_RE.search(text):
        text = _CJK_RE.sub(r" \1 ", text)
    return _TOKEN_RE.findall(text.lower())


#: Tokens of non-ASCII words seen lately (the same emoji-decorated words recur across a catalogue);
#: ``_unicode_tokens`` of a word depends on the word alone.
_WORD_TOKENS: dict[str, tuple[str, ...]] = {}
_WORD_CACHE_SIZE = 100_000


def _mixed_tokens(text: str) -> list[str]:
    """``_unicode_tokens(text)``, faster: white space (``str.split``'s) never lies inside a token, so runs
    of ASCII words take the ASCII pattern (5-20x faster) and only words with a non-ASCII character the
    Unicode rules (``tests/search/test_analysis.py`` holds the two equal)."""
    tokens: list[str] = []
    ascii_run: list[str] = []
    for word in text.split():
        if word.isascii():
            ascii_run.append(word)
            continue
        if ascii_run:
            tokens += _ASCII_TOKEN_RE.findall(" ".join(ascii_run).lower())
            ascii_run = []
        found = _WORD_TOKENS.get(word)
        if found is None:
            if len(_WORD_TOKENS) >= _WORD_CACHE_SIZE:
                _WORD_TOKENS.clear()
            found = _WORD_TOKENS[word] = tuple(_unicode_tokens(word))
        tokens += found
    if ascii_run:
        tokens += _ASCII_TOKEN_RE.findall(" ".join(ascii_run).lower())
    return tokens


def _finish(tokens: list[str], text: str) -> list[str]:
    """Drop underscore-only tokens, strip possessives, split overlong tokens (``text``: the input)."""
    if "_" in text:
        # A lone run of underscores is a word segment without letters or digits: Lucene emits nothing.
        tokens = [t for t in tokens if t.strip("_")]
    if "'" in text or "’" in text or "\uff07" in text:
        tokens = [t[:-2] if len(t) > 2 and t[-1] == "s" and t[-2] in _APOSTROPHES else t for t in tokens]
    # Lower-casing never lengthens text here (``_JAVA_LOWER`` maps the one character it would).
    if len(text) > MAX_TOKEN_LENGTH and any(len(t) > MAX_TOKEN_LENGTH for t in tokens):
        tokens = _split_long(tokens)
    return tokens


def raw_tokens(text: str) -> list[str]:
    """Tokenise, lower-case and strip English possessives; stop words and stemming come later.

    Args:
        text: Any text (a product's ``contents`` or a query).

    Returns:
        The lower-cased tokens in text order.
    """
    if text.isascii():
        return _finish(_ASCII_TOKEN_RE.findall(text.lower()), text)
    return _finish(_mixed_tokens(text), text)


def porter_measure(stem: str) -> int:
    """Porter's *m*: the number of vowel-consonant sequences in ``stem`` (``y`` after a consonant: vowel)."""
    m = 0
    prev_vowel = False
    for i, ch in enumerate(stem):
        if ch in "aeiou":
            vowel = True
        elif ch == "y":
            vowel = i > 0 and not _is_consonant_at(stem, i - 1)
        else:
            vowel = False
        if prev_vowel and not vowel:
            m += 1
        prev_vowel = vowel
    return m


def _is_consonant_at(word: str, i: int) -> bool:
    ch = word[i]
    if ch in "aeiou":
        return False
    if ch == "y":
        return i == 0 or not _is_consonant_at(word, i - 1)
    return True


class LuceneEnglishAnalyzer:
    """Analyzer with a stem cache; cheap to call repeatedly, safe to share between threads.

    Args:
        cache_size: Forget the cache when it grows past this many distinct tokens (bounds memory on
            catalogs with millions of model numbers).
    """

    name = "lucene-english-porter"

    def __init__(self, cache_size: int = 2_000_000) -> None:
        self._stemmer = Stemmer.Stemmer("porter")
        self._cache: dict[str, str] = {}
        self._cache_size = cache_size
        self.stop_words = LUCENE_ENGLISH_STOP_WORDS

    def stem_words(self, words: list[str]) -> list[str]:
        """Stem words exactly as Lucene's ``PorterStemFilter`` (no caching)."""
        stems = self._stemmer.stemWords(words)
        out = []
        for word, stem in zip(words, stems, strict=True):
            if len(word) <= 2:
                stem = word  # Lucene leaves one- and two-character words alone.
            elif stem.endswith("bli") and not stem.endswith("abli") and porter_measure(stem[:-3]) > 0:
                # Reference implementation: (m>0) BLI -> BLE in step 2; the rest of the algorithm
                # then continues on the rewritten word, which re-stemming reproduces.
                stem = self._stemmer.stemWord(stem[:-3] + "ble")
            elif stem.endswith("logi") and porter_measure(stem[:-4]) > 0:
                stem = self._stemmer.stemWord(stem[:-4] + "log")
            out.append(stem)
        return out

    def stem(self, word: str) -> str:
        """Stem one lower-cased token (cached)."""
        cached = self._cache.get(word)
        if cached is None:
            cached = self.stem_words([word])[0]
            self._remember({word: cached})
        return cached

    def _remember(self, mapping: dict[str, str]) -> None:
        if len(self._cache) + len(mapping) > self._cache_size:
            self._cache = {}
        self._cache.update(mapping)

    def terms_of(self, tokens: Iterable[str]) -> list[str]:
        """Stop-filter and stem already tokenised, lower-cased tokens."""
        kept = [t for t in tokens if t not in self.stop_words]
        cache = self._cache
        missing = [t for t in kept if t not in cache]
        if missing:
            unique = list(dict.fromkeys(missing))
            self._remember(dict(zip(unique, self.stem_words(unique), strict=True)))
            cache = self._cache
            if any(t not in cache for t in kept):  # the cache was just reset
                return self.stem_words(kept)
        return [cache[t] for t in kept]

    def analyze(self, text: str) -> list[str]:
        """Full chain: the index terms of ``text`` in order, duplicates kept."""
        return self.terms_of(raw_tokens(text))

    def __call__(self, text: str) -> list[str]:
        return self.analyze(text)


_DEFAULT: LuceneEnglishAnalyzer | None = None


def default_analyzer() -> LuceneEnglishAnalyzer:
    """A process-wide analyzer instance (its cache is shared)."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = LuceneEnglishAnalyzer()
    return _DEFAULT


def analyze(text: str) -> list[str]:
    """Analyse ``text`` with the process-wide analyzer."""
    return default_analyzer().analyze(text)


__all__ = [
    "LUCENE_ENGLISH_STOP_WORDS",
    "LUCENE_SPECIAL_CHARS",
    "LuceneEnglishAnalyzer",
    "analyze",
    "default_analyzer",
    "porter_measure",
    "raw_tokens",
    "sanitize_query",
]
