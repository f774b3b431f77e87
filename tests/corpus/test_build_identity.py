"""A corpus directory knows its inputs: another race into the same --out is refused (or, with --restart,
built from scratch), never served from the old race's cache; an --out over or inside an input is refused
before the first byte."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from corpus_helpers import SN15_ROWS
from typer.testing import CliRunner

from sandbox_marks import needs_bwrap
from shoparena.cli.main import app


def _snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _build(*args: str):
    return CliRunner().invoke(app, ["corpus", "build", *args])


@needs_bwrap
def test_another_race_into_the_same_out_is_refused_then_restarted(firehose_dir: Path, tmp_path: Path):
    race_a = firehose_dir / "race-000"
    race_b = tmp_path / "race-b"
    shutil.copytree(race_a, race_b)
    agent_log = sorted((race_b / "agents").glob("*/output.jsonl"))[0]
    lines = agent_log.read_text().splitlines(keepends=True)
    agent_log.write_text("".join(lines[1:]))  # race B: one trajectory fewer than race A

    out = tmp_path / "c"
    assert _build(str(race_a), "--out", str(out)).exit_code == 0
    input_a = json.loads((out / "report.json").read_text())["funnel"]["input"]
    before = _snapshot(out)

    refused = _build(str(race_b), "--out", str(out))
    assert refused.exit_code == 2
    message = refused.output.strip().splitlines()
    assert len(message) == 1 and "input run_dirs.0: other content" in message[0] and "--restart" in message[0]
    assert _snapshot(out) == before  # refused before the first byte

    restarted = _build(str(race_b), "--out", str(out), "--restart")
    assert restarted.exit_code == 0, restarted.output
    assert json.loads((out / "report.json").read_text())["funnel"]["input"] == input_a - 1
    config = (out / "config.yaml").read_text()
    assert str(race_b) in config and str(race_a) not in config

    # The same content at another path is the same input: accepted, its ingest cache (keyed by content)
    # is reused, and the records are the same.
    moved = tmp_path / "moved"
    shutil.copytree(race_b, moved)
    records = (out / "records.jsonl").read_bytes()
    (cached,) = (out / "work").glob("ingest-*.jsonl")
    stamp = cached.stat().st_mtime_ns
    again = _build(str(moved), "--out", str(out))
    assert again.exit_code == 0, again.output
    assert cached.stat().st_mtime_ns == stamp and (out / "records.jsonl").read_bytes() == records


def test_changed_settings_are_refused_naming_the_key(tmp_path: Path):
    out = tmp_path / "c"
    assert _build("--from", str(SN15_ROWS), "--out", str(out)).exit_code == 0
    config = tmp_path / "corpus.yaml"
    config.write_text("recover: false\n")
    refused = _build("--from", str(SN15_ROWS), "--out", str(out), "--config", str(config))
    assert refused.exit_code == 2 and "recover: true -> false" in refused.output


def test_out_over_or_inside_an_input_is_refused_before_any_write(tmp_path: Path):
    race = tmp_path / "race"
    (race / "agents").mkdir(parents=True)
    (race / "config.yaml").write_text("suite: s.json\n")
    (race / "manifest.json").write_text(json.dumps({"kind": "arena"}))
    before = _snapshot(race)
    for out in (race, race / "agents", race / "agents" / "new"):
        result = _build(str(race), "--out", str(out))
        assert result.exit_code == 2, (out, result.output)
        assert "input" in result.output and "Traceback" not in result.output
        assert _snapshot(race) == before and not (race / "agents" / "new").exists()

    # A corpus rebuilt from its own records.jsonl into itself: refused, the input keeps every line.
    corpus = tmp_path / "d"
    assert _build("--from", str(SN15_ROWS), "--out", str(corpus)).exit_code == 0
    records = corpus / "records.jsonl"
    kept = records.read_bytes()
    result = _build("--from", str(records), "--out", str(corpus))
    assert result.exit_code == 2 and "holds the input" in result.output
    assert records.read_bytes() == kept


def test_out_of_another_kind_or_a_file_is_refused(tmp_path: Path):
    train_run = tmp_path / "t"
    train_run.mkdir()
    (train_run / "manifest.json").write_text(json.dumps({"kind": "train-sft"}))
    result = _build("--from", str(SN15_ROWS), "--out", str(train_run))
    assert result.exit_code == 2 and "holds a run of kind train-sft, not corpus" in result.output
    assert sorted(p.name for p in train_run.iterdir()) == ["manifest.json"]

    stranger = tmp_path / "mine"
    stranger.mkdir()
    (stranger / "notes.txt").write_text("mine")
    result = _build("--from", str(SN15_ROWS), "--out", str(stranger))
    assert result.exit_code == 2 and "holds no corpus run (notes.txt)" in result.output

    a_file = tmp_path / "file"
    a_file.write_text("x")
    result = _build("--from", str(SN15_ROWS), "--out", str(a_file))
    assert result.exit_code == 2 and "is a file" in result.output and a_file.read_text() == "x"
