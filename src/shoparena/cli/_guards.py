"""Shared CLI guards: an output option that names an input file is a usage error, not a data loss."""

from __future__ import annotations

from pathlib import Path

import typer

from shoparena.catalog.io import SamePathError, ensure_not_input


def refuse_output_over_input(output: Path | None, *inputs: Path | None, option: str = "--out") -> None:
    """Raise a Typer usage error (exit 2) when ``output`` is one of ``inputs``."""
    if output is None:
        return
    try:
        ensure_not_input(output, *(p for p in inputs if p is not None), option=option)
    except SamePathError as exc:
        raise typer.BadParameter(str(exc), param_hint=option) from None
