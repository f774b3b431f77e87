"""Ingest of every --from shape into one record type: envelopes, bare lists, SB rollouts, SN15 chat rows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from corpus_helpers import SN15_ROWS
from test_fuzz_filter import ENVELOPE

from shoparena.corpus import CorpusConfig, build_corpus
from shoparena.formats import from_oro_envelope
from shoparena.formats.sb import to_sb_rollout
from shoparena.runs.files import RunFileError


def test_every_input_shape_becomes_a_record_or_a_named_quarantine(tmp_path: Path):
    traj = from_oro_envelope(ENVELOPE)
    sn15 = SN15_ROWS.read_text().splitlines()[0]
    lines = [
        json.dumps(ENVELOPE),
        json.dumps(ENVELOPE["dialogue"]),  # the older bare-list shape
        json.dumps(to_sb_rollout(traj, system_prompt="sys")),
        sn15,
        "{not json",
        json.dumps({"problem_id": "p9", "status": "SUCCESS", "dialogue": [5]}),
    ]
    source = tmp_path / "mixed.jsonl"
    source.write_text("\n".join(lines) + "\n")
    out = tmp_path / "c"
    report = build_corpus(CorpusConfig(files=[source], out=out))
    funnel = report.funnel
    assert funnel.input == 6 and funnel.quarantined == 2 and funnel.adds_up
    records = [json.loads(x) for x in (out / "records.jsonl").read_text().splitlines()]
    formats = sorted(r["provenance"]["source_format"] for r in records)
    assert formats == ["chat", "oro_bare", "oro_envelope", "sb_rollout"]
    assert len({r["record_id"] for r in records}) == len(records)
    envelope = next(r for r in records if r["provenance"]["source_format"] == "oro_envelope")
    # Sandbox-side proxy calls: a nonce-valid dispatch requested by the inference entry; no ground truth.
    assert envelope["evidence"]["log_source"] == "envelope" and envelope["labels"]["agentic_richness"] == 1.0
    assert envelope["outcome"] == "code_injected_final"  # no LLM-emitted recommend_product
    quarantine = [json.loads(x) for x in (out / "quarantine.jsonl").read_text().splitlines()]
    assert [q["line"] for q in quarantine] == [5, 6]
    assert quarantine[1]["record"] == "line 6 (problem p9)" and quarantine[1]["field"].startswith(
        "dialogue[0]"
    )


def test_damaged_run_directory_is_reported_not_raised(tmp_path: Path):
    run = tmp_path / "run"
    (run / "agents" / "a").mkdir(parents=True)
    (run / "agents" / "a" / "output.jsonl").write_text(
        json.dumps(ENVELOPE) + "\n{torn\n" + json.dumps({"x": 1})
    )
    report = build_corpus(CorpusConfig(run_dirs=[run], out=tmp_path / "c"))
    funnel = report.funnel
    assert funnel.input == 3 and funnel.quarantined == 2 and funnel.adds_up
    assert any("config.yaml: missing" in note for note in report.notes)
    record = json.loads((tmp_path / "c" / "records.jsonl").read_text().splitlines()[0])
    # The trusted log is missing: lost evidence, its own reason (an honest trajectory is not called forged).
    assert record["outcome"] == "proxy_log_missing" and record["labels"]["success"] is None
    assert funnel.rejected["proxy_log_missing"] == 1 and funnel.rejected["forged_log"] == 0


def test_a_trusted_log_that_is_not_a_file_is_missing_evidence(tmp_path: Path):
    """A folder where the problem's trusted log should be reads as a missing log (not an error)."""
    from shoparena.arena.layout import ArenaRun

    run = tmp_path / "run"
    (run / "agents" / "a").mkdir(parents=True)
    (run / "agents" / "a" / "output.jsonl").write_text(json.dumps(ENVELOPE) + "\n")
    ArenaRun.at(run).proxy_log_path("a", ENVELOPE["problem_id"]).mkdir(parents=True)
    build_corpus(CorpusConfig(run_dirs=[run], out=tmp_path / "c"))
    record = json.loads((tmp_path / "c" / "records.jsonl").read_text().splitlines()[0])
    assert record["outcome"] == "proxy_log_missing"
    assert record["evidence"]["proxy_log_problem"].endswith(": missing")


def test_a_torn_run_config_is_an_error_naming_it(tmp_path: Path):
    run = tmp_path / "run"
    (run / "agents" / "a").mkdir(parents=True)
    (run / "config.yaml").write_text(": not yaml : [")
    (run / "agents" / "a" / "output.jsonl").write_text(json.dumps(ENVELOPE) + "\n")
    with pytest.raises(RunFileError, match=r"run/config\.yaml:1: not valid YAML"):
        build_corpus(CorpusConfig(run_dirs=[run], out=tmp_path / "c"))


def test_records_keep_the_assistants_reasoning_apart_from_its_content(tmp_path: Path):
    """A tagged step's think reaches the record as ``reasoning_content`` (the judge and a planning student
    read it); the content stays what the step said to the user."""
    traj = from_oro_envelope(ENVELOPE)
    thinks = [s.think for s in traj.steps]
    source = tmp_path / "one.jsonl"
    source.write_text(json.dumps(ENVELOPE) + "\n")
    build_corpus(CorpusConfig(files=[source], out=tmp_path / "c"))
    (record,) = [json.loads(x) for x in (tmp_path / "c" / "records.jsonl").read_text().splitlines()]
    assistants = [m for m in record["messages"] if m["role"] == "assistant"]
    assert thinks and [m["reasoning_content"] for m in assistants] == [t or None for t in thinks]
    assert all(m["content"] in ("", None) for m in assistants)
