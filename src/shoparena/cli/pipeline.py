"""``shoparena pipeline run``: catalog → … → SFT → evaluation → report in one resumable run directory."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import typer

pipeline_app = typer.Typer(help="The whole pipeline in one resumable run directory.", no_args_is_help=True)


@pipeline_app.command("run")
def run(
    out: Path = typer.Option(
        Path("runs/quickstart"), "--out", "-o", help="Run directory (re-running resumes)."
    ),
    config: Path | None = typer.Option(
        None, "--config", "-c", exists=True, dir_okay=False, help="pipeline.yaml (overlaid on the preset)."
    ),
    preset: str = typer.Option(
        "default",
        "--preset",
        help="default (the embedded run, ~8 min on 2 cores) | small (a few minutes: try a change) | student "
        "(an hour of CPU training) | paper (GPU, vLLM); `shoparena pipeline presets` lists every one.",
    ),
    executor: str | None = typer.Option(None, "--executor", help="process | ray (overrides the config)."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Validate the config and print the stage plan."),
    strict: bool = typer.Option(False, "--strict", help="Fail when a stage is unavailable or blocked."),
    restart: bool = typer.Option(
        False, "--restart", help="Start --out over (clears its stage directories) instead of resuming it."
    ),
    until: str | None = typer.Option(
        None,
        "--until",
        help="Run only this stage and what it reads (e.g. sft: a pilot without held-out eval).",
    ),
) -> None:
    """Run (or resume) every stage whose config or inputs changed, then write RUNDIR/report.html."""
    from shoparena.pipeline import (
        PipelineConfigError,
        PipelineIncompleteError,
        load_pipeline_config,
        run_pipeline,
    )
    from shoparena.pipeline import (
        dry_run as plan_run,
    )
    from shoparena.pipeline.dag import StageFailedError

    if out.exists() and not out.is_dir():
        typer.echo(f"error: --out {out} is a file, not a run directory", err=True)
        raise typer.Exit(code=2)
    try:
        cfg = load_pipeline_config(config, preset=preset)
        if executor is not None:
            cfg = cfg.model_validate({**cfg.model_dump(), "executor": executor})
    except (PipelineConfigError, ValueError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(code=2) from None
    if until is not None:
        from shoparena.pipeline.dag import upstream_of
        from shoparena.pipeline.stages import pipeline_stages

        try:
            upstream_of(pipeline_stages(), until)
        except ValueError as exc:
            typer.echo(f"error: --until: {exc}", err=True)
            raise typer.Exit(code=2) from None
    from shoparena.pipeline.checks import size_warnings

    for line in size_warnings(cfg):  # the run goes on with less; say so before its minutes are spent
        typer.echo(f"warning: {line}", err=True)
    if dry_run:
        typer.echo(json.dumps({"config": cfg.model_dump(mode="json"), "plan": plan_run(cfg, out)}, indent=1))
        return
    try:
        from shoparena.report import render_report

        run_pipeline(cfg, out, strict=strict, restart=restart, until=until, report=render_report)
    except PipelineIncompleteError as exc:
        typer.echo(f"error: pipeline incomplete: {exc}", err=True)
        raise typer.Exit(code=1) from None
    except StageFailedError as exc:
        logging.getLogger(__name__).debug("stage failure", exc_info=exc.__cause__)
        typer.echo(f"error: {exc} (in {out}: re-running resumes; -v shows the traceback)", err=True)
        raise typer.Exit(code=1) from None


@pipeline_app.command("presets")
def presets() -> None:
    """List the pipeline presets (``--preset NAME``) with their sizes."""
    from shoparena.pipeline.config import PRESETS, load_pipeline_config

    for name in PRESETS:
        cfg = load_pipeline_config(preset=name)
        typer.echo(
            f"{name}: {cfg.catalog.products:,} products, {cfg.bank.problems:,} problems "
            f"({cfg.bank.heldout} held out), {cfg.firehose.races} race(s) x {cfg.firehose.problems_per_race} "
            f"problems, model {cfg.model.base}, sft preset {cfg.sft.preset}"
        )


def register(app: typer.Typer) -> None:
    app.add_typer(pipeline_app, name="pipeline")
