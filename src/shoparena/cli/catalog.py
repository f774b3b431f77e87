"""``shoparena catalog ...``: synthesise, validate and index catalogs in the upstream format."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.console import Console

catalog_app = typer.Typer(help="Catalogs in the upstream documents.jsonl[.gz] format.", no_args_is_help=True)
console = Console(stderr=True)


@catalog_app.command("validate")
def validate(
    path: Path = typer.Argument(..., exists=True, dir_okay=False, help="documents.jsonl or .jsonl.gz"),
    quarantine: Path | None = typer.Option(None, help="Write bad lines here (JSONL: line_no, reason, raw)."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
) -> None:
    """Stream-validate a catalog: counts read / kept / quarantined, with reasons."""
    from shoparena.catalog.io import LoadSummary, iter_products

    summary = LoadSummary(path=str(path))
    qfh = open(quarantine, "wb") if quarantine else None  # noqa: SIM115
    try:
        sink = (lambda q: qfh.write(q.to_json() + b"\n")) if qfh else None
        for _ in iter_products(path, summary=summary, quarantine=sink):
            pass
    finally:
        if qfh:
            qfh.close()
    if as_json:
        typer.echo(json.dumps(summary.as_dict()))
    else:
        console.print(
            f"read {summary.read}  kept {summary.kept}  quarantined {summary.quarantined}  {summary.reasons}"
        )
    if summary.quarantined:
        raise typer.Exit(code=1)


# --- further catalog commands (synth, index, plant) are added below this line ---


def register(app: typer.Typer) -> None:
    app.add_typer(catalog_app, name="catalog")
