"""The stage DAG: resume, and a changed section re-runs exactly the stages downstream of it.

The stage functions are fast fakes; the DAG, hashing and manifest bookkeeping are the real ones, and the stage
graph is the real pipeline's (same names, deps and config sections)."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from shoparena.pipeline import PipelineConfig, Stage, StageUnavailable, run_dag, run_pipeline
from shoparena.pipeline.dag import topological
from shoparena.pipeline.stages import pipeline_stages
from shoparena.report import render_report
from shoparena.runs import RunDir
from shoparena.runs.identity import RunLockedError


def _quiet() -> Console:
    return Console(file=io.StringIO(), width=120)


def fake_stages(calls: list[str], unavailable: frozenset[str] = frozenset()) -> list[Stage]:
    """The real pipeline graph with each function replaced by one that records its call."""

    def make(name: str):
        def fn(ctx):
            if name in unavailable:
                raise StageUnavailable(f"{name} missing")
            calls.append(name)
            (ctx.dir / "out.txt").write_text(name)
            return {"path": str(ctx.dir / "out.txt"), "inputs": sorted(ctx.inputs)}

        return fn

    return [
        Stage(s.name, s.deps, s.sections, make(s.name), s.title, version=s.version) for s in pipeline_stages()
    ]


ALL = [s.name for s in topological(pipeline_stages())]


def _run(tmp_path, config, calls, **kw):
    run = RunDir(tmp_path / "run", kind="pipeline", config=config)
    return run_dag(fake_stages(calls, **kw), config, run, console=_quiet())


def test_every_stage_runs_once_then_resumes(tmp_path):
    calls: list[str] = []
    results = _run(tmp_path, PipelineConfig(), calls)
    assert calls == ALL
    assert {r.status for r in results} == {"ran"}
    calls.clear()
    again = _run(tmp_path, PipelineConfig(), calls)
    assert calls == []
    assert {r.status for r in again} == {"resumed"}
    assert [r.outputs for r in again] == [r.outputs for r in results]


def test_changing_sft_reruns_sft_and_student_evaluation_only(tmp_path):
    calls: list[str] = []
    _run(tmp_path, PipelineConfig(), calls)
    calls.clear()
    changed = PipelineConfig.model_validate({"sft": {"trainer": {"learning_rate": 1e-5}}})
    results = _run(tmp_path, changed, calls)
    assert calls == ["sft", "eval_student"]
    status = {r.name: r.status for r in results}
    assert status["eval_base"] == "resumed" and status["corpus"] == "resumed"
    # Going back to the old config is a change too: the run follows the config, not the newest record.
    calls.clear()
    _run(tmp_path, PipelineConfig(), calls)
    assert calls == ["sft", "eval_student"]


@pytest.mark.parametrize(
    ("update", "expected"),
    [
        ({"eval": {"samples": 8}}, ["eval_base", "eval_student"]),
        ({"model": {"base": "smollm2"}}, ["model", "sft", "eval_base", "eval_student"]),
        ({"firehose": {"races": 5}}, ["firehose", "judge", "corpus", "sft", "eval_student"]),
        ({"catalog": {"products": 900}}, ALL),
        ({"executor": "ray", "workers": 4}, []),
    ],
)
def test_a_change_reruns_exactly_its_downstream(tmp_path, update, expected):
    calls: list[str] = []
    _run(tmp_path, PipelineConfig(), calls)
    calls.clear()
    _run(tmp_path, PipelineConfig.model_validate(update), calls)
    assert calls == expected


def test_unavailable_stage_blocks_its_downstream_and_runs_later(tmp_path):
    calls: list[str] = []
    results = _run(tmp_path, PipelineConfig(), calls, unavailable=frozenset({"corpus"}))
    status = {r.name: r.status for r in results}
    assert status["corpus"] == "unavailable"
    assert status["sft"] == status["eval_student"] == "blocked"
    assert status["eval_base"] == "ran"
    calls.clear()
    _run(tmp_path, PipelineConfig(), calls)
    assert calls == ["corpus", "sft", "eval_student"]


def test_pipeline_run_writes_summary_and_report_with_fake_stages(tmp_path):
    calls: list[str] = []
    summary = run_pipeline(
        PipelineConfig(), tmp_path / "run", stages=fake_stages(calls), console=_quiet(), report=render_report
    )
    assert set(summary["stages"]) == set(ALL)
    assert (tmp_path / "run" / "report.html").read_text().count('class="notrun"') >= 3


def test_cycles_and_unknown_deps_are_rejected():
    def noop(ctx):
        return {}

    with pytest.raises(ValueError, match="cycle"):
        topological([Stage("a", ("b",), lambda c: {}, noop), Stage("b", ("a",), lambda c: {}, noop)])
    with pytest.raises(ValueError, match="unknown stage 'z'"):
        topological([Stage("a", ("z",), lambda c: {}, noop)])


def test_a_failing_stage_names_itself_and_the_run_resumes_there(tmp_path):
    from shoparena.pipeline.dag import StageFailedError

    calls: list[str] = []
    stages = fake_stages(calls)
    broken = [Stage(s.name, s.deps, s.sections, _boom, s.title) if s.name == "corpus" else s for s in stages]
    run = RunDir(tmp_path / "run", kind="pipeline", config=PipelineConfig())
    with pytest.raises(StageFailedError, match="stage corpus failed: KeyError"):
        run_dag(broken, PipelineConfig(), run, console=_quiet())
    run.close()  # the failed run's process ends here: its lock goes with it
    calls.clear()
    _run(tmp_path, PipelineConfig(), calls)
    assert calls[0] == "corpus" and "catalog" not in calls


def _boom(ctx):
    raise KeyError("firehose")


def test_a_deleted_stage_output_reruns_that_stage_and_its_dependents(tmp_path):
    import shutil

    calls: list[str] = []
    _run(tmp_path, PipelineConfig(), calls)
    shutil.rmtree(tmp_path / "run" / "corpus")  # the manifest still records corpus as done
    from shoparena.pipeline import dry_run

    planned = {row["stage"]: row["done"] for row in dry_run(PipelineConfig(), tmp_path / "run")}
    assert [name for name, done in planned.items() if not done] == ["corpus", "sft", "eval_student"]
    calls.clear()
    results = _run(tmp_path, PipelineConfig(), calls)
    assert calls == ["corpus", "sft", "eval_student"]
    status = {r.name: r.status for r in results}
    assert status["firehose"] == status["eval_base"] == "resumed"
    assert (tmp_path / "run" / "corpus" / "out.txt").read_text() == "corpus"
    calls.clear()
    _run(tmp_path, PipelineConfig(), calls)
    assert calls == []  # and then it resumes again


def test_pipeline_run_into_a_file_or_a_running_directory_is_refused(tmp_path):
    import os
    import subprocess
    import sys
    from pathlib import Path

    from typer.testing import CliRunner

    from shoparena.cli.main import app

    a_file = tmp_path / "file"
    a_file.write_text("mine")
    result = CliRunner().invoke(app, ["pipeline", "run", "--out", str(a_file)])
    assert result.exit_code == 2 and "is a file" in result.output and a_file.read_text() == "mine"
    assert "Traceback" not in result.output

    # A second pipeline on a directory another live process runs in: refused, naming that process.
    busy = tmp_path / "busy"
    code = (
        "import time\nfrom shoparena.runs.identity import RunLock\n"
        f"lock = RunLock({str(busy)!r}).acquire()\nprint('held', flush=True)\ntime.sleep(60)\n"
    )
    src = Path(__file__).resolve().parents[2] / "src"
    env = {**os.environ, "PYTHONPATH": str(src)}
    holder = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        calls: list[str] = []
        with pytest.raises(RunLockedError, match=f"in use by another run \\(pid {holder.pid}\\)"):
            run_pipeline(PipelineConfig(), busy, stages=fake_stages(calls), console=_quiet())
        assert calls == [] and sorted(p.name for p in busy.iterdir()) == ["run.lock"]
    finally:
        holder.kill()
        holder.wait()
    calls = []
    run_pipeline(PipelineConfig(), busy, stages=fake_stages(calls), console=_quiet())
    assert calls == ALL  # the holder is gone: its lock is stale and the run goes ahead


def test_restart_reruns_every_stage_and_keeps_what_is_not_the_runs(tmp_path):
    out = tmp_path / "run"
    calls: list[str] = []
    run_pipeline(PipelineConfig(), out, stages=fake_stages(calls), console=_quiet())
    (out / "my-notes.txt").write_text("mine")
    (out / "corpus" / "stale.txt").write_text("left by an older stage")
    calls.clear()
    run_pipeline(PipelineConfig(), out, stages=fake_stages(calls), console=_quiet(), restart=True)
    assert calls == ALL
    assert (out / "my-notes.txt").read_text() == "mine" and not (out / "corpus" / "stale.txt").exists()


def test_a_stage_reads_its_inputs_as_records_and_an_unreadable_record_runs_again(tmp_path):
    from shoparena.pipeline.outputs import CatalogOutput, ModelOutput

    seen: list[str] = []

    def catalog(ctx):
        return CatalogOutput(path=str(ctx.dir), summary={"products": 3})

    def model(ctx):
        seen.append(ctx.input(CatalogOutput).path)
        return ModelOutput(path=ctx.input(CatalogOutput).path)

    stages = [
        Stage("catalog", (), lambda c: c.catalog, catalog, output=CatalogOutput),
        Stage("model", ("catalog",), lambda c: c.model, model, output=ModelOutput),
    ]
    config = PipelineConfig()

    def once(edit=None):
        run = RunDir(tmp_path / "run", kind="pipeline", config=config)
        try:
            if edit is not None:
                edit(run)
            return run_dag(stages, config, run, console=_quiet())
        finally:
            run.close()

    def unreadable(run):
        run.manifest.stages["catalog"].outputs.pop("summary")  # a record its class cannot read

    first = once()
    assert isinstance(first[0].outputs, CatalogOutput) and seen == [str(tmp_path / "run" / "catalog")]
    again = once()
    assert [r.status for r in again] == ["resumed", "resumed"] and again[1].outputs == first[1].outputs
    assert [r.status for r in once(unreadable)] == ["ran", "ran"]


def test_a_stage_version_changes_its_hash_and_its_dependents_only():
    from dataclasses import replace

    from shoparena.pipeline.dag import stage_hash

    def hashes(stages):
        out: dict[str, str] = {}
        for stage in topological(stages):
            out[stage.name] = stage_hash(stage, PipelineConfig(), out)
        return out

    stages = pipeline_stages()
    before = hashes(stages)
    bumped = hashes([replace(s, version=s.version + 1) if s.name == "corpus" else s for s in stages])
    changed = {name for name in before if before[name] != bumped[name]}
    assert changed == {"corpus", "sft", "eval_student"}
    unversioned = hashes([replace(s, version=0) for s in stages])
    # Version 0 adds nothing: a stage that never changed its output keeps the hash it always had.
    assert unversioned["catalog"] == before["catalog"] and unversioned["partitions"] != before["partitions"]
