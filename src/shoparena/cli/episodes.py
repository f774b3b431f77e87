"""``shoparena episodes ...``: run in-process agents over a suite (banks: ``shoparena suite synth``)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console

from shoparena.cli._guards import refuse_output_over_input
from shoparena.records.actors import ActorRole, describe
from shoparena.runs.envelopes import ENVELOPE_LOG_NAME

episodes_app = typer.Typer(
    help="Run in-process agents (e.g. the rule-based planner) over suites.", no_args_is_help=True
)
console = Console(stderr=True)


@episodes_app.command("run")
def run(
    agent: str = typer.Option("planner", "--agent", help=f"In-process agent: {describe(ActorRole.AGENT)}."),
    suite: Path = typer.Option(
        ..., "--suite", exists=True, dir_okay=False, help="SB JSONL or ORO suite JSON."
    ),
    index: Path = typer.Option(..., "--index", exists=True, file_okay=False, help="Search index directory."),
    out: Path | None = typer.Option(None, "--out", dir_okay=False, help=f"{ENVELOPE_LOG_NAME} to append to."),
    run_dir: Path | None = typer.Option(None, "--run-dir", file_okay=False, help="Run directory instead."),
    workers: int = typer.Option(1, "--workers", min=1, help="Worker threads."),
    max_steps: int = typer.Option(30, "--max-steps", min=1, help="Step cap per episode."),
    kb: list[Path] = typer.Option(
        [],
        "--kb",
        exists=True,
        dir_okay=False,
        help="Extra knowledge pages, JSONL {url,title,content} (repeatable); SUITE.knowledge.jsonl beside "
        "the suite and catalog-derived pages are always used.",
    ),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Rich progress bar."),
) -> None:
    """Run an agent over a suite, writing ORO envelopes; resumes (skips problems already in the output)."""
    from shoparena.agents import get_agent
    from shoparena.env.episodes import run_episodes, run_episodes_dir, suite_hash, suite_knowledge
    from shoparena.records.problem import Intent
    from shoparena.search import SearchIndex
    from shoparena.suites.loaders import load_suite

    if (out is None) == (run_dir is None):
        raise typer.BadParameter("give exactly one of --out and --run-dir")
    refuse_output_over_input(out, suite, index, *kb)
    refuse_output_over_input(run_dir, suite, index, *kb, option="--run-dir", folder=True)
    try:
        the_agent = get_agent(agent)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    problems, summary = load_suite(suite)
    if summary.quarantined:
        console.print(f"[yellow]warning:[/yellow] {summary.quarantined} suite record(s) quarantined")
    engine = SearchIndex.open(index)
    # Web problems need pages: the catalog's, the bank's sidecar (suite synth writes it) and --kb files.
    knowledge = suite_knowledge(engine, suite, kb) if any(p.intent is Intent.WEB for p in problems) else None
    if run_dir is not None:
        config = {
            "agent": agent,
            "suite": str(suite),
            "index": str(index),
            "workers": workers,
            "max_steps": max_steps,
            "kb": [str(p) for p in kb],
        }
        result = run_episodes_dir(
            the_agent,
            problems,
            engine,
            run_dir,
            config=config,
            suite_hash=suite_hash(problems),
            workers=workers,
            progress=progress,
            max_steps=max_steps,
            knowledge=knowledge,
        )
    else:
        assert out is not None
        result = run_episodes(
            the_agent,
            problems,
            engine,
            out,
            workers=workers,
            progress=progress,
            max_steps=max_steps,
            knowledge=knowledge,
        )
    console.print(
        f"{result.agent}: {result.written} written, {result.skipped} skipped (already done) of "
        f"{result.problems}; statuses {result.statuses}; mean steps {result.mean_steps}; {result.elapsed_s}s"
    )
    typer.echo(result.model_dump_json())


def register(app: typer.Typer) -> None:
    app.add_typer(episodes_app, name="episodes")
