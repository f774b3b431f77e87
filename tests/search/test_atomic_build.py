"""Index builds never destroy their input or a working index, and leave nothing behind."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import orjson
import pytest
import typer
from typer.testing import CliRunner

from shoparena.catalog.io import CatalogWriter
from shoparena.cli import catalog as catalog_cli
from shoparena.records.catalog import Product
from shoparena.search import SearchIndex, build_index
from shoparena.search import index as index_mod
from shoparena.search.index import IndexBuildError, clean_stale_builds


def _catalog(path: Path, n: int, word: str = "lamp") -> Path:
    with CatalogWriter(path) as writer:
        for i in range(n):
            writer.write(
                Product(
                    product_id=str(i + 1),
                    shop_id="1",
                    category="A > B",
                    title=f"{word} {i}",
                    price=5,
                    sold_count=i,
                )
            )
    return path


def _dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def _leftovers(parent: Path) -> list[str]:
    return sorted(p.name for p in parent.iterdir() if p.name.startswith(".") or p.name == "_build_tmp")


def test_catalog_inside_the_index_dir_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "D"
    out.mkdir()
    catalog = _catalog(out / "products.jsonl", 3)
    before = catalog.read_bytes()
    with pytest.raises(IndexBuildError, match="inside the index directory"):
        build_index(catalog, out, progress=False)
    assert catalog.read_bytes() == before


def test_cli_index_refuses_own_input_with_exit_2(tmp_path: Path) -> None:
    root = typer.Typer()

    @root.callback()
    def _root() -> None:
        """Test root."""

    catalog_cli.register(root)
    out = tmp_path / "D"
    out.mkdir()
    catalog = _catalog(out / "products.jsonl", 3)
    result = CliRunner().invoke(root, ["catalog", "index", str(catalog), "--out", str(out)])
    assert result.exit_code == 2 and catalog.stat().st_size > 0


def test_a_foreign_directory_is_not_replaced(tmp_path: Path) -> None:
    out = tmp_path / "notes"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    with pytest.raises(IndexBuildError, match="not an index"):
        build_index(_catalog(tmp_path / "c.jsonl", 2), out, progress=False)
    assert (out / "keep.txt").read_text() == "mine"


def test_failed_rebuild_leaves_the_old_index_working(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "ix"
    build_index(_catalog(tmp_path / "a.jsonl", 5, "lamp"), out, progress=False)

    def boom(*args: object, **kwargs: object) -> None:
        raise RuntimeError("disk full")

    monkeypatch.setattr(index_mod, "term_scores", boom)  # fails after products.jsonl was written
    with pytest.raises(RuntimeError, match="disk full"):
        build_index(_catalog(tmp_path / "b.jsonl", 7, "chair"), out, progress=False)
    index = SearchIndex.open(out)
    assert len(index) == 5 and index.find_product("lamp")
    assert _leftovers(tmp_path) == []


def test_rebuild_replaces_the_index(tmp_path: Path) -> None:
    out = tmp_path / "ix"
    build_index(_catalog(tmp_path / "a.jsonl", 5, "lamp"), out, progress=False)
    stats = build_index(_catalog(tmp_path / "b.jsonl", 7, "chair"), out, progress=False)
    assert stats.out_dir == str(out) and stats.index_bytes > 0
    index = SearchIndex.open(out)
    assert len(index) == 7 and index.find_product("chair") and not index.find_product("lamp")
    assert _leftovers(tmp_path) == [] and not (out / "_build_tmp").exists()


def test_stale_build_dirs_of_dead_processes_are_removed(tmp_path: Path) -> None:
    out = tmp_path / "ix"
    build_index(_catalog(tmp_path / "a.jsonl", 2), out, progress=False)
    dead = _dead_pid()
    stale = tmp_path / f".ix.build-{dead}"
    (stale / "_build_tmp").mkdir(parents=True)
    live = tmp_path / f".ix.build-{os.getppid()}"  # a running build of another process: left alone
    live.mkdir()
    (out / "_build_tmp").mkdir()  # left by builds before the atomic swap
    assert clean_stale_builds(out) == [stale]
    assert live.exists() and not (out / "_build_tmp").exists()


def test_crash_mid_swap_restores_the_previous_index(tmp_path: Path) -> None:
    out = tmp_path / "ix"
    build_index(_catalog(tmp_path / "a.jsonl", 4), out, progress=False)
    out.rename(tmp_path / f".ix.old-{_dead_pid()}")  # killed between the two renames
    build_index(_catalog(tmp_path / "b.jsonl", 6), tmp_path / "other", progress=False)
    clean_stale_builds(out)
    assert len(SearchIndex.open(out)) == 4 and _leftovers(tmp_path) == []


def test_duplicate_quarantine_entries_carry_physical_line_numbers(tmp_path: Path) -> None:
    src = _catalog(tmp_path / "a.jsonl", 3)
    lines = src.read_bytes().split(b"\n")
    # blank lines and a bad line shift physical numbers away from record counts
    src.write_bytes(b"\n".join([lines[0], b"", b"not json", lines[1], b"", lines[0]]) + b"\n")
    out = tmp_path / "ix"
    stats = build_index(src, out, progress=False)
    assert stats.duplicates == 1
    entries = [orjson.loads(line) for line in (out / "quarantine.jsonl").read_bytes().splitlines()]
    dup = [e for e in entries if e["reason"].startswith("duplicate")]
    assert dup[0]["line_no"] == 6 and dup[0]["reason"] == "duplicate product_id: first at line 1"
