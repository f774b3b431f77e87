"""The chat-template drift guard, the render profile of corpus → checkpoint, and the sparse LM head loss."""

from __future__ import annotations

import json

import pytest

from shoparena.train.config import ConfigError, load_config


def _row(corpus):
    import datasets

    return datasets.load_from_disk(str(corpus / "views" / "sft"))["train"][1]


def test_drift_guard_passes_the_shipped_template(tiny_path, corpus) -> None:
    from transformers import AutoTokenizer

    from shoparena.train.data import render_sft_record

    tok = AutoTokenizer.from_pretrained(tiny_path)
    row = _row(corpus)
    enc = render_sft_record(tok, row["messages"], row["tools"])  # raises on drift
    assert any(enc["assistant_masks"])


def test_drift_guard_refuses_a_template_that_rewrites_earlier_turns(tiny_path, corpus) -> None:
    """A template that drops earlier assistant turns' text once a later turn exists (as reasoning-stripping
    templates do) renders the prompt of turn 2 differently from the conversation the loss is computed on."""
    from transformers import AutoTokenizer

    from shoparena.train.data import TemplateDriftError, check_template_drift, render_sft_record

    tok = AutoTokenizer.from_pretrained(tiny_path)
    row = _row(corpus)
    drifting = tok.chat_template.replace(
        "{%- if message.role == 'assistant' -%}",
        "{%- if message.role == 'assistant' and not loop.last and add_generation_prompt -%}"
        "{{- '<|im_start|>assistant\\n(earlier turn)<|im_end|>\\n' -}}"
        "{%- elif message.role == 'assistant' -%}",
        1,
    )
    assert drifting != tok.chat_template
    with pytest.raises(TemplateDriftError, match=r"assistant turn 2 .*prefix"):
        render_sft_record(tok, row["messages"], row["tools"], chat_template=drifting)
    # A loss mask that reaches into the tool result after an assistant turn is refused too.
    enc = render_sft_record(tok, row["messages"], row["tools"])
    mask = list(enc["assistant_masks"])
    end = mask.index(1)
    while mask[end]:
        end += 1
    mask[end + 3] = 1  # past the first assistant turn: the tool response that follows it
    with pytest.raises(TemplateDriftError, match="outside the assistant turns"):
        check_template_drift(tok, row["messages"], row["tools"], enc["input_ids"], mask)


def test_prepare_sft_names_the_row_on_drift(tiny_path, corpus) -> None:
    from transformers import AutoTokenizer

    from shoparena.train.data import DataReport, prepare_sft

    tok = AutoTokenizer.from_pretrained(tiny_path)
    rows = [_row(corpus)]
    broken = tok.chat_template.replace("{{- '<|im_end|>' -}}", "{{- '<|im_end|>' if loop.last else '' -}}", 1)
    assert broken != tok.chat_template
    with pytest.raises(ConfigError, match=f"record {rows[0]['record_id']!r}"):
        prepare_sft(rows, tok, DataReport("sft", "train", "kept"), max_length=None, template=broken)


def test_overlong_rows_are_dropped_whole_and_counted(tiny_path, corpus) -> None:
    from transformers import AutoTokenizer

    from shoparena.train.data import DataReport, prepare_sft, render_sft_record

    tok = AutoTokenizer.from_pretrained(tiny_path)
    rows = [_row(corpus)]
    report = DataReport("sft", "train", "kept")
    with pytest.raises(ConfigError, match="no SFT row"):
        prepare_sft(rows, tok, report, max_length=16, overlong="drop")
    assert report.dropped == {"too_long": 1}
    full = len(render_sft_record(tok, rows[0]["messages"], rows[0]["tools"])["input_ids"])
    cut = prepare_sft(rows, tok, DataReport("sft", "train", "kept"), max_length=full - 5, overlong="truncate")
    assert len(cut[0]["input_ids"]) == full - 5


def test_checkpoint_carries_the_corpus_profile_and_a_mismatch_is_refused(tiny_path, corpus, tmp_path) -> None:
    from shoparena.formats.profiles import read_render_stamp
    from shoparena.train.runner import train

    cfg = load_config("tiny", "sft", [f"data.corpus={corpus}", "trainer.max_steps=1"])
    summary = train(cfg, tmp_path / "run", progress=False)
    stamp = read_render_stamp(summary["final"])
    assert stamp is not None and stamp.profile == "upstream" and stamp.template_hash
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["render_profile"] == "upstream" and manifest["template_hash"] == stamp.template_hash
    wrong = load_config("tiny", "sft", [f"data.corpus={corpus}", "data.render_profile=compact"])
    with pytest.raises(ConfigError, match="rendered under 'upstream', not 'compact'"):
        train(wrong, tmp_path / "other", progress=False)


def test_sparse_lm_head_loss_equals_the_full_causal_loss(tiny_path) -> None:
    import torch
    from transformers import AutoModelForCausalLM

    from shoparena.train.methods import sparse_head_loss

    model = AutoModelForCausalLM.from_pretrained(tiny_path)
    torch.manual_seed(0)
    ids = torch.randint(5, 100, (2, 12))
    labels = ids.clone()
    labels[:, :7] = -100
    labels[1, 10:] = -100
    full = model(input_ids=ids, labels=labels).loss
    sparse = sparse_head_loss(model, {"input_ids": ids, "labels": labels})
    assert torch.allclose(full, sparse, atol=1e-5)
