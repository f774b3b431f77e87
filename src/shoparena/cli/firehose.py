"""``shoparena arena firehose``: races of a miner population as arena run directories (thin wrapper)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console

from shoparena.arena.firehose import FirehoseConfig
from shoparena.cli._options import field_option

console = Console()
F = FirehoseConfig

#: Options whose parameter name is not the FirehoseConfig field they set.
FIELD_OF_OPTION = {"timeout": "timeout_s"}
#: Options that are no FirehoseConfig field.
NOT_FIELDS = ("restart",)


def firehose(
    suites: list[Path] = field_option(
        F, "suites", "--suite", more="Repeat per partition.", exists=True, dir_okay=False
    ),
    index: Path = field_option(F, "index", "--index", exists=True, file_okay=False),
    races: int = field_option(F, "races", "--races", min=1),
    out: Path = field_option(F, "out", "--out"),
    problems_per_race: int = field_option(F, "problems_per_race", "--problems-per-race", min=1),
    seed: int = field_option(F, "seed", "--seed"),
    workers: int | None = field_option(F, "workers", "--workers", min=1),
    parallel_races: int | None = field_option(F, "parallel_races", "--parallel-races", min=1),
    timeout: float = field_option(F, "timeout_s", "--timeout", min=0.1),
    executor: str = field_option(F, "executor", "--executor"),
    ray_address: str | None = field_option(F, "ray_address", "--ray-address"),
    restart: bool = typer.Option(
        False, "--restart", help="Start --out over (removes its races) instead of resuming it."
    ),
) -> None:
    """Run RACES races of the default miner population (docs/corpus.md); judge, race and weight each."""
    options = dict(locals())  # every option by parameter name, before any other local exists
    from rich.progress import Progress

    from shoparena.arena.executor import EXECUTORS, ExecutorUnavailableError
    from shoparena.arena.firehose import run_firehose
    from shoparena.runs.infra import InfraStopError

    if executor not in EXECUTORS:
        console.print(f"[red]--executor {executor!r}: choose one of {', '.join(EXECUTORS)}[/red]")
        raise typer.Exit(2)
    fields = {FIELD_OF_OPTION.get(name, name): value for name, value in options.items()}
    config = FirehoseConfig(**{name: value for name, value in fields.items() if name not in NOT_FIELDS})
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
