"""Teacher-forced loss on corpus rows: the same tokens SFT trains, HF's own loss, lower after training."""

from __future__ import annotations

import json
import math

import pytest


def test_row_loss_equals_hf_loss_on_the_trainable_tokens(tiny_path, corpus) -> None:
    import datasets
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from shoparena.train.data import render_sft_record
    from shoparena.train.models import prepare_tokenizer
    from shoparena.train.teacher_forcing import row_losses, summarize

    losses = row_losses(tiny_path, corpus, split="eval", select="kept+failed")
    rows = list(datasets.load_from_disk(str(corpus / "views" / "sft"))["eval"])
    assert [r.record_id for r in losses] == [r["record_id"] for r in rows]
    tok = AutoTokenizer.from_pretrained(tiny_path)
    prepare_tokenizer(tok)
    model = AutoModelForCausalLM.from_pretrained(tiny_path)
    for loss, row in zip(losses, rows, strict=True):
        enc = render_sft_record(tok, row["messages"], row["tools"])
        ids = torch.tensor([enc["input_ids"]])
        labels = ids.clone()
        labels[0, torch.tensor(enc["assistant_masks"]) == 0] = -100
        with torch.no_grad():
            expected = float(model(input_ids=ids, labels=labels).loss)
        assert loss.tokens == sum(enc["assistant_masks"][1:]) > 0
        assert loss.nll == pytest.approx(expected, rel=1e-4)
        assert 0 <= loss.correct <= loss.tokens
    summary = summarize(losses)
    assert summary["rows"] == len(rows) and summary["tokens"] == sum(r.tokens for r in losses)
    assert abs(summary["nll"] - math.log(4000)) < 1.0  # random init: near uniform over the vocabulary


def test_training_lowers_the_loss_and_selection_filters_rows(tiny_path, primed_tiny_path, corpus) -> None:
    from shoparena.train.teacher_forcing import row_losses, summarize

    base = summarize(row_losses(tiny_path, corpus, select="kept+failed"))
    primed = summarize(row_losses(primed_tiny_path, corpus, select="kept+failed"))
    assert primed["nll"] < base["nll"] - 0.5
    assert primed["accuracy"] > base["accuracy"]
    limited = row_losses(tiny_path, corpus, select="kept+failed", limit=1)
    assert len(limited) == 1
    # Truncated like SFT: within 64 tokens (system turn and tools) no action is left, so no row is scored.
    assert row_losses(tiny_path, corpus, select="kept+failed", max_length=64) == []


def test_basket_decisions_read_the_teachers_calls(tiny_path, corpus) -> None:
    """Every trainable assistant turn yields its tool names in order, and its recommended ids (not a view's
    ids), beside what the teacher-forced argmax wrote there."""
    import datasets

    from shoparena.train.teacher_forcing import basket_decisions, summarize_decisions

    rows = list(datasets.load_from_disk(str(corpus / "views" / "sft"))["eval"])
    decisions = basket_decisions(tiny_path, corpus, select="kept+failed")
    expected_calls, expected_ids = [], []
    for row in rows:
        for message in row["messages"]:
            if message["role"] == "assistant" and message.get("trainable"):
                calls = message.get("tool_calls") or []
                expected_calls.append("+".join(c["function"]["name"] for c in calls))
                expected_ids += [
                    json.loads(c["function"]["arguments"])["product_ids"]
                    for c in calls
                    if c["function"]["name"] == "recommend_product"
                ]
    assert [d.expected for d in decisions if d.kind == "calls"] == expected_calls
    assert [d.expected for d in decisions if d.kind == "ids"] == expected_ids
    summary = summarize_decisions(decisions)
    assert summary["calls/all"]["n"] == len(expected_calls)
    assert summary["calls/all"]["right"] == sum(d.right for d in decisions if d.kind == "calls")
    assert sum(v["n"] for k, v in summary.items() if k.startswith("calls/") and k != "calls/all") == len(
        expected_calls
    )
