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


def restart_option(help: str) -> Any:
    """``--restart``: the one flag that starts a command's output over (every command spells it so)."""
    return typer.Option(False, "--restart", help=help)


#: ``--force``, the old name of ``--restart`` in a few commands: still accepted, with a warning.
FORCE_ALIAS = typer.Option(False, "--force", help="Deprecated alias of --restart.", hidden=True)


def restart_or_force(restart: bool, force: bool) -> bool:
    """``--restart``, or the deprecated ``--force`` (which says so on stderr)."""
    if force:
        typer.echo("warning: --force is deprecated and will be removed; use --restart", err=True)
    return restart or force
