"""An output path naming an input is refused before anything is written (no data loss)."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from shoparena.catalog.io import CatalogWriter, SamePathError, ensure_not_input, read_catalog
from shoparena.cli import catalog as catalog_cli
from shoparena.records.catalog import Product
from world import SHARED_DATA


@pytest.fixture
def app() -> typer.Typer:
    root = typer.Typer()

    @root.callback()
    def _root() -> None:
        """Test root."""

    catalog_cli.register(root)
    return root


@pytest.fixture
def catalog(tmp_path: Path) -> Path:
    path = tmp_path / "documents.jsonl"
    with CatalogWriter(path) as writer:
        for i in range(3):
            writer.write(
                Product(
                    product_id=str(i + 1), shop_id="1", category="A > B", title=f"t{i}", price=1, sold_count=0
                )
            )
    return path


def test_validate_refuses_quarantine_equal_to_input(app: typer.Typer, catalog: Path) -> None:
    before = catalog.read_bytes()
    result = CliRunner().invoke(app, ["catalog", "validate", str(catalog), "--quarantine", str(catalog)])
    assert result.exit_code == 2
    assert "would destroy it" in result.output
    assert catalog.read_bytes() == before


def test_validate_refuses_a_link_to_the_input(app: typer.Typer, catalog: Path) -> None:
    link = catalog.parent / "q.jsonl"
    link.symlink_to(catalog)
    result = CliRunner().invoke(app, ["catalog", "validate", str(catalog), "--quarantine", str(link)])
    assert result.exit_code == 2 and catalog.stat().st_size > 0


def test_plant_refuses_out_equal_to_catalog(app: typer.Typer, catalog: Path) -> None:
    suite = SHARED_DATA / "oro" / "problem_suite_v1.json"
    before = catalog.read_bytes()
    args = ["catalog", "plant", "--suite", str(suite), "--catalog", str(catalog), "--out", str(catalog)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2 and catalog.read_bytes() == before


def test_library_read_catalog_refuses_same_quarantine(catalog: Path) -> None:
    with pytest.raises(SamePathError):
        read_catalog(catalog, quarantine_path=catalog)
    assert len(read_catalog(catalog)[0]) == 3


def test_ensure_not_input_accepts_distinct_paths(tmp_path: Path, catalog: Path) -> None:
    ensure_not_input(tmp_path / "other.jsonl", catalog)  # no error
