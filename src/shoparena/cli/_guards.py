"""Shared CLI guards: an output option is checked by the one output guard
(:func:`shoparena.runs.output.check_output`) before anything is written; a refusal is a usage error
(exit 2), never a data loss."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

import typer

from shoparena.runs.output import OutputPathError, check_output


def refuse_output_over_input(
    output: Path | None,
    *inputs: Path | None,
    option: str = "--out",
    folder: bool = False,
    allow: Iterable[Path] = (),
    own: Callable[[Path], bool] | None = None,
) -> None:
    """Raise a Typer usage error (exit 2) when ``output`` is a link, one of ``inputs`` or inside one, or a
    run's or index's own file (see :mod:`shoparena.runs.output`)."""
    if output is None:
        return
    try:
        check_output(output, inputs, option=option, folder=folder, allow=allow, own=own)
    except OutputPathError as exc:
        raise typer.BadParameter(str(exc), param_hint=option) from None
