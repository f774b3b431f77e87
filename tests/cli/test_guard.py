"""The CLI guard: an index whose manifest is empty or torn is a one-line error (exit 2), not a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from shoparena.catalog.io import CatalogWriter
from shoparena.cli.main import app
from shoparena.records.catalog import Product
from shoparena.search import build_index


@pytest.mark.parametrize("manifest", [b"", b'{"format": "shoparena-bm25", "sta'])
def test_broken_index_manifest_exits_2(tmp_path: Path, manifest: bytes) -> None:
    catalog = tmp_path / "c.jsonl"
    with CatalogWriter(catalog) as writer:
        writer.write(
            Product(product_id="1", shop_id="1", category="A > B", title="lamp", price=1, sold_count=0)
        )
    build_index(catalog, tmp_path / "ix", progress=False)
    (tmp_path / "ix" / "manifest.json").write_bytes(manifest)
    result = CliRunner().invoke(app, ["search", "query", "--index", str(tmp_path / "ix"), "--q", "lamp"])
    assert result.exit_code == 2 and "manifest.json" in result.stderr
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_index_of_an_older_format_is_a_one_line_error(tmp_path: Path) -> None:
    import json

    catalog = tmp_path / "c.jsonl"
    with CatalogWriter(catalog) as writer:
        writer.write(
            Product(product_id="1", shop_id="1", category="A > B", title="lamp", price=1, sold_count=0)
        )
    build_index(catalog, tmp_path / "ix", progress=False)
    manifest = json.loads((tmp_path / "ix" / "manifest.json").read_text())
    manifest["format_version"] = 2
    (tmp_path / "ix" / "manifest.json").write_text(json.dumps(manifest))
    result = CliRunner().invoke(app, ["search", "query", "--index", str(tmp_path / "ix"), "--q", "lamp"])
    assert result.exit_code == 2
    assert "format_version 2" in result.stderr and "rebuild it" in result.stderr
    assert result.exception is None or isinstance(result.exception, SystemExit)
