"""Rich rendering of a scored run: the per-category table shared by ``shoparena score`` and the quickstart."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from shoparena.scoring.scorer import RunScore


def aggregate_table(result: RunScore, *, title: str | None = None) -> Table:
    """Per-category n, scored, ASR, GT rate, format and field matching, plus an ``all`` row."""
    agg = result.aggregate
    table = Table(title=title or f"profile {agg.profile}  title {agg.title_backend} >= {agg.title_threshold}")
    for col in ("category", "n", "scored", "ASR", "gt rate", "format", "field matching"):
        table.add_column(col, justify="right" if col != "category" else "left")
    for name, rep in [*agg.per_category.items(), ("all", agg)]:
        table.add_row(
            name,
            str(rep.total_problems),
            str(rep.scored_problems),
            f"{rep.success_rate:.3f}",
            f"{rep.ground_truth_rate:.3f}",
            f"{rep.format_score:.3f}",
            f"{rep.field_matching:.3f}",
        )
    return table


def print_run_score(console: Console, result: RunScore, *, title: str | None = None) -> None:
    """The table plus the denominator line and a non-comparability warning where it applies."""
    agg = result.aggregate
    console.print(aggregate_table(result, title=title))
    console.print(
        f"denominator {agg.denominator}; missing trajectories {result.missing} of {agg.total_problems}; "
        f"failed runs {agg.failed_runs}; timed out {agg.timed_out_runs}; "
        f"unmatched trajectories {len(result.unmatched)}; duplicates replaced {result.duplicates}"
    )
    if not agg.title_comparable:
        console.print(
            f"[yellow]title backend {agg.title_backend} is not the reference model: non-comparable[/yellow]"
        )
