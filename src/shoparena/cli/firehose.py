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
    workers: int | None = typer.Option(
        _D["workers"].default, min=1, help="Parallel sandboxes within a race (default: 4, within memory)."
    ),
    parallel_races: int | None = typer.Option(
        _D["parallel_races"].default,
        min=1,
        help="Races at once (process executor), each in its own process (default: one per usable CPU, "
        "within memory; docs/scale.md).",
    ),
    timeout: float = typer.Option(_D["timeout_s"].default, min=0.1, help="Per-problem timeout (s)."),
    executor: str = typer.Option(
        _D["executor"].default, help="process (races here, one after another) | ray (one Ray task per race)."
    ),
    ray_address: str | None = typer.Option(
        _D["ray_address"].default, help="Running Ray cluster (default: RAY_ADDRESS, else a local ray.init)."
    ),
    restart: bool = typer.Option(
        False, "--restart", help="Start --out over (removes its races) instead of resuming it."
    ),
) -> None:
    """Run RACES races of the default miner population (docs/corpus.md); judge, race and weight each."""
    from rich.progress import Progress

    from shoparena.arena.executor import EXECUTORS, ExecutorUnavailableError
    from shoparena.arena.firehose import run_firehose
    from shoparena.runs.infra import InfraStopError

    if executor not in EXECUTORS:
        console.print(f"[red]--executor {executor!r}: choose one of {', '.join(EXECUTORS)}[/red]")
        raise typer.Exit(2)
    config = FirehoseConfig(
        suites=suites,
        index=index,
        out=out,
        races=races,
        problems_per_race=problems_per_race,
        seed=seed,
        workers=workers,
        parallel_races=parallel_races,
        timeout_s=timeout,
        executor=executor,
        ray_address=ray_address,
    )
    try:
        with Progress(console=console) as bar:
            task = bar.add_task(f"races ({executor})", total=races)
            dirs = run_firehose(config, progress=lambda _msg: bar.advance(task), restart=restart)
    except ExecutorUnavailableError as err:
        console.print(f"[red]{err}[/red]")
        raise typer.Exit(2) from None
    except InfraStopError as err:  # nothing in a race ran: the reason in one line, a re-run retries
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(1) from None
    console.print(f"{len(dirs)} race directories under {out}")


def register(app: typer.Typer) -> None:
    from shoparena.cli.arena import arena_app

    arena_app.command("firehose")(firehose)
