"""The ``shoparena`` command: collects every command module of :mod:`shoparena.cli`.

Each module exposes ``register(app: typer.Typer) -> None`` and stays a thin wrapper over a library function,
so the logic is importable and testable without the CLI. Every command reports an input file that cannot
be read at the byte level (:class:`~shoparena.jsonl.JsonlReadError`: a corrupt, truncated or mislabelled
gzip file) as one line naming the file and line, with exit code ``EXIT_UNREADABLE_INPUT`` (3), and a
run-directory file that is missing, torn or not its typed record (:class:`~shoparena.runs.files.RunFileError`,
:class:`~shoparena.runs.ManifestError` included) as one line naming the file, line and field, with exit
code 2.
"""

from __future__ import annotations

import functools
import importlib
import logging
import pkgutil
import signal
from collections.abc import Callable
from typing import Any

import typer

import shoparena
from shoparena.jsonl import EXIT_UNREADABLE_INPUT, JsonlReadError
from shoparena.runs.files import RunFileError
from shoparena.runs.identity import RunDirError
from shoparena.runs.machine import EnvValueError
from shoparena.runs.output import OutputPathError
from shoparena.runs.ports import PortInUseError

app = typer.Typer(
    name="shoparena",
    help="ShoppingBench/ORO-compatible toolkit. Exit codes: 0 ok, 1 check failed, 2 bad input or usage, "
    "3 unreadable input file (corrupt gzip).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,
)


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"shoparena {shoparena.__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version_callback, is_eager=True),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Debug logging."),
) -> None:
    """shoparena command line."""
    from rich.console import Console
    from rich.logging import RichHandler

    level = logging.DEBUG if verbose else logging.INFO
    # Logs go to stderr (stdout is for results: ``--json`` output must parse), and the handler itself
    # filters by level: libraries such as bm25s set their own loggers to DEBUG when first imported.
    handler = RichHandler(console=Console(stderr=True), show_path=False, rich_tracebacks=True)
    handler.setLevel(level)
    logging.basicConfig(level=level, format="%(message)s", handlers=[handler], force=True)
    logging.getLogger("bm25s").setLevel(logging.WARNING)


def _register_all() -> None:
    import shoparena.cli as cli_pkg

    for info in sorted(pkgutil.iter_modules(cli_pkg.__path__), key=lambda m: m.name):
        if info.name in {"main"} or info.name.startswith("_"):
            continue
        module = importlib.import_module(f"shoparena.cli.{info.name}")
        register = getattr(module, "register", None)
        if register is not None:
            register(app)


def _guard(callback: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(callback)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        try:
            return callback(*args, **kwargs)
        except JsonlReadError as exc:
            typer.echo(f"error: unreadable input: {exc}", err=True)
            raise typer.Exit(code=EXIT_UNREADABLE_INPUT) from None
        except RunFileError as exc:  # a run-directory file (manifest included) missing, torn or foreign
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(code=2) from None
        except RunDirError as exc:  # --out of another kind or run, over an input, or locked by a live run
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(code=2) from None
        # SHOPARENA_CPUS=abc; an output the guard refuses; a --port another process holds
        except (EnvValueError, OutputPathError, PortInUseError) as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(code=2) from None

    return guarded


def _guard_commands(group: typer.Typer) -> None:
    """Wrap every command callback of ``group`` and its sub-groups with :func:`_guard`."""
    for command in group.registered_commands:
        if command.callback is not None:
            command.callback = _guard(command.callback)
    for sub in group.registered_groups:
        if sub.typer_instance is not None:
            _guard_commands(sub.typer_instance)


_register_all()
_guard_commands(app)


def _exit_on_sigterm(signum: int, frame: object) -> None:
    # SIGTERM's default action skips finally blocks and atexit: temp dirs and sockets would be left behind.
    raise SystemExit(128 + signum)


def main() -> None:
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    app()


if __name__ == "__main__":
    main()
