"""``shoparena train <method> --config FILE [--set key=value] --out RUN``: thin wrapper over
:func:`shoparena.train.runner.train`."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import typer

from shoparena.train.methods import METHODS

train_app = typer.Typer(
    help="Post-train a model on corpus views with TRL (SFT, Dr. GRPO offline/online, KTO).",
    no_args_is_help=True,
)


def _run(method: str, config: str, sets: list[str], out: Path, quiet: bool, restart: bool) -> None:
    from shoparena.runs.identity import RunDirError
    from shoparena.train.config import ConfigError, load_config
    from shoparena.train.distributed import launched_rank

    main = launched_rank() == 0  # under torchrun/accelerate every process runs this: one speaks

    def fail(exc: Exception) -> typer.Exit:
        if main:
            typer.echo(f"error: {exc}", err=True)
        if "torch.distributed" in sys.modules:  # every process refuses; the others wait for the main's line
            from shoparena.train.distributed import leave_process_group

            leave_process_group()
        return typer.Exit(code=2)

    try:
        cfg = load_config(config, method, sets)
    except ConfigError as exc:
        raise fail(exc) from exc
    try:
        from shoparena.train.runner import train
    except ImportError as exc:
        typer.echo(f"error: {exc}; install the train extra: pip install 'shoparena[train]'", err=True)
        raise typer.Exit(code=2) from exc
    try:
        summary = train(
            cfg, out, progress=not quiet, restart=restart, say=lambda line: typer.echo(line, err=True)
        )
    except (ConfigError, RunDirError) as exc:
        raise fail(exc) from None
    from shoparena.train.distributed import leave_process_group

    leave_process_group()
    if main:
        typer.echo(
            f"{method}: {summary['global_step']} steps on {summary.get('processes', 1)} process(es), "
            f"final model {summary['final']}"
        )


#: The shipped presets (``train presets``), spelled out here so ``--help`` lists them without importing
#: the training stack; tests/train checks it against the presets folder.
PRESET_HELP = "student-word, tiny, student-cpu, smollm2, qwen3-4b"
_CONFIG = typer.Option(..., "--config", "-c", help=f"A YAML config file or a preset: {PRESET_HELP}.")
_SET = typer.Option(
    [], "--set", help="Override a dotted key, e.g. --set sft.learning_rate=1e-4 (repeatable)."
)
_OUT = typer.Option(..., "--out", "-o", help="Run directory (re-running the same command resumes).")
_QUIET = typer.Option(False, "--quiet", help="No progress bar.")
_RESTART = typer.Option(
    False, "--restart", help="Start --out over (clears its checkpoints, logs and model) instead of resuming."
)


def _method_command(method: str) -> Callable[..., None]:
    def command(
        config: str = _CONFIG,
        sets: list[str] = _SET,
        out: Path = _OUT,
        quiet: bool = _QUIET,
        restart: bool = _RESTART,
    ) -> None:
        _run(method, config, sets, out, quiet, restart)

    return command


# One command per training method of the table (train.methods.METHODS).
for _method in METHODS.values():
    train_app.command(_method.name, help=_method.help)(_method_command(_method.name))


@train_app.command("presets")
def presets() -> None:
    """List the shipped training presets."""
    from shoparena.train.config import preset_names

    for name in preset_names():
        typer.echo(name)


def register(app: typer.Typer) -> None:
    app.add_typer(train_app, name="train")
