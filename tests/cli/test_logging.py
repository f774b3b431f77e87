"""CLI logging: on stderr only, and library DEBUG records (bm25s) hidden without ``-v``."""

from __future__ import annotations

import logging

import pytest

from shoparena.cli import main as cli_main


@pytest.fixture(autouse=True)
def _restore_logging():
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


def test_bm25s_debug_is_silent_without_verbose(capsys: pytest.CaptureFixture[str]) -> None:
    cli_main._root(version=False, verbose=False)
    import bm25s  # noqa: F401 - importing it sets its logger to DEBUG again

    logging.getLogger("bm25s").setLevel(logging.DEBUG)
    logging.getLogger("bm25s").debug("Building index from IDs objects")
    logging.getLogger("shoparena.test").warning("visible warning")
    captured = capsys.readouterr()
    assert "Building index" not in captured.out + captured.err
    assert "visible warning" in captured.err and captured.out == ""


def test_verbose_shows_debug_on_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    cli_main._root(version=False, verbose=True)
    logging.getLogger("shoparena.test").debug("debug detail")
    captured = capsys.readouterr()
    assert "debug detail" in captured.err and captured.out == ""
