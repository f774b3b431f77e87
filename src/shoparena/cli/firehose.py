"""``shoparena arena firehose``: races of a miner population as arena run directories (thin wrapper)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console

from shoparena.arena.firehose import FirehoseConfig

console = Console()
_D = FirehoseConfig.model_fields


def firehose(
    suites: list[Path] = typer.Option(
        ..., "--suite", exists=True, dir_okay=False, help="Problem-bank partition (repeat): rotated per race."
    ),
    index: Path = typer.Option(..., exists=True, file_okay=False, help="Search index directory."),
    races: int = typer.Option(_D["races"].default, min=1, help="Number of races."),
    out: Path = typer.Option(..., help="Output folder (one arena run directory per race; resumable)."),
    problems_per_race: int = typer.Option(_D["problems_per_race"].default, min=1),
    seed: int = typer.Option(_D["seed"].default),
    workers: int = typer.Option(_D["workers"].default, min=1, help="Parallel sandboxes."),
    timeout: float = typer.Option(_D["timeout_s"].default, min=0.1, help="Per-problem timeout (s)."),
) -> None:
    """Run RACES races of the default miner population (docs/corpus.md); judge, race and weight each."""
    from rich.progress import Progress

    from shoparena.arena.firehose import run_firehose

    config = FirehoseConfig(
        suites=suites,
        index=index,
        out=out,
        races=races,
        problems_per_race=problems_per_race,
        seed=seed,
        workers=workers,
        timeout_s=timeout,
    )
    with Progress(console=console) as bar:
        task = bar.add_task("races", total=races)
        dirs = run_firehose(config, progress=lambda _msg: bar.advance(task))
    console.print(f"{len(dirs)} race directories under {out}")


def register(app: typer.Typer) -> None:
    from shoparena.cli.arena import arena_app

    arena_app.command("firehose")(firehose)
