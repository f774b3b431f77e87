"""Fixtures shared by the suite tests."""

from __future__ import annotations

import pytest
import typer

from shoparena.cli import suite as suite_cli


@pytest.fixture(scope="module")
def app() -> typer.Typer:
    """A root app holding only the ``suite`` group, so other groups' modules can't break these tests."""
    root = typer.Typer()

    @root.callback()
    def _root() -> None:
        """Test root."""

    suite_cli.register(root)
    return root
