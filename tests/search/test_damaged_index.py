"""A damaged index is one clear line and exit 2 (issue 52): 13 of 24 damaged-index cases ended in a
traceback with exit 1, and a truncated ``terms.bin`` answered every query with ``[]`` and exit 0."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from shoparena.cli.main import app
from shoparena.search import SearchIndex
from shoparena.search.index import IndexFormatError


def _truncate(name: str, keep: float = 0.5) -> Callable[[Path], None]:
    def damage(index: Path) -> None:
        data = (index / name).read_bytes()
        (index / name).write_bytes(data[: int(len(data) * keep)])

    return damage


def _foreign_dict(index: Path) -> None:
    import zstandard

    samples = [json.dumps({"other": i, "text": "foreign " * (i % 7)}).encode() for i in range(2000)]
    (index / "products.zstdict").write_bytes(zstandard.train_dictionary(4096, samples, dict_id=7).as_bytes())


def _format(version: int) -> Callable[[Path], None]:
    def damage(index: Path) -> None:
        manifest = json.loads((index / "manifest.json").read_text())
        manifest["format_version"] = version
        (index / "manifest.json").write_text(json.dumps(manifest))

    return damage


DAMAGE: dict[str, Callable[[Path], None]] = {
    "products.zst truncated": _truncate("products.zst"),
    "products.zst empty": _truncate("products.zst", 0.0),
    "products.zstdict missing": lambda index: (index / "products.zstdict").unlink(),
    "products.zstdict foreign": _foreign_dict,
    "terms.bin truncated": _truncate("terms.bin", 0.7),
    "terms.bin empty": _truncate("terms.bin", 0.0),
    "format 3": _format(3),
    **{f"{name} truncated": _truncate(name) for name in (
        "offsets.npy", "price.npy", "data.csc.index.npy", "indptr.csc.index.npy", "terms_off.npy",
        "ids_sorted.npy", "shop.npy", "norms.npy")},
    "shops.json torn": _truncate("shops.json"),
    "params.index.json torn": _truncate("params.index.json"),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(DAMAGE))
def test_a_damaged_index_is_one_line_and_exit_2(case: str, shop_world, tmp_path: Path) -> None:
    index = tmp_path / "index"
    shutil.copytree(shop_world.index, index)
    DAMAGE[case](index)
    with pytest.raises(IndexFormatError):
        SearchIndex.open(index)
    result = CliRunner().invoke(app, ["search", "query", "--index", str(index), "--q", "shoes"])
    assert result.exit_code == 2, (case, result.exit_code, result.output)
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and str(index) in errors[0], result.stderr
    assert "Traceback" not in result.output


def test_a_whole_index_still_opens(shop_world) -> None:
    engine = SearchIndex.open(shop_world.index)
    assert len(engine) == 600 and engine.find_product("shoes")
