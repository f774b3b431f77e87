"""student-word: the word-level tokenizer spells every word one way, round-trips text, and builds a model."""

from __future__ import annotations

import pytest

pytest.importorskip("tokenizers")

TEXTS = [
    "Nike Running Shoes Breathable",
    "I want running shoes from nike with free shipping.",
    "price 100-500",
]


def test_words_are_single_tokens_and_text_round_trips() -> None:
    from shoparena.models.word_student import build_word_tokenizer

    tok = build_word_tokenizer(TEXTS)
    text = 'I want {"q": "Running Shoes"} at 579-PHP, P12 Zuvakri'
    ids = tok(text, add_special_tokens=False)["input_ids"]
    assert tok.decode(ids) == text  # unseen words fall back to character pieces, never [UNK]
    assert tok.unk_token_id not in ids
    # A character none of the texts contain has no piece: it is the one thing that becomes [UNK].
    assert tok.convert_ids_to_tokens(tok("❤", add_special_tokens=False)["input_ids"]) == ["[UNK]"]
    pieces = tok.convert_ids_to_tokens(tok(" running shoes", add_special_tokens=False)["input_ids"])
    assert pieces == [" running", " shoes"]  # a seen word with its leading space is one token
    digits = tok.convert_ids_to_tokens(tok(" 579", add_special_tokens=False)["input_ids"])
    assert digits == [" 5", "7", "9"]


def test_chat_template_marks_generation_and_tags_survive_decoding() -> None:
    from shoparena.models.word_student import build_word_tokenizer

    tok = build_word_tokenizer(TEXTS)
    messages = [
        {"role": "user", "content": "running shoes"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"type": "function", "function": {"name": "find_product", "arguments": {"q": "running shoes"}}}
        ]},
    ]
    enc = tok.apply_chat_template(
        messages, tokenize=True, return_dict=True, return_assistant_tokens_mask=True
    )
    marked = [t for t, m in zip(enc["input_ids"], enc["assistant_masks"], strict=True) if m]
    decoded = tok.decode(marked, skip_special_tokens=True)
    assert decoded.startswith("<tool_call>") and '"q": "running shoes"' in decoded


def test_build_is_reused_for_the_same_fingerprint(tmp_path) -> None:
    from shoparena.models.folder import read_manifest
    from shoparena.models.word_student import build_word_student

    path = build_word_student(tmp_path / "m", TEXTS, layers=1, hidden=64, fingerprint="a")
    stamp = (path / "model.safetensors").stat().st_mtime_ns
    again = build_word_student(tmp_path / "m", iter(()), layers=1, hidden=64, fingerprint="a")
    assert again == path and (path / "model.safetensors").stat().st_mtime_ns == stamp
    rebuilt = build_word_student(tmp_path / "m", TEXTS, layers=1, hidden=64, fingerprint="b")
    assert read_manifest(rebuilt).details["fingerprint"] == "b"
