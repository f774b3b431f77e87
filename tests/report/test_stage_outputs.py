"""The report reads stage outputs as the records of ``pipeline.outputs``: a record its class cannot read is
"output missing" naming the manifest, the stage and the field, never a crash and never silently empty."""

from __future__ import annotations

import json

from report_fixtures import full_run_dir

from shoparena.pipeline.layout import PipelineRun
from shoparena.pipeline.outputs import CorpusOutput, StudentEvalOutput
from shoparena.report import render_report
from shoparena.report.data import load_report_data


def _section(html: str, key: str) -> str:
    return html.split(f'<section id="{key}">')[1].split("</section>")[0]


def test_stage_outputs_read_back_as_their_records(tmp_path) -> None:
    run = full_run_dir(tmp_path)
    student = PipelineRun.open(run).stage_output(StudentEvalOutput)
    assert isinstance(student, StudentEvalOutput) and student.vs_shortcut is not None
    assert student.vs_shortcut.greedy.b_only == 8
    data = load_report_data(run)
    assert isinstance(data.output(CorpusOutput), CorpusOutput) and data.missing == {}
    assert [race.race_id for race in data.races or []] == ["race-1", "race-2"]


def test_a_stage_record_without_a_field_is_output_missing_naming_it(tmp_path) -> None:
    run = full_run_dir(tmp_path)
    manifest = json.loads((run / "manifest.json").read_text())
    del manifest["stages"]["corpus"]["outputs"]["funnel"]
    (run / "manifest.json").write_text(json.dumps(manifest))
    html = render_report(run, tmp_path / "r.html").read_text()
    funnel = _section(html, "funnel")
    assert "output missing" in funnel
    why = "manifest.json: stage corpus&#x27;s outputs are not a CorpusOutput (funnel: Field required)"
    assert why in funnel
    assert "not run" not in _section(html, "races")  # the other stages still render
