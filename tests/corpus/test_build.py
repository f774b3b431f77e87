"""Corpus build on a real one-race firehose and on the shared SN15 rows: funnel, views, template, resume."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from corpus_helpers import SN15_ROWS
from typer.testing import CliRunner

from sandbox_marks import needs_bwrap
from shoparena.cli.main import app
from shoparena.corpus import CorpusConfig, build_corpus


@needs_bwrap
def test_firehose_filter_quality_and_funnel(corpus_dir: Path):
    report = json.loads((corpus_dir / "report.json").read_text())
    funnel, quality = report["funnel"], report["filter_quality"]
    assert funnel["adds_up"] and funnel["input"] == 9 * 4
    assert quality["precision"] >= 0.99 and quality["recall"] >= 0.95
    assert quality["forger_trajectories_kept"] == 0
    shown = CliRunner().invoke(app, ["corpus", "report", str(corpus_dir)])
    assert shown.exit_code == 0 and "adds up" in shown.output and "precision 1.0" in shown.output
    records = [json.loads(line) for line in (corpus_dir / "records.jsonl").read_text().splitlines()]
    forger = [r for r in records if r["miner_kind"] == "forger"]
    assert forger and all(r["outcome"] == "forged_log" and r["structural_label"] == "forged" for r in forger)
    subtask = [r for r in records if r["miner_kind"] == "subtask" and r["origin"] == "agentic"]
    assert subtask and all(r["outcome"] != "kept" for r in subtask)
    assert any(r["origin"] == "recovered" for r in records)
    # Judge: a missing verdict is never 0 and never a pass.
    assert all(
        r["labels"]["judge_q"] is None for r in records if r["evidence"]["envelope_status"] != "SUCCESS"
    )


@needs_bwrap
def test_views_load_render_and_mask(corpus_dir: Path):
    from datasets import load_from_disk

    from shoparena.corpus.gates import default_tokenizer

    views = {v: load_from_disk(str(corpus_dir / "views" / v)) for v in ("sft", "steps", "kto")}
    assert set(views["sft"]) == {"train", "eval"}
    row = next(r for split in ("train", "eval") for r in views["sft"][split] if r["outcome"] == "kept")
    tokenizer = default_tokenizer()
    messages = [
        {
            **m,
            "tool_calls": [
                {**c, "function": {**c["function"], "arguments": json.loads(c["function"]["arguments"])}}
                for c in m["tool_calls"]
            ]
            or None,
        }
        for m in row["messages"]
    ]
    text = tokenizer.apply_chat_template(messages, tools=json.loads(row["tools"]), tokenize=False)
    assert "find_product" in text and "<tool_call>" in text
    # The system turn is the one the model saw in the proxy log (the agentic miner's), the same text the
    # evaluator's native format sends, so a student is evaluated under the prompt it was trained on.
    from shoparena.eval.chat_agent import NATIVE_SYSTEM_PROMPT

    kept_agentic = [
        r
        for split in ("train", "eval")
        for r in views["sft"][split]
        if r["outcome"] == "kept" and r["origin"] == "agentic"
    ]
    assert kept_agentic and all(
        r["messages"][0]["role"] == "system" and r["messages"][0]["content"] == NATIVE_SYSTEM_PROMPT
        for r in kept_agentic
    )
    # Trainable flags only on assistant turns.
    for split in ("train", "eval"):
        for r in views["sft"][split]:
            assert all(m["role"] == "assistant" for m in r["messages"] if m["trainable"])
    step = views["steps"]["train"][0]
    assert step["completion"][0]["role"] == "assistant" and isinstance(
        json.loads(step["teacher_action"]), list
    )


@needs_bwrap
def test_split_is_leak_free(corpus_dir: Path):
    from shoparena.suites.loaders import load_suite

    problems, summary = load_suite(corpus_dir / "problems.json")
    assert problems and summary.quarantined == 0
    sides: dict[str, set[str]] = {}
    for record in (json.loads(line) for line in (corpus_dir / "records.jsonl").read_text().splitlines()):
        sides.setdefault(record["cluster_id"], set()).add(record["split"])
    assert all(len(s) == 1 for s in sides.values())


@needs_bwrap
def test_resume_after_kill_is_byte_identical(firehose_dir: Path, corpus_dir: Path, tmp_path: Path):
    out = tmp_path / "c"
    # The fixture's settings (upstream rendering), so the rebuilt files compare byte for byte.
    config = CorpusConfig(run_dirs=[firehose_dir / "race-000"], out=out, render_profile="upstream")
    build_corpus(config)
    # A kill mid-build leaves a partial temp file and misses later outputs.
    shutil.rmtree(out / "views")
    (out / "records.jsonl").unlink()
    ingested = next((out / "work").glob("ingest-*.jsonl"))
    ingested.unlink()
    ingested.with_name(ingested.name + ".tmp").write_bytes(b'{"type": "rec')
    build_corpus(config)
    for name in (
        "records.jsonl",
        *(
            f"views/{v}-{s}.{ext}"
            for v in ("sft", "steps", "kto")
            for s in ("train", "eval")
            for ext in ("parquet", "jsonl")
        ),
    ):
        assert (out / name).read_bytes() == (corpus_dir / name).read_bytes(), name
    # The save_to_disk folders too (state.json's fingerprint is the rows' content hash).
    folders = [
        p.relative_to(corpus_dir)
        for v in ("sft", "steps", "kto")
        for p in (corpus_dir / "views" / v).rglob("*")
    ]
    assert any(p.name == "state.json" for p in folders)
    for rel in folders:
        if (corpus_dir / rel).is_file():
            assert (out / rel).read_bytes() == (corpus_dir / rel).read_bytes(), rel


@needs_bwrap
def test_pass1_patches_stand_for_the_whole_records(corpus_dir: Path):
    """Pass 1 writes only the fields it sets for an ingested record (``PASS1_FIELDS``): the ingested record
    reads back as itself (validated and dumped: the same keys, order and values), and the records written
    are the whole classified records, as pass 1 run in memory gives them."""
    import orjson

    from shoparena.corpus.build import PASS1_FIELDS
    from shoparena.corpus.filter import classify
    from shoparena.corpus.gates import OnlineGates, default_gate_tokenizer
    from shoparena.corpus.recover import recover_record, recoverable
    from shoparena.records.corpus import CorpusRecord

    config = CorpusConfig(run_dirs=[], out=corpus_dir)
    work = corpus_dir / "work"
    items = [
        entry["item"]
        for path in sorted(work.glob("ingest-*.jsonl"))
        for entry in map(orjson.loads, path.read_bytes().splitlines())
        if entry["type"] == "record"
    ]
    assert items
    gates, expected = OnlineGates(config.gates, default_gate_tokenizer()), []
    for item in items:
        record = CorpusRecord.model_validate(item)
        assert list(record.model_dump(mode="json").items()) == list(item.items())
        record = classify(record, config.filter, config.gates)
        batch = [record, *([recover_record(record, config.gates)] if recoverable(record) else [])]
        for one in batch:
            expected.append(gates.apply(one).model_dump(mode="json"))
    written = [json.loads(line) for line in (corpus_dir / "records.jsonl").read_text().splitlines()]
    assert [{k: v for k, v in r.items() if k not in ("split", "cluster_id")} for r in written] == [
        {k: v for k, v in r.items() if k not in ("split", "cluster_id")} for r in expected
    ]
    assert any(r["trainable_tokens"] for r in written) and any(r["origin"] == "recovered" for r in written)
    lines = [orjson.loads(line) for line in (work / "classified.jsonl").read_bytes().splitlines()]
    assert sum("patch" in line for line in lines) == len(items)
    assert all(set(line["patch"]) == PASS1_FIELDS for line in lines if "patch" in line)


@needs_bwrap
def test_trusted_teacher_build_writes_whole_records(firehose_dir: Path, corpus_dir: Path, tmp_path: Path):
    """With ``trusted_teacher`` the filter rewrites every record's training flags, so pass 1 writes each
    record whole."""
    from shoparena.corpus.config import FilterConfig

    out = tmp_path / "c"
    report = build_corpus(
        CorpusConfig(run_dirs=[firehose_dir / "race-000"], out=out, filter=FilterConfig(trusted_teacher=True))
    )
    assert report.funnel.adds_up
    records = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    lines = [json.loads(line) for line in (out / "work" / "classified.jsonl").read_text().splitlines()]
    assert len(lines) == len(records) and all("record" in line for line in lines)
    assert all(m["trainable"] for r in records for m in r["messages"] if m["role"] == "assistant")
    # The same ingested records (a trusted teacher's sub-task trajectory needs no recovered copy).
    default = [json.loads(line) for line in (corpus_dir / "records.jsonl").read_text().splitlines()]
    default = [r for r in default if r["origin"] == "agentic"]
    assert [r["record_id"] for r in records] == [r["record_id"] for r in default]
    assert any(r["messages"] != d["messages"] for r, d in zip(records, default, strict=True))


def test_report_on_sn15_rows(tmp_path: Path):
    out = tmp_path / "sn15"
    runner = CliRunner()
    result = runner.invoke(app, ["corpus", "build", "--from", str(SN15_ROWS), "--out", str(out)])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["corpus", "report", str(out)])
    assert result.exit_code == 0 and "adds up" in result.output
    funnel = json.loads((out / "report.json").read_text())["funnel"]
    assert funnel["input"] == 3 and funnel["adds_up"]
    # The shared rows are prompt prefixes (system + user only): no assistant turn, so no kept record.
    assert funnel["kept"] == 0


@pytest.mark.slow
@needs_bwrap
def test_real_kill_at_random_points_then_rerun_is_byte_identical(
    firehose_dir: Path, corpus_dir: Path, tmp_path
):
    import random
    import subprocess
    import sys
    import time

    rng = random.Random(5)
    command = [sys.executable, "-m", "shoparena.cli.main", "corpus", "build", str(firehose_dir / "race-000")]
    command += ["--render-profile", "upstream"]  # the fixture's settings: the files compare byte for byte
    for attempt in range(3):
        out = tmp_path / f"k{attempt}"
        proc = subprocess.Popen(
            [*command, "--out", str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        time.sleep(rng.uniform(1.0, 12.0))
        proc.kill()
        proc.wait()
        assert subprocess.run([*command, "--out", str(out)], capture_output=True).returncode == 0
        for view in ("sft", "steps", "kto"):
            for split in ("train", "eval"):
                for ext in ("parquet", "jsonl"):
                    name = f"views/{view}-{split}.{ext}"
                    assert (out / name).read_bytes() == (corpus_dir / name).read_bytes(), name
        assert (out / "records.jsonl").read_bytes() == (corpus_dir / "records.jsonl").read_bytes()
        for path in (corpus_dir / "views").rglob("*"):
            if path.is_file():
                rel = path.relative_to(corpus_dir)
                assert (out / rel).read_bytes() == path.read_bytes(), rel


@needs_bwrap
def test_suite_audit_finds_no_leak_between_train_and_eval(corpus_dir: Path, shop_world, tmp_path: Path):
    from shoparena.suites.audit import audit_files

    problems = json.loads((corpus_dir / "problems.json").read_text())
    assert {p["split"] for p in problems} == {"train", "eval"}
    for split in ("train", "eval"):
        rows = [
            {k: v for k, v in p.items() if k not in ("split", "cluster_id")}
            for p in problems
            if p["split"] == split
        ]
        (tmp_path / f"{split}.json").write_text(json.dumps(rows))
    report = audit_files(tmp_path / "train.json", tmp_path / "eval.json", index_dir=shop_world.index)
    counts = report.counts
    assert (
        counts.straddling_clusters
        == counts.shared_gt
        == counts.shared_shop
        == counts.near_dup
        == counts.exact
        == 0
    )
