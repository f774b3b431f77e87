"""Determinism and schema validity of the synthetic catalog generator."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import pytest
from pydantic import ValidationError

from shoparena.catalog.io import dump_index_line, parse_index_line, read_catalog
from shoparena.catalog.synth import SynthConfig, iter_synth_lines, iter_synth_products, synthesize_catalog
from shoparena.records.catalog import build_contents

SMALL = SynthConfig(products=600, seed=11, chunk_size=150)


def _write(tmp_path: Path, name: str, config: SynthConfig) -> bytes:
    path = tmp_path / name
    summary = synthesize_catalog(config, path, progress=False)
    assert summary.products == config.products
    assert summary.bytes_written == path.stat().st_size
    return path.read_bytes()


def test_same_seed_is_byte_identical(tmp_path: Path) -> None:
    assert _write(tmp_path, "a.jsonl", SMALL) == _write(tmp_path, "b.jsonl", SMALL)


def test_workers_do_not_change_output(tmp_path: Path) -> None:
    one = _write(tmp_path, "w1.jsonl", SMALL)
    two = _write(tmp_path, "w2.jsonl", SMALL.model_copy(update={"workers": 2}))
    assert one == two
    assert b"".join(iter_synth_lines(SMALL)) == one


def test_different_seed_differs(tmp_path: Path) -> None:
    a = _write(tmp_path, "a.jsonl", SMALL)
    b = _write(tmp_path, "b.jsonl", SMALL.model_copy(update={"seed": 12}))
    assert a != b
    ids_a = {parse_index_line(x).id for x in a.splitlines()}
    ids_b = {parse_index_line(x).id for x in b.splitlines()}
    assert ids_a != ids_b


def test_gz_output_is_readable_and_reproducible(tmp_path: Path) -> None:
    plain = _write(tmp_path, "c.jsonl", SMALL)
    gz1 = _write(tmp_path, "c1.jsonl.gz", SMALL)
    gz2 = _write(tmp_path, "c2.jsonl.gz", SMALL)
    assert gz1 == gz2  # no mtime or file name in the gzip header
    assert gzip.decompress(gz1) == plain
    lines, summary = read_catalog(tmp_path / "c1.jsonl.gz")
    assert summary.read == summary.kept == SMALL.products
    assert len(lines) == SMALL.products


def test_no_partial_file_left(tmp_path: Path) -> None:
    _write(tmp_path, "d.jsonl", SMALL)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.jsonl"]


def test_every_line_is_a_valid_upstream_index_line() -> None:
    raw = b"".join(iter_synth_lines(SMALL))
    lines = raw.split(b"\n")
    assert lines[-1] == b""
    ids = set()
    for data in lines[:-1]:
        line = parse_index_line(data)
        p = line.product
        assert line.id == p.product_id
        assert line.contents == build_contents(p)
        # Already normalised: parsing and re-serialising gives the same bytes (key order, floats, case).
        assert dump_index_line(line) == data
        assert re.fullmatch(r"[1-9][0-9]{8,9}", p.product_id)
        assert re.fullmatch(r"[1-9][0-9]*", p.shop_id)
        assert p.product_url == f"https://www.lazada.com.ph/products/-i{p.product_id}.html"
        assert p.price > 0
        ids.add(p.product_id)
    assert len(ids) == SMALL.products


def test_iter_synth_products_matches_file_order() -> None:
    from_lines = [parse_index_line(x).product for x in b"".join(iter_synth_lines(SMALL)).splitlines()]
    assert list(iter_synth_products(SMALL)) == from_lines


def test_product_ids_unique_across_chunks_and_sizes() -> None:
    big = SynthConfig(products=3000, seed=5, chunk_size=97)
    ids = [p.product_id for p in iter_synth_products(big)]
    assert len(set(ids)) == len(ids)


def test_prefix_property_with_same_chunking() -> None:
    # The first chunks do not depend on how many products follow (shop table aside, sized explicitly).
    short = SynthConfig(products=300, seed=2, chunk_size=150, shops=40)
    long = SynthConfig(products=600, seed=2, chunk_size=150, shops=40)
    assert list(iter_synth_products(short)) == list(iter_synth_products(long))[:300]


def test_config_errors_name_the_field() -> None:
    with pytest.raises(ValidationError, match="categories"):
        SynthConfig(products=10, categories=10_000)
    with pytest.raises(ValidationError, match="products"):
        SynthConfig(products=-1)
    with pytest.raises(ValidationError, match="extra"):
        SynthConfig(products=10, colour="red")  # type: ignore[call-arg]


def test_zero_products(tmp_path: Path) -> None:
    assert _write(tmp_path, "empty.jsonl", SynthConfig(products=0)) == b""
