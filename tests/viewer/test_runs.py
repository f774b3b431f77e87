"""The viewer reads corpus and eval run directories through their typed records."""

from __future__ import annotations

import json
import urllib.request

import pytest
from typer.testing import CliRunner

from shoparena.cli.main import app
from shoparena.runs.manifest import RunManifest, write_manifest
from shoparena.viewer import ViewerError, ViewerServer, episode_detail, load_runs


def test_eval_rows_and_detail_with_the_verdict_checks(eval_runs) -> None:
    (run,) = load_runs([eval_runs[0]])
    assert run.kind == "eval" and len(run.items) == 4
    row = run.items[0].row
    assert row.outcome in ("success", "failure") and row.success == (row.outcome == "success")
    detail = episode_detail(run.items[0])
    roles = [m["role"] for m in detail["messages"]]
    assert roles[0] in ("system", "user") and "assistant" in roles and "tool" in roles
    checks = detail["checks"]
    assert checks is not None and checks["success"] == row.success and checks["checks"]


def test_corpus_rows_carry_judge_and_richness_per_dispatch(corpus_run) -> None:
    (run,) = load_runs([corpus_run])
    assert [i.row.outcome for i in run.items] == ["kept", "low_richness"]
    detail = episode_detail(run.items[1])
    assert detail["judge"]["explanation"] == "Gate 4 failed: one candidate."
    assert detail["richness"]["dispatches"] == [
        {"index": 1, "tool": "find_product", "proved": True},
        {"index": 2, "tool": "recommend_product", "proved": False},
    ]


def test_unknown_directories_are_one_line_errors(tmp_path) -> None:
    with pytest.raises(ViewerError, match="not a run directory"):
        load_runs([tmp_path])
    (tmp_path / "records.jsonl").write_text('{"record_id": 1}\n')
    # The kind comes from the manifest, never guessed from the files a directory happens to hold.
    with pytest.raises(ViewerError, match=r"not a run directory.*no manifest"):
        load_runs([tmp_path])
    write_manifest(RunManifest(kind="pipeline"), tmp_path)
    with pytest.raises(
        ViewerError, match="a pipeline run directory with no arena, corpus or evaluation run yet"
    ):
        load_runs([tmp_path])
    write_manifest(RunManifest(kind="corpus"), tmp_path)
    with pytest.raises(ViewerError, match=r"records.jsonl:1: not a CorpusRecord"):
        load_runs([tmp_path])
    result = CliRunner().invoke(app, ["view", str(tmp_path)])
    assert (
        result.exit_code == 2 and result.stderr.startswith("error: ") and len(result.stderr.splitlines()) == 1
    )


def test_server_serves_the_page_and_details(eval_runs, corpus_run) -> None:
    with ViewerServer([*eval_runs, corpus_run]) as server:
        page = urllib.request.urlopen(server.url, timeout=10).read().decode()
        assert "planner-12" in page and "planner-2" in page and "low_richness" in page
        detail = json.loads(urllib.request.urlopen(server.url + "api/episode/2-0", timeout=10).read())
        assert detail["row"]["kind"] == "corpus"
        with pytest.raises(urllib.error.HTTPError) as missing:
            urllib.request.urlopen(server.url + "api/episode/9-9", timeout=10)
        assert missing.value.code == 404
