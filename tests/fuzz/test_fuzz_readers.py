"""Seeded fuzzing of the library readers: catalogs, problem files, trajectory files (a few seconds)."""

from __future__ import annotations

from pathlib import Path

import pytest
from fuzz_helpers import (
    catalog_seed_lines,
    fuzz_catalog,
    fuzz_problem_files,
    fuzz_trajectory_files,
    problem_seed_records,
    trajectory_seed_lines,
)

from shoparena.search import SearchIndex, build_index


@pytest.fixture(scope="module")
def catalog_seeds(tmp_path_factory: pytest.TempPathFactory) -> list[bytes]:
    return catalog_seed_lines(tmp_path_factory.mktemp("seed"), 120)


@pytest.mark.parametrize("seed", [1, 2])
def test_fuzzed_catalog_lines_are_kept_or_quarantined_with_a_field(
    tmp_path: Path, catalog_seeds: list[bytes], seed: int
) -> None:
    tally = fuzz_catalog(tmp_path, seed, 400, catalog_seeds)
    assert tally.read == tally.records == tally.kept + tally.quarantined and tally.records > 390
    assert tally.kept > 100 and tally.quarantined > 100  # both paths exercised


def test_fuzzed_catalog_indexes_and_serves(tmp_path: Path, catalog_seeds: list[bytes]) -> None:
    tally = fuzz_catalog(tmp_path, 7, 300, catalog_seeds)
    stats = build_index(tmp_path / "catalog-7.jsonl", tmp_path / "index", progress=False)
    assert stats.read == tally.records and stats.docs + stats.quarantined == stats.read
    index = SearchIndex.open(tmp_path / "index")
    hits = index.find_product_dicts("the", "1", None, None, "order", None)
    assert all(hit["price"] is not None for hit in hits)


@pytest.mark.parametrize("seed", [1, 2])
def test_fuzzed_problem_files_are_read_or_refused(tmp_path: Path, seed: int) -> None:
    tally = fuzz_problem_files(tmp_path, seed, 40, problem_seed_records())
    assert tally.read == tally.kept + tally.quarantined
    assert tally.kept > 20 and tally.quarantined > 20


@pytest.mark.parametrize("seed", [1, 2])
def test_fuzzed_trajectory_files_count_every_line(tmp_path: Path, seed: int) -> None:
    tally = fuzz_trajectory_files(tmp_path, seed, 30, trajectory_seed_lines())
    assert tally.read == tally.records == tally.kept + tally.quarantined
    assert tally.read + tally.file_errors * 8 >= 30 * 8 * 0.9
    assert tally.kept > 20 and tally.quarantined > 20
