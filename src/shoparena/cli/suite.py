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


@suite_app.command("synth")
def synth(
    index: Path = typer.Option(..., "--index", exists=True, file_okay=False, help="Index directory."),
    out: Path = typer.Option(..., "--out", "-o", dir_okay=False, help="Bank file to write."),
    n: int = typer.Option(..., "--n", min=1, help="Problems to keep (split evenly over the intents)."),
    seed: int = typer.Option(42, "--seed", help="RNG seed (upstream 42)."),
    intents: str = typer.Option("product,shop,voucher,knowledge", "--intents", help="Comma list of intents."),
    fmt: str = typer.Option("oro", "--format", help="oro (suite JSON) or sb (test JSONL)."),
    rewriter: str | None = typer.Option(None, "--rewriter", help="OpenAI-compatible base URL (rewrites)."),
    rewriter_model: str | None = typer.Option(None, "--rewriter-model", help="Model name for --rewriter."),
    allow_less_than: bool = typer.Option(False, "--allow-less-than", help="Allow `less than` price bounds."),
    as_json: bool = typer.Option(False, "--json", help="Print the synthesis report as JSON."),
) -> None:
    """Synthesise a checked problem bank (upstream recipe, template queries, ORO labels) over an index.

    Web (knowledge) problems need their knowledge pages: written next to the bank as OUT.knowledge.jsonl.
    """
    from shoparena.suites.queries import LLMRewriter
    from shoparena.suites.synth import SynthOptions, knowledge_path_for, parse_intents, synthesize_bank

    try:
        chosen = parse_intents(intents)
        options = SynthOptions(n=n, seed=seed, intents=chosen, allow_less_than=allow_less_than)
    except ValueError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(code=2) from None
    if fmt not in ("oro", "sb"):
        typer.echo(f"error: --format must be oro or sb, got {fmt!r}", err=True)
        raise typer.Exit(code=2)
    rw = LLMRewriter.from_url(rewriter, model=rewriter_model) if rewriter else None
    report = synthesize_bank(index, out, options, fmt=fmt, rewriter=rw)
    if as_json:
        typer.echo(report.model_dump_json())
        return
    console.print(
        f"[bold]{out}[/bold]: kept {report.kept} of {report.generated} generated "
        f"({report.rejected} rejected: {report.rejected_by_reason}) in {report.seconds:.1f}s; "
        f"by intent {report.kept_by_intent}"
    )
    for intent, row in report.kept_by_difficulty.items():
        console.print(f"  {intent}: {dict(sorted(row.items()))}")
    if report.knowledge_pages:
        console.print(f"  knowledge pages: {report.knowledge_pages} -> {knowledge_path_for(out)}")
    if report.shortfall:
        console.print(f"[yellow]shortfall[/yellow] {report.shortfall}")

def register(app: typer.Typer) -> None:
    app.add_typer(suite_app, name="suite")
