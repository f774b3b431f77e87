"""``student-word``: a random-init Qwen3 with a copy-friendly word-level tokenizer (the CPU student).

Why a word-level vocabulary: a small model trained from scratch on a few thousand rows learns *where* to copy
(the user's words into ``find_product``'s ``q``, a handle from a result line into ``recommend_product``) far
sooner when every word is one token that is spelled the same wherever it stands. A byte-level BPE gives the
same word different tokens after a space, a quote or a bracket, and splits rare catalogue words into pieces.

The tokenizer is a WordPiece over whole words: the vocabulary is every word of the texts given to the builder
(the catalogue's titles, options and attributes, the knowledge pages, the training problems' requests, and the
render profile's fixed text) plus every character they use (and printable ASCII) as a piece of its own, so an
unseen word falls back to character pieces; only a character none of the texts contain becomes ``[UNK]``.
A word carries its leading space (`` shoes``), whitespace and punctuation are tokens of their own and decoding
concatenates, so ``decode(encode(text)) == text`` for text made of known characters. Digits are single tokens,
so prices and handles (``P12``) compose from a closed set.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from shoparena.models.folder import is_valid_model_dir, read_manifest, save_model_folder
from shoparena.models.templates import TEMPLATE_VERSION, chatml_tools_template
from shoparena.models.tiny import SPECIAL_TOKENS, TAG_TOKENS, random_qwen3

KIND = "student-word-qwen3"
#: The pre-tokenizer's pieces: letter runs, single digits, single whitespace characters, single symbols.
SPLIT_PATTERN = r" ?[^\W\d_]+| ?\d|\s|[^\w\s]|_"
_WORD_RE = re.compile(r" ?[^\W\d_]+")
_CONTINUATION = "##"


def word_vocabulary(
    texts: Iterable[str], *, min_count: int = 1, max_words: int = 16000
) -> tuple[list[str], list[str]]:
    """The whole words of ``texts`` (most frequent first, then alphabetical; at most ``max_words``) and
    every character they use (sorted)."""
    counts: Counter[str] = Counter()
    chars: set[str] = set()
    for text in texts:
        counts.update(_WORD_RE.findall(text))
        chars.update(text)
    ranked = sorted((w for w, c in counts.items() if c >= min_count), key=lambda w: (-counts[w], w))
    return ranked[:max_words], sorted(chars)


def build_word_tokenizer(texts: Iterable[str], *, max_words: int = 16000) -> Any:
    """A ``PreTrainedTokenizerFast`` over the words of ``texts`` (see the module docstring)."""
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    words, seen = word_vocabulary(texts, max_words=max_words)
    chars = [chr(c) for c in range(32, 127)] + ["\n", "\t"]
    chars += [ch for ch in seen if ch not in set(chars)]
    vocab: dict[str, int] = {}
    pieces = [
        *chars,
        *(" " + c for c in chars if c.isalnum()),
        *(_CONTINUATION + c for c in chars if c.isalnum()),
    ]
    for token in [*SPECIAL_TOKENS, "[UNK]", *pieces, *words]:
        vocab.setdefault(token, len(vocab))
    tokenizer = Tokenizer(
        models.WordPiece(
            vocab, unk_token="[UNK]", continuing_subword_prefix=_CONTINUATION, max_input_chars_per_word=200
        )
    )
    tokenizer.pre_tokenizer = pre_tokenizers.Split(Regex(SPLIT_PATTERN), behavior="isolated")
    tokenizer.decoder = decoders.Sequence([decoders.Replace(_CONTINUATION, ""), decoders.Fuse()])
    tokenizer.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in SPECIAL_TOKENS])
    tokenizer.add_tokens([AddedToken(tag, special=False, normalized=False) for tag in TAG_TOKENS])
    wrapped = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        unk_token="[UNK]",
        model_max_length=4096,
    )
    wrapped.chat_template = chatml_tools_template(thinking=True)
    return wrapped


def build_word_student(
    out_dir: str | Path,
    texts: Iterable[str],
    *,
    seed: int = 0,
    layers: int = 4,
    hidden: int = 256,
    fingerprint: str = "",
    force: bool = False,
    progress: Callable[[str], None] | None = None,
) -> Path:
    """Build (or reuse, when ``fingerprint`` and the shape match) the ``student-word`` folder.

    Args:
        out_dir: Destination folder.
        texts: The texts whose words make the vocabulary (consumed only when building).
        seed: Torch seed of the random weights.
        layers: Transformer layers.
        hidden: Hidden size (heads of 64).
        fingerprint: What the texts were (a hash the caller computes); a different one rebuilds.
        force: Rebuild even when a matching folder exists.
        progress: Called with short status lines.
    """
    out = Path(out_dir).expanduser()
    say = progress or (lambda _msg: None)
    shape = {"seed": seed, "layers": layers, "hidden": hidden, "fingerprint": fingerprint}
    if not force and is_valid_model_dir(out, kind=KIND, template_version=TEMPLATE_VERSION):
        manifest = read_manifest(out)
        if manifest is not None and all(manifest.details.get(k) == v for k, v in shape.items()):
            say(f"reusing {out}")
            return out
    say("building the word-level tokenizer")
    tokenizer = build_word_tokenizer(texts)
    heads = max(1, hidden // 64)
    model = random_qwen3(tokenizer, hidden=hidden, layers=layers, heads=heads, kv_heads=heads, seed=seed)
    return save_model_folder(
        model,
        tokenizer,
        out,
        kind=KIND,
        source="random-init",
        template_version=TEMPLATE_VERSION,
        details={**shape, "vocab_size": len(tokenizer)},
        say=say,
    )


__all__ = ["KIND", "SPLIT_PATTERN", "build_word_student", "build_word_tokenizer", "word_vocabulary"]
