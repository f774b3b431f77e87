"""The large seeded fuzz run (>= 10,000 records per kind); its last result is in docs/reliability.md.

Run: ``python -m pytest tests/fuzz/test_fuzz_large.py -m slow -s`` (prints the tallies).
"""

from __future__ import annotations

import json
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

from shoparena.search import build_index

pytestmark = pytest.mark.slow

SEED = 20261201


def test_large_fuzz_run(tmp_path: Path) -> None:
    catalog = fuzz_catalog(tmp_path, SEED, 10_000, catalog_seed_lines(tmp_path, 1000))
    stats = build_index(tmp_path / f"catalog-{SEED}.jsonl", tmp_path / "index", progress=False)
    assert stats.read == catalog.records == stats.docs + stats.quarantined
    problems = fuzz_problem_files(tmp_path, SEED, 2_000, problem_seed_records())
    trajectories = fuzz_trajectory_files(tmp_path, SEED, 1_700, trajectory_seed_lines())
    for name, tally in (
        ("catalog lines", catalog),
        ("problem records", problems),
        ("trajectory lines", trajectories),
    ):
        assert tally.read == tally.kept + tally.quarantined
        top = dict(sorted(tally.reasons.items(), key=lambda kv: -kv[1])[:6])
        print(
            json.dumps(
                {
                    "kind": name,
                    "read": tally.read,
                    "kept": tally.kept,
                    "quarantined": tally.quarantined,
                    "file_errors": tally.file_errors,
                    "top_reasons": top,
                }
            )
        )
    assert problems.read >= 10_000 and trajectories.read >= 10_000
    print(json.dumps({"index": {"read": stats.read, "docs": stats.docs, "quarantined": stats.quarantined}}))
