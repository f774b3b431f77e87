"""Shared CLI guards: an output option that names an input file is a usage error, not a data loss."""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import typer

from shoparena.catalog.io import FileEncodingError, SamePathError, ensure_not_input


def refuse_output_over_input(output: Path | None, *inputs: Path | None, option: str = "--out") -> None:
    """Raise a Typer usage error (exit 2) when ``output`` is one of ``inputs``."""
    if output is None:
        return
    try:
        ensure_not_input(output, *(p for p in inputs if p is not None), option=option)
    except SamePathError as exc:
        raise typer.BadParameter(str(exc), param_hint=option) from None


#: Exit code of a command whose input file is damaged at the byte level (corrupt or truncated gzip).
EXIT_UNREADABLE_INPUT = 3


@contextmanager
def input_errors_exit() -> Iterator[None]:
    """Turn file-level read errors into a one-line message and an exit code instead of a traceback.

    Exit 2: a file in the wrong encoding (UTF-16/32 JSONL); exit 3: a damaged gzip stream.
    """
    try:
        yield
    except FileEncodingError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(code=2) from None
    except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
        typer.echo(f"error: damaged gzip input ({type(exc).__name__}: {exc})", err=True)
        raise typer.Exit(code=EXIT_UNREADABLE_INPUT) from None
