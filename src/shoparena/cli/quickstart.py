"""``shoparena quickstart``: the main job on the embedded default (what ``make run`` runs)."""

from __future__ import annotations

from pathlib import Path

import typer


def quickstart(
    out: Path = typer.Option(Path("runs/quickstart"), help="Run directory (re-running resumes)."),
    products: int = typer.Option(5000, help="Synthetic catalog size."),
    seed: int = typer.Option(42),
    workers: int = typer.Option(2, help="Generator worker processes."),
) -> None:
    """Build the embedded default end to end: catalog, index, searches, suite, episodes, scores."""
    from shoparena.quickstart import QuickstartConfig, run_quickstart

    run_quickstart(QuickstartConfig(products=products, seed=seed, workers=workers), out)


def register(app: typer.Typer) -> None:
    app.command("quickstart")(quickstart)
