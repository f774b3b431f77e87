"""A directory whose manifest.json is empty or torn is a one-line CLI error (exit 2), not a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from shoparena.cli.main import app


@pytest.mark.parametrize("content", [b"", b'{"kind": "index", "format'])
def test_search_on_an_index_with_a_broken_manifest(tmp_path: Path, content: bytes) -> None:
    index = tmp_path / "index"
    index.mkdir()
    (index / "manifest.json").write_bytes(content)
    res = CliRunner().invoke(app, ["search", "query", "--index", str(index), "--q", "shoe"])
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output and f"{index / 'manifest.json'}:" in res.output
