"""CLI options that take their default and help from a pydantic config field (never a second copy)."""

from __future__ import annotations

from typing import Any

import typer
from pydantic import BaseModel


def field_default(model: type[BaseModel], name: str) -> Any:
    """The default of ``model.name`` (a default factory is called); ``...`` for a required field."""
    info = model.model_fields[name]
    return ... if info.is_required() else info.get_default(call_default_factory=True)


def field_option(
    model: type[BaseModel], name: str, *flags: str, default: Any = ..., more: str = "", **extra: Any
) -> Any:
    """A ``typer.Option`` for ``model.name``: default and help from the field unless given (a required
    field makes a required option).

    ``default`` overrides the field's default only where the CLI spells the value differently (a comma list
    for a tuple field); pass it derived from :func:`field_default`. ``more`` is appended to the field's
    description (what only the command line needs to say, such as "repeat").
    """
    value = field_default(model, name) if default is ... else default
    extra.setdefault("help", field_help(model, name, more))
    return typer.Option(value, *flags, **extra)


def field_argument(model: type[BaseModel], name: str, *, more: str = "", **extra: Any) -> Any:
    """A ``typer.Argument`` for ``model.name``: default and help from the field, as :func:`field_option`."""
    extra.setdefault("help", field_help(model, name, more))
    return typer.Argument(field_default(model, name), **extra)


def field_help(model: type[BaseModel], name: str, more: str = "") -> str | None:
    """The help of ``model.name``'s option: the field's description, then ``more``."""
    text = " ".join(part for part in (model.model_fields[name].description or "", more) if part)
    return text or None


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
