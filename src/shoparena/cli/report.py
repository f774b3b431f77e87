"""``shoparena report RUNDIR``: the self-contained HTML report of a pipeline run directory."""

from __future__ import annotations

from pathlib import Path

import typer

from shoparena.pipeline.config import ReportSection
from shoparena.pipeline.layout import REPORT_HTML_NAME, PipelineRun
from shoparena.runs.output import OutputPathError, check_output, text_with


def report(
    run_dir: Path = typer.Argument(..., exists=True, file_okay=False, help="A pipeline run directory."),
    out: Path | None = typer.Option(
        None, "--out", "-o", help=f"HTML file (default: RUNDIR/{REPORT_HTML_NAME})."
    ),
    examples: int = typer.Option(
        ReportSection.model_fields["examples"].default,
        "--examples",
        min=0,
        help="Example trajectories to render.",
    ),
) -> None:
    """Render funnel, richness, judge bins, races, ASR with CIs, pass@k, examples and provenance."""
    from shoparena.report import render_report

    layout = PipelineRun.at(run_dir)
    if not layout.has_manifest():
        typer.echo(f"error: {run_dir}: no {layout.manifest_path.name} (not a run directory)", err=True)
        raise typer.Exit(code=2)
    target = out or layout.report_html
    # An HTML page directly in the run directory is the report's own (report.html, or another name); any
    # other path inside the run is refused, as are links and files this command did not write.
    own_page = target.suffix == ".html" and target.resolve().parent == run_dir.resolve()
    try:
        check_output(
            target,
            [run_dir],
            allow=[layout.report_html, *([target] if own_page else [])],
            own=text_with(b"<!DOCTYPE html", b"shoparena"),
        )
    except OutputPathError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(code=2) from None
    try:
        path = render_report(run_dir, target, examples=examples)
    except (OSError, ValueError) as exc:  # OSError: a stage output path the system cannot open
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(code=2) from None
    typer.echo(str(path))


def register(app: typer.Typer) -> None:
    app.command("report")(report)
