"""The published corpus trains in stock TRL: ``SFTTrainer`` itself (not shoparena's wrapper) on
``load_dataset(published_dir)``, learning from the trainable turns of kept trajectories and nothing else."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from sandbox_marks import needs_bwrap
from shoparena.corpus.card import prepare_publish
from shoparena.corpus.views import is_selected, sft_kept_rows, trainable_blocks

pytestmark = needs_bwrap


def _records(corpus_dir: Path) -> list[dict]:
    text = (corpus_dir / "records.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.split("\n") if line.strip()]


@pytest.fixture(scope="module")
def compact_corpus(firehose_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fixture firehose's corpus under the compact render profile (the pipeline's; upstream rows of this
    world reach 37 k tokens of the tiny tokenizer, too long for a CPU test step)."""
    from typer.testing import CliRunner

    from shoparena.cli.main import app

    root = tmp_path_factory.mktemp("compact-corpus")
    (root / "corpus.yaml").write_text("render_profile: compact\n", encoding="utf-8")
    out = root / "c"
    config = root / "corpus.yaml"
    args = ["corpus", "build", str(firehose_dir / "race-000"), "--out", str(out), "--config", str(config)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> str:
    from shoparena.models.tiny import build_tiny_qwen3

    return str(build_tiny_qwen3(tmp_path_factory.mktemp("models") / "tiny-qwen3"))


def test_stock_sft_trainer_learns_only_from_kept_trainable_turns(
    compact_corpus: Path, tiny_model: str, tmp_path: Path, monkeypatch
) -> None:
    datasets = pytest.importorskip("datasets")
    trl = pytest.importorskip("trl")
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from shoparena.train.data import render_sft_record, sft_messages

    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    corpus_dir = compact_corpus
    published = prepare_publish(corpus_dir, tmp_path / "published")  # what `corpus publish` uploads
    train = datasets.load_dataset(str(published), cache_dir=str(tmp_path / "cache"))["train"]

    # The default configuration is the training selection: every kept agentic trajectory, nothing else.
    records = _records(corpus_dir)
    selected = {r["record_id"] for r in records if r["split"] == "train" and is_selected(r, "kept")}
    assert selected and set(train["record_id"]) == selected
    assert set(train["outcome"]) == {"kept"} and set(train["origin"]) == {"agentic"}
    assert json.loads((corpus_dir / "report.json").read_text())["render"]["profile"] == "compact"
    assert len(selected) < sum(r["split"] == "train" for r in records)  # the rejects are not in it

    tokenizer = AutoTokenizer.from_pretrained(tiny_model)
    model = AutoModelForCausalLM.from_pretrained(tiny_model)
    before = {name: p.detach().clone() for name, p in model.named_parameters()}
    # The card's max_length holds every row (measured at build); the test trains in a CPU-sized window,
    # where TRL drops a row whose trainable turns all fall outside it (how max_length=1024 gave 0 samples).
    lengths = json.loads((corpus_dir / "report.json").read_text())["sft_lengths"]
    window = 2048
    config = trl.SFTConfig(
        output_dir=str(tmp_path / "out"),
        max_steps=3,
        per_device_train_batch_size=2,
        learning_rate=1e-3,
        assistant_only_loss=True,
        max_length=window,
        logging_steps=1,
        save_strategy="no",
        report_to=[],
        use_cpu=True,
    )
    trainer = trl.SFTTrainer(model=model, args=config, train_dataset=train, processing_class=tokenizer)

    # What TRL learns from, row by row: its own labels. They are exactly the tokens of the completion's
    # assistant turns (every one trainable) inside the window, as shoparena's mask (with its template drift
    # guard) marks them.
    prepared = {(r["record_id"], r["block_idx"]): r for r in trainer.train_dataset}
    kept_in_window = set()
    for row in train:
        assert all(m["trainable"] for m in row["completion"] if m["role"] == "assistant")
        reference = render_sft_record(tokenizer, sft_messages(row), row["tools"])
        assert len(reference["input_ids"]) <= lengths["max_length"], "the card's max_length holds every row"
        ids, mask = reference["input_ids"][:window], reference["assistant_masks"][:window]
        expected = [t for t, bit in zip(ids, mask, strict=True) if bit]
        key = (row["record_id"], row["block_idx"])
        if not expected:
            assert key not in prepared  # nothing to learn inside the window: TRL drops the row
            continue
        kept_in_window.add(key)
        example = prepared[key]
        learned = [t for t, lab in zip(example["input_ids"], example["labels"], strict=True) if lab != -100]
        assert learned == expected, row["record_id"]
    assert kept_in_window and set(prepared) == kept_in_window

    trainer.train()
    losses = [entry["loss"] for entry in trainer.state.log_history if "loss" in entry]
    assert len(losses) == 3 and all(math.isfinite(x) for x in losses)
    assert any(not torch.equal(before[name], p) for name, p in model.named_parameters())


def test_a_non_trainable_turn_splits_the_conversation_so_it_is_only_context() -> None:
    """Assistant turns A0 (trainable), A1 (not: code-written), A2, A3 (trainable) give two rows: A0 as the
    completion of the request, then A2..A3 as the completion of everything before them, A1 included."""
    from corpus_helpers import view_record

    record = view_record(1, 3)  # assistant turns: step 0 (trainable), step 1 (not), step 2, done (trainable)
    messages = record["messages"]
    assistants = [i for i, m in enumerate(messages) if m["role"] == "assistant"]
    assert [messages[i]["trainable"] for i in assistants] == [True, False, True, True]
    blocks = [(assistants[0], assistants[0] + 1), (assistants[2], len(messages))]
    assert list(trainable_blocks(messages)) == blocks
    rows = list(sft_kept_rows(record))
    assert [r["block_idx"] for r in rows] == [0, 1]
    assert [m["role"] for m in rows[0]["prompt"]] == ["system", "user"]
    assert [m["content"] for m in rows[0]["completion"]] == ["step 0"]
    assert [m["content"] for m in rows[1]["completion"] if m["role"] == "assistant"] == ["step 2", "done"]
    assert "step 1" in [m["content"] for m in rows[1]["prompt"]]
    rejected = {**record, "outcome": "judge_below_bar"}
    recovered = {**record, "origin": "recovered"}
    assert list(sft_kept_rows(rejected)) == [] and list(sft_kept_rows(recovered)) == []
