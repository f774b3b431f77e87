"""The report reads each evaluation's ``summary.json`` as ``records.eval.EvalSummary``: one that is not one is
that stage's "output missing" naming the file and the field, never a crash and never read as a loose dict."""

from __future__ import annotations

import ast
import json
from pathlib import Path

from report_fixtures import full_run_dir

from shoparena.records.eval import EvalSummary
from shoparena.report import render_report
from shoparena.report.data import load_report_data

REPORT = Path(__file__).resolve().parents[2] / "src" / "shoparena" / "report"


def test_summaries_are_read_as_records(tmp_path) -> None:
    data = load_report_data(full_run_dir(tmp_path))
    assert set(data.evals) == {"base", "student"}
    assert all(isinstance(s, EvalSummary) for s in data.evals.values())
    assert data.evals["student"].shortcut_floor  # the fixture's floor, typed


def test_a_summary_that_is_not_one_is_output_missing_naming_the_field(tmp_path) -> None:
    run = full_run_dir(tmp_path)
    path = run / "eval_student" / "summary.json"
    doc = json.loads(path.read_text())
    del doc["profiles"]
    path.write_text(json.dumps(doc))
    data = load_report_data(run)
    assert set(data.evals) == {"base"}
    assert str(path) in data.missing["eval_student"] and "profiles" in data.missing["eval_student"]
    html = render_report(run, tmp_path / "r.html").read_text()
    assert "output missing" in html and "profiles" in html


def test_the_report_reads_no_summary_as_a_dict() -> None:
    """No ``.get("profiles")`` / ``["shortcut_floor"]`` on a summary or the paired comparison."""
    for path in REPORT.glob("*.py"):
        tree = ast.parse(path.read_text())
        strings = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and type(n.value) is str}
        assert not strings & {"profiles", "shortcut_floor", "decoding", "greedy_asr"}, path.name
