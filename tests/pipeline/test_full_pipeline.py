"""Every real stage end to end on a tiny config (firehose, corpus, SFT of the tiny student, both evaluations,
report): minutes on 2 cores, so ``slow``. The fast DAG tests use fakes; this one uses nothing fake."""

from __future__ import annotations

import io
import json

import pytest
from pipeline_tiny import TINY
from rich.console import Console

from shoparena.pipeline import PipelineConfig, run_pipeline
from shoparena.report import render_report

pytest.importorskip("trl", reason="the train extra is needed for the SFT stage")


@pytest.mark.slow
def test_every_stage_runs_and_the_report_shows_base_and_student(tmp_path):
    console = Console(file=io.StringIO(), width=120)
    summary = run_pipeline(
        PipelineConfig.model_validate(TINY),
        tmp_path / "run",
        console=console,
        report=render_report,
        strict=True,
    )
    assert {r["status"] for r in summary["stages"].values()} == {"ran"}
    student = json.loads(next((tmp_path / "run" / "eval_student").glob("*/summary.json")).read_text())
    assert student["label"] == "held_out"  # leak-audited against the corpus it was trained on
    html = (tmp_path / "run" / "report.html").read_text()
    assert "student" in html and "base" in html and "not run" not in html.split("Provenance")[0]
    again = run_pipeline(
        PipelineConfig.model_validate(TINY), tmp_path / "run", console=console, report=render_report
    )
    assert {r["status"] for r in again["stages"].values()} == {"resumed"}
