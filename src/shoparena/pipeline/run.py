"""``shoparena pipeline run``: the paper's whole pipeline in one resumable run directory, then its report
(rendered by the renderer the command hands over: the pipeline imports no report code)."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from rich.console import Console
from rich.table import Table

import shoparena
from shoparena.pipeline.config import PipelineConfig
from shoparena.pipeline.dag import Stage, StageResult, plan, run_dag, upstream_of
from shoparena.pipeline.layout import REPORT_HTML_NAME, PipelineRun
from shoparena.pipeline.stages import pipeline_stages
from shoparena.runs import RunDir, read_manifest
from shoparena.runs.identity import RunKind


class PipelineIncompleteError(RuntimeError):
    """``strict`` was asked and some stage did not run (unavailable or blocked)."""


class ReportRenderer(Protocol):
    """Writes the HTML report of a pipeline run directory (``shoparena.report.render_report``: the command
    hands it to :func:`run_pipeline`, so the pipeline imports no report code)."""

    def __call__(
        self,
        run_dir: str | Path,
        out: str | Path,
        *,
        notes: Mapping[str, str] | None = ...,
        examples: int = ...,
    ) -> Path: ...


def dry_run(config: PipelineConfig, out_dir: str | Path | None = None) -> list[dict[str, Any]]:
    """The plan: every stage with its hash and whether ``out_dir`` already holds it. Writes nothing."""
    manifest = None
    if out_dir is not None and PipelineRun.at(out_dir).manifest_path.exists():
        manifest = read_manifest(out_dir)
    stages = {s.name: s for s in pipeline_stages()}
    return [
        {"stage": name, "hash": h, "done": done, "deps": list(stages[name].deps)}
        for name, h, done in plan(list(stages.values()), config, manifest, Path(out_dir) if out_dir else None)
    ]


def run_pipeline(
    config: PipelineConfig,
    out_dir: str | Path,
    *,
    console: Console | None = None,
    stages: Sequence[Stage] | None = None,
    strict: bool = False,
    report: ReportRenderer | None = None,
    restart: bool = False,
    until: str | None = None,
) -> dict[str, Any]:
    """Run (or resume) every stage, render ``report.html`` with ``report`` and return the summary.

    Args:
        stages: The DAG (default: :func:`pipeline_stages`); tests pass fast fakes through the same DAG code.
        strict: Raise when a stage is unavailable or blocked instead of reporting it.
        report: Renders ``out_dir/report.html`` at the end (``shoparena.report.render_report``; cheap, from
            what exists; None: no report).
        restart: Start over: clear every stage's directory, the report and the bookkeeping first.
        until: Run only this stage and the stages it reads (a pilot stops at ``sft``, before any held-out
            evaluation); the others are reported "not selected" and a later full run resumes what ran.

    Raises:
        RunDirError: ``out_dir`` is a file or holds another kind of run; :class:`RunLockedError` while
            another live ``pipeline run`` holds it (nothing is written either way).
    """
    console = console or Console()
    started = time.time()
    stages = list(stages if stages is not None else pipeline_stages())
    only = sorted(upstream_of(stages, until)) if until is not None else None
    # The identity is the kind alone (RunDir's default): a changed config is the DAG's business (stage
    # hashes re-run exactly the stages it touches), so it resumes instead of being refused.
    run = RunDir(
        out_dir,
        kind=RunKind.PIPELINE,
        config=config,
        own=[*(stage.name for stage in stages), REPORT_HTML_NAME],
        restart=restart,
    )
    try:
        return _run(run, config, stages, console, started, strict=strict, report=report, only=only)
    finally:
        run.close()


def _run(
    run: RunDir,
    config: PipelineConfig,
    stages: list[Stage],
    console: Console,
    started: float,
    *,
    strict: bool,
    report: ReportRenderer | None,
    only: list[str] | None = None,
) -> dict[str, Any]:
    results = run_dag(stages, config, run, console=console, only=only)
    summary: dict[str, Any] = {
        "run_dir": str(run.path),
        "preset": config.preset,
        "stages": {r.name: _result_dict(r) for r in results},
    }
    if report is not None:
        summary["report"], summary["report_fingerprint"] = _report(report, run, config, results, console)
    summary["seconds"] = round(time.time() - started, 2)
    run.write_summary(summary)
    _print_table(console, results)
    if report is not None:
        console.print(f"[green]report: {summary['report']}")
    if strict:
        missing = [
            r for r in results if r.status not in {"ran", "resumed"} and (only is None or r.name in only)
        ]
        if missing:
            raise PipelineIncompleteError("; ".join(f"{r.name}: {r.status} ({r.reason})" for r in missing))
    return summary


def _report(
    render: ReportRenderer, run: RunDir, config: PipelineConfig, results: list[StageResult], console: Console
) -> tuple[str, str]:
    """Render report.html unless the last render saw the same stages, notes and settings (instant resume)."""
    from shoparena.runs.files import RunFileError
    from shoparena.runs.rundir import config_hash

    notes = {r.name: f"{r.status}: {r.reason}" for r in results if r.status not in {"ran", "resumed"}}
    fingerprint = config_hash(
        {
            "stages": {r.name: r.stage_hash for r in results if r.status in {"ran", "resumed"}},
            "notes": notes,
            "report": config.report.model_dump(),
            "version": shoparena.__version__,
        }
    )
    layout = PipelineRun.at(run.path)
    path = layout.report_html
    if path.exists():
        try:
            previous = layout.summary()
        except (OSError, RunFileError):
            previous = None  # an unreadable old summary only costs a re-render
        if previous is not None and previous.report_fingerprint == fingerprint:
            console.print("[dim]report: unchanged")
            return str(path), fingerprint
    render(run.path, path, notes=notes, examples=config.report.examples)
    return str(path), fingerprint


def _result_dict(result: StageResult) -> dict[str, Any]:
    return {
        "status": result.status,
        "hash": result.stage_hash,
        "seconds": result.seconds,
        "reason": result.reason,
        "outputs": result.outputs.record(),
    }


def _print_table(console: Console, results: list[StageResult]) -> None:
    table = Table("stage", "status", "hash", "seconds", "note", title="pipeline")
    colors = {"ran": "green", "resumed": "dim", "unavailable": "yellow", "blocked": "yellow"}
    for r in results:
        color = colors.get(r.status, "red")
        table.add_row(r.name, f"[{color}]{r.status}", r.stage_hash or "", f"{r.seconds:.1f}", r.reason[:80])
    console.print(table)
