"""CLI options that take their default and help from a pydantic config field (never a second copy)."""

from __future__ import annotations

from typing import Any

import typer
from pydantic import BaseModel


def field_default(model: type[BaseModel], name: str) -> Any:
    """The default of ``model.name`` (a default factory is called)."""
    info = model.model_fields[name]
    return info.get_default(call_default_factory=True)


def field_option(model: type[BaseModel], name: str, *flags: str, default: Any = ..., **extra: Any) -> Any:
    """A ``typer.Option`` for ``model.name``: default and help from the field unless given.

    ``default`` overrides the field's default only where the CLI spells the value differently (a comma list
    for a tuple field); pass it derived from :func:`field_default`.
    """
    info = model.model_fields[name]
    value = field_default(model, name) if default is ... else default
    extra.setdefault("help", info.description)
    return typer.Option(value, *flags, **extra)
