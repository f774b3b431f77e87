"""The real pipeline on a tiny config: real stages run, resume, and report what is not available yet."""

from __future__ import annotations

import io
import json

import pytest
from rich.console import Console

from shoparena.pipeline import PipelineConfig, PipelineIncompleteError, Stage, StageUnavailable, run_pipeline
from shoparena.pipeline.layout import PipelineRun, PipelineSummary
from shoparena.pipeline.outputs import PartitionsOutput, ReferenceOutput
from shoparena.pipeline.stages import pipeline_stages
from shoparena.report import render_report
from shoparena.runs import RunManifest as Manifest
from shoparena.runs.files import RunFileError

TINY = {
    "catalog": {"products": 600, "workers": 1, "seed": 5},
    "bank": {
        "problems": 24,
        "public_size": 4,
        "public_versions": 1,
        "reserve": 4,
        "heldout": 6,
        "hidden": 2,
        "seed": 5,
    },
    "workers": 1,
}
REAL = ["catalog", "index", "bank", "partitions", "reference"]


def _console() -> Console:
    return Console(file=io.StringIO(), width=120)


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("pipeline") / "run"
    summary = run_pipeline(
        PipelineConfig.model_validate(TINY),
        out,
        stages=light_stages(),
        console=_console(),
        report=render_report,
    )
    return out, summary


def light_stages() -> list[Stage]:
    """The real stages that need no corpus, training or evaluation package (seconds on a tiny config)."""
    return [s for s in pipeline_stages() if s.name in REAL]


def test_real_stages_run_and_record_their_hashes(tiny_run):
    out, summary = tiny_run
    manifest = Manifest.model_validate_json((out / "manifest.json").read_text())
    assert list(manifest.stages)[: len(REAL)] == REAL
    for name in REAL:
        assert summary["stages"][name]["status"] == "ran"
        assert manifest.stages[name].config_hash == summary["stages"][name]["hash"]
    pools = manifest.stages["partitions"].outputs["pools"]
    assert {"public_v1", "heldout", "hidden"} <= set(pools)
    heldout = json.loads((out / "partitions" / "heldout.full.json").read_text())
    envelopes = (out / manifest.stages["reference"].outputs["path"]).read_text().splitlines()
    assert len(envelopes) == len(heldout) == pools["heldout"]["problems"] > 0
    scores = manifest.stages["reference"].outputs["scores"]["strict"]
    assert scores["n"] == len(heldout) and 0 <= scores["successes"] <= len(heldout)


def test_rerun_resumes_without_redoing_anything(tiny_run):
    out, _ = tiny_run
    manifest = Manifest.model_validate_json((out / "manifest.json").read_text())
    reference = out / manifest.stages["reference"].outputs["path"]
    before = reference.read_text()
    report_mtime = (out / "report.html").stat().st_mtime_ns
    again = run_pipeline(
        PipelineConfig.model_validate(TINY),
        out,
        stages=light_stages(),
        console=_console(),
        report=render_report,
    )
    assert {again["stages"][n]["status"] for n in REAL} == {"resumed"}
    after = Manifest.model_validate_json((out / "manifest.json").read_text())
    assert {k: v.completed_at for k, v in after.stages.items()} == {
        k: v.completed_at for k, v in manifest.stages.items()
    }
    assert reference.read_text() == before
    assert (out / "report.html").stat().st_mtime_ns == report_mtime  # nothing changed: not even re-rendered


def test_the_summary_reads_back_as_a_record(tiny_run):
    out, _ = tiny_run
    summary = run_pipeline(  # resumes: the summary of this run is the one on disk
        PipelineConfig.model_validate(TINY),
        out,
        stages=light_stages(),
        console=_console(),
        report=render_report,
    )
    read = PipelineRun.at(out).summary()
    assert isinstance(read, PipelineSummary)
    assert read == PipelineSummary.model_validate(json.loads(json.dumps(summary, default=str)))
    assert read.stages["reference"].status == "resumed" and read.report == str(out / "report.html")
    assert read.report_fingerprint and read.stages["reference"].outputs["path"]


def test_a_summary_that_is_not_a_record_names_file_and_field(tmp_path):
    (tmp_path / "summary.json").write_text(
        json.dumps({"run_dir": "x", "preset": "default", "stages": {"bank": {"outputs": {}}}, "seconds": 1}),
        encoding="utf-8",
    )
    with pytest.raises(RunFileError, match=r"summary\.json: not a PipelineSummary: stages\.bank\.status"):
        PipelineRun.at(tmp_path).summary()
    assert PipelineRun.at(tmp_path / "none").summary() is None


def test_missing_stage_is_reported_in_summary_and_report_and_strict_fails(tmp_path, tiny_run):
    out, _ = tiny_run

    def missing(ctx):
        raise StageUnavailable("shoparena.corpus is not on this checkout (issue 11)")

    stages = [*light_stages(), Stage("corpus", ("partitions",), lambda c: c.corpus, missing)]
    summary = run_pipeline(
        PipelineConfig.model_validate(TINY), out, stages=stages, console=_console(), report=render_report
    )
    assert summary["stages"]["corpus"]["status"] == "unavailable"
    html = (out / "report.html").read_text()
    assert "reference planner" in html and "issue 11" in html
    with pytest.raises(PipelineIncompleteError, match="corpus: unavailable"):
        run_pipeline(
            PipelineConfig.model_validate(TINY),
            out,
            stages=stages,
            console=_console(),
            report=render_report,
            strict=True,
        )


def test_stage_outputs_read_back_as_their_records(tiny_run):
    out, _ = tiny_run
    manifest = Manifest.model_validate_json((out / "manifest.json").read_text())
    recorded = manifest.stages["partitions"].outputs
    partitions = PartitionsOutput.model_validate(recorded)
    assert partitions.record() == recorded  # what a resume reads is what was written, key for key
    assert partitions.heldout_path == "./partitions/heldout.full.json"
    assert "./partitions/heldout.full.json" not in partitions.training_side_paths()
    reference = ReferenceOutput.model_validate(manifest.stages["reference"].outputs)
    assert reference.scores["strict"].n == partitions.pools["heldout"].problems
    assert isinstance(reference.scores["shoppingbench"].per_category, dict)


def test_until_runs_the_named_stage_and_what_it_reads_and_a_full_run_resumes_them(tmp_path):
    out = tmp_path / "run"
    summary = run_pipeline(
        PipelineConfig.model_validate(TINY),
        out,
        stages=light_stages(),
        console=_console(),
        report=render_report,
        until="partitions",
        strict=True,  # the stages left out are not "missing": strict does not fail on them
    )
    statuses = {name: s["status"] for name, s in summary["stages"].items()}
    assert statuses == {
        "catalog": "ran",
        "index": "ran",
        "bank": "ran",
        "partitions": "ran",
        "reference": "blocked",
    }
    assert summary["stages"]["reference"]["reason"] == "not selected"
    full = run_pipeline(
        PipelineConfig.model_validate(TINY),
        out,
        stages=light_stages(),
        console=_console(),
        report=render_report,
    )
    statuses = {name: s["status"] for name, s in full["stages"].items()}
    assert statuses == {
        "catalog": "resumed",
        "index": "resumed",
        "bank": "resumed",
        "partitions": "resumed",
        "reference": "ran",
    }


def test_until_an_unknown_stage_is_refused_before_anything_runs(tmp_path):
    with pytest.raises(ValueError, match="unknown stage 'sfft'"):
        run_pipeline(
            PipelineConfig.model_validate(TINY),
            tmp_path / "run",
            stages=light_stages(),
            console=_console(),
            report=render_report,
            until="sfft",
        )
    assert not (tmp_path / "run").exists()
