"""``shoparena score``: score a run's trajectories against a suite under a profile."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import typer
from rich.console import Console

from shoparena.cli._guards import refuse_output_over_input
from shoparena.jsonl import LineWriter

if TYPE_CHECKING:
    from shoparena.scoring.lookup import ProductLookup

# Everything but the report goes to stderr, so ``--json`` stdout is only the JSON.
console = Console(stderr=True)
report_console = Console()
_SHOWN_UNREADABLE = 5


def _open_lookup(index: Path) -> ProductLookup:
    """A search index directory, or (for small fixtures) a catalog JSONL file read into memory."""
    if index.is_dir():
        from shoparena.search import SearchIndex

        return SearchIndex.open(index)
    from shoparena.catalog.io import iter_products
    from shoparena.scoring.lookup import DictLookup

    return DictLookup(line.product for line in iter_products(index))


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
        help="Format roles without think (default: SB file name has ablation_react).",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the aggregate report as JSON."),
    out: Path | None = typer.Option(None, "--out", help="Write per-problem verdicts (JSONL)."),
) -> None:
    """Score trajectories against a suite; prints per-category n, ASR, GT rate, format and field matching."""
    from shoparena.catalog.io import LoadSummary, QuarantinedLine
    from shoparena.formats.io import read_trajectories
    from shoparena.scoring.bench import ScoringBench
    from shoparena.scoring.profiles import NO_THINK_ROLES, OUTPUT_ROLES, get_profile
    from shoparena.scoring.report import print_run_score
    from shoparena.scoring.similarity import get_similarity
    from shoparena.suites.loaders import SuiteLoadError, load_suite

    refuse_output_over_input(out, suite, trajectories, index)
    try:
        prof = get_profile(scoring_profile)
        backend = get_similarity(similarity, model_path=embedding_model)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    try:
        problems, summary = load_suite(suite)
    except SuiteLoadError as exc:
        _fail(f"cannot read the suite: {exc}")
    if summary.quarantined:
        console.print(
            f"[yellow]warning:[/yellow] {summary.quarantined} suite record(s) quarantined (suite validate)"
        )
    if not problems:
        _fail(f"{suite}: no readable problems (read {summary.read}, quarantined {summary.quarantined})")
    if no_think is None:
        no_think = prof.name == "shoppingbench" and "ablation_react" in trajectories.name
    traj_summary = LoadSummary(path=str(trajectories))
    unreadable: list[QuarantinedLine] = []
    # Byte-level damage (corrupt gzip, UTF-16) raises JsonlReadError: exit 3 through the CLI guard.
    runs = list(read_trajectories(trajectories, summary=traj_summary, quarantine=unreadable.append))
    lookup = _open_lookup(index)
    for bad in unreadable[:_SHOWN_UNREADABLE]:
        console.print(
            f"[yellow]unreadable[/yellow] {trajectories}:{bad.line_no}: {bad.reason}", highlight=False
        )
    if traj_summary.quarantined:
        console.print(
            f"[yellow]warning:[/yellow] {traj_summary.quarantined} of {traj_summary.read} trajectory line(s) "
            f"unreadable: {traj_summary.reasons}",
            highlight=False,
        )
    result = ScoringBench(problems, lookup, backend).score_run(
        runs,
        prof,
        problems,
        title_threshold=threshold,
        format_roles=NO_THINK_ROLES if no_think else OUTPUT_ROLES,
    )
    if out is not None:
        with LineWriter(out) as fh:
            for verdict in result.verdicts:
                fh.write(verdict.model_dump_json())
    agg = result.aggregate
    if as_json:
        payload = agg.model_dump(mode="json")
        payload["unmatched_trajectories"] = len(result.unmatched)
        payload["duplicate_trajectories"] = result.duplicates
        payload["missing_trajectories"] = result.missing
        payload["trajectory_lines"] = traj_summary.as_dict()
        payload["suite_records"] = {
            "read": summary.read,
            "kept": summary.kept,
            "quarantined": summary.quarantined,
        }
        typer.echo(json.dumps(payload))
        return
    print_run_score(report_console, result)
    if traj_summary.quarantined:
        report_console.print(f"unreadable trajectory lines {traj_summary.quarantined} of {traj_summary.read}")


def _fail(message: str) -> NoReturn:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code=2)


def register(app: typer.Typer) -> None:
    app.command("score")(score)
