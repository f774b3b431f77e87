"""The tiny tokenizer is trained once per machine: the cached ``tokenizer.json`` encodes exactly as a freshly
trained tokenizer, and a damaged file is trained over."""

from __future__ import annotations

from pathlib import Path

from tokenizers import Tokenizer

from shoparena.models import tiny

TEXTS = [
    '<|im_start|>assistant\n<think>\nfind it\n</think>\n\n<tool_call>\n{"name": "find_product"}\n</tool_call>'
    "<|im_end|>\n",
    "ñandú 😀 \u2028 wireless earbuds under 500 PHP",
    "",
]


def test_cached_json_encodes_as_a_fresh_training_and_is_read_not_retrained(tmp_path: Path, monkeypatch):
    fresh = tiny.train_tiny_tokenizer()
    first = tiny.tiny_tokenizer_json(tmp_path)
    (cached,) = tmp_path.glob("*.json")
    loaded = tiny.wrap_tiny_tokenizer(Tokenizer.from_str(first))
    for text in TEXTS:
        assert (
            loaded(text, add_special_tokens=False)["input_ids"]
            == fresh(text, add_special_tokens=False)["input_ids"]
        )
    assert loaded.get_vocab() == fresh.get_vocab() and loaded.chat_template == fresh.chat_template

    def no_training(_vocab_size: int):
        raise AssertionError("trained again although the cache holds the tokenizer")

    monkeypatch.setattr(tiny, "_train_backend", no_training)
    assert tiny.tiny_tokenizer_json(tmp_path) == first
    monkeypatch.undo()

    cached.write_text("{torn", encoding="utf-8")  # a damaged file is trained over
    assert tiny.tiny_tokenizer_json(tmp_path) == first
    assert cached.read_text(encoding="utf-8") == first


def test_an_unwritable_cache_still_gives_the_tokenizer(tmp_path: Path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    text = tiny.tiny_tokenizer_json(blocker / "sub")
    assert Tokenizer.from_str(text).get_vocab_size() == tiny.VOCAB_SIZE
