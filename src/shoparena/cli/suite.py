"""``shoparena suite ...``: problem suites (ShoppingBench test JSONL and ORO suite JSON)."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

suite_app = typer.Typer(
    help="Problem suites: validate, and (later) list, card, synthesise.", no_args_is_help=True
)
console = Console()


@suite_app.command("validate")
def validate(
    path: Path = typer.Argument(..., exists=True, dir_okay=False, help="SB test .jsonl or ORO suite .json"),
    as_json: bool = typer.Option(False, "--json", help="Print the load summary as JSON."),
) -> None:
    """Read a suite: counts by category, intent and difficulty, and every record it could not read, with why.

    Exits 1 when any record was quarantined.
    """
    from shoparena.suites.loaders import SuiteLoadError, SuiteLoadSummary, iter_suite

    summary = SuiteLoadSummary(path=str(path))
    try:
        for _ in iter_suite(path, summary=summary):
            pass
    except SuiteLoadError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(code=2) from None
    if as_json:
        typer.echo(json.dumps(summary.as_dict(), ensure_ascii=False))
    else:
        console.print(
            f"[bold]{path}[/bold] ({summary.format}): read {summary.read}  kept {summary.kept}  "
            f"quarantined {summary.quarantined}"
        )
        table = Table("group", "value", "problems")
        for group, counts in (
            ("category", summary.by_category),
            ("intent", summary.by_intent),
            ("difficulty", summary.by_difficulty),
        ):
            for key, n in sorted(counts.items()):
                table.add_row(group, key, str(n))
        console.print(table)
        for bad in summary.problems_quarantined:
            console.print(f"[red]quarantined[/red] {bad.describe()}", markup=True, highlight=False)
    if summary.quarantined:
        raise typer.Exit(code=1)


# --- further suite commands are added below this line ---


def register(app: typer.Typer) -> None:
    app.add_typer(suite_app, name="suite")
