"""Fixtures shared by the scoring CLI tests."""

from __future__ import annotations

import pytest
import typer

from shoparena.cli import score as score_cli


@pytest.fixture
def app() -> typer.Typer:
    """A Typer root with only the ``score`` commands registered."""
    root = typer.Typer()

    @root.callback()
    def _root() -> None:
        """Test root."""

    score_cli.register(root)
    return root
