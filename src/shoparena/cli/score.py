"""``shoparena score``: score a run's trajectories against a suite under a profile."""

from __future__ import annotations

import json
from pathlib import Path
from typing import NoReturn

import typer
from rich.console import Console

from shoparena.cli._guards import refuse_output_over_input
from shoparena.jsonl import LineWriter
from shoparena.runs.output import jsonl_with_keys

# Everything but the report goes to stderr, so ``--json`` stdout is only the JSON.
console = Console(stderr=True)
report_console = Console()
_SHOWN_UNREADABLE = 5


def score(
    suite: Path = typer.Option(
        ..., "--suite", exists=True, dir_okay=False, help="Suite file (SB JSONL or ORO)."
    ),
    trajectories: Path = typer.Option(
        ...,
        "--trajectories",
        exists=True,
        dir_okay=False,
        help="ORO output.jsonl envelopes or SB rollout lines.",
    ),
    index: Path = typer.Option(
        ..., "--index", exists=True, help="Search index directory (or a catalog JSONL)."
    ),
    scoring_profile: str = typer.Option(
        "strict", "--scoring-profile", "--profile", help="strict (alias production-strict) or shoppingbench."
    ),
    similarity: str = typer.Option("lexical", help="Title backend: exact, lexical or embedding."),
    embedding_model: Path | None = typer.Option(None, help="Local sentence-transformers folder (embedding)."),
    threshold: float | None = typer.Option(None, help="Override the title threshold of the backend/profile."),
    no_think: bool | None = typer.Option(
        None,
        "--no-think/--think",
        help="Format roles without think (default: suites.score_files.ablation_react_rule, an SB "
        "rollout file named ablation_react under shoppingbench).",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the aggregate report as JSON."),
    out: Path | None = typer.Option(None, "--out", help="Write per-problem verdicts (JSONL)."),
) -> None:
    """Score trajectories against a suite; prints per-category n, ASR, GT rate, format and field matching."""
    from shoparena.scoring.profiles import get_profile
    from shoparena.scoring.report import print_run_score
    from shoparena.scoring.similarity import get_similarity
    from shoparena.suites.score_files import ScoreInputError, score_file

    refuse_output_over_input(out, suite, trajectories, index, own=jsonl_with_keys("problem_id", "profile"))
    try:
        prof = get_profile(scoring_profile)
        backend = get_similarity(similarity, model_path=embedding_model)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    try:
        # Byte-level damage (corrupt gzip, UTF-16) raises JsonlReadError: exit 3 through the CLI guard.
        scored = score_file(
            suite,
            trajectories,
            index,
            scoring_profile=prof,
            similarity=backend,
            threshold=threshold,
            no_think=no_think,
        )
    except ScoreInputError as exc:
        _fail(str(exc))
    summary, traj_summary = scored.suite_summary, scored.trajectory_summary
    if summary.quarantined:
        console.print(
            f"[yellow]warning:[/yellow] {summary.quarantined} suite record(s) quarantined (suite validate)"
        )
    for bad in scored.unreadable[:_SHOWN_UNREADABLE]:
        console.print(
            f"[yellow]unreadable[/yellow] {trajectories}:{bad.line_no}: {bad.reason}", highlight=False
        )
    if traj_summary.quarantined:
        console.print(
            f"[yellow]warning:[/yellow] {traj_summary.quarantined} of {traj_summary.read} trajectory line(s) "
            f"unreadable: {traj_summary.reasons}",
            highlight=False,
        )
    if out is not None:
        with LineWriter(out) as fh:
            for verdict in scored.result.verdicts:
                fh.write(verdict.model_dump_json())
    if as_json:
        typer.echo(json.dumps(scored.json_payload()))
        return
    print_run_score(report_console, scored.result)
    if traj_summary.quarantined:
        report_console.print(f"unreadable trajectory lines {traj_summary.quarantined} of {traj_summary.read}")


def _fail(message: str) -> NoReturn:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code=2)


def register(app: typer.Typer) -> None:
    app.command("score")(score)
