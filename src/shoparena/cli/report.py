"""``shoparena report RUNDIR``: the self-contained HTML report of a pipeline run directory."""

from __future__ import annotations

from pathlib import Path

import typer

from shoparena.pipeline.config import ReportSection
from shoparena.pipeline.layout import REPORT_HTML_NAME, PipelineRun


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

    target = out or PipelineRun.at(run_dir).report_html
    if target.is_dir():
        typer.echo(f"error: --out {target} is a directory; give the HTML file to write", err=True)
        raise typer.Exit(code=2)
    try:
        path = render_report(run_dir, target, examples=examples)
    except (OSError, ValueError) as exc:  # OSError: a stage output path the system cannot open
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(code=2) from None
    typer.echo(str(path))


def register(app: typer.Typer) -> None:
    app.command("report")(report)
