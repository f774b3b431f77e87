"""The run-directory layer, fuzzed (issue 23): damaged race, miner, judge, proxy, manifest, summary and
episodes files, every command's config and ``--out`` collisions end in exit 0 or a one-line error, never a
traceback. The default run is a few seeded cases per kind; ``-m slow`` runs the large one
(``test_fuzz_large.py``)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from rundir_fuzz import Base, build_base, fuzz_kind, kinds


@pytest.fixture(scope="module")
def base(shop_world, tmp_path_factory: pytest.TempPathFactory) -> Base:
    return build_base(tmp_path_factory.mktemp("rundir-base"), shop_world)


KINDS = [
    "race.json",
    "miner.json",
    "judge.jsonl",
    "proxy log",
    "race output.jsonl",
    "race manifest.json",
    "race config.yaml",
    "eval episodes.jsonl",
    "eval summary.json",
    "eval manifest.json",
    "pipeline manifest.json",
    "pipeline summary.json",
    "corpus.yaml",
    "pipeline.yaml",
    "train.yaml",
    "--out collisions",
]


def test_every_kind_is_fuzzed(base: Base) -> None:
    assert sorted(kinds(base)) == sorted(KINDS)


@pytest.mark.parametrize("kind", KINDS)
def test_damaged_run_directory_files_never_end_in_a_traceback(base: Base, kind: str, tmp_path: Path) -> None:
    outcome = fuzz_kind(base, kind, tmp_path, seed=20261202, cases=3)
    assert outcome.cases == 3
    assert outcome.tracebacks == [], "\n".join(outcome.tracebacks)


#: Cases per kind of the large run (``-m slow``); SHOPARENA_FUZZ_RUNDIR_CASES changes it for a measurement.
LARGE = int(os.environ.get("SHOPARENA_FUZZ_RUNDIR_CASES", "10000"))


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_large_run_directory_fuzz(base: Base, kind: str, tmp_path: Path) -> None:
    """``python -m pytest tests/fuzz/test_fuzz_rundirs.py -m slow -s`` (prints the exit tallies)."""
    started = time.perf_counter()
    outcome = fuzz_kind(base, kind, tmp_path, seed=20261203, cases=LARGE)
    seconds = time.perf_counter() - started
    print(f"\n{kind}: {outcome.cases} cases in {seconds:.0f} s, exits {dict(sorted(outcome.exits.items()))}")
    assert outcome.cases == LARGE
    assert outcome.tracebacks == [], "\n".join(outcome.tracebacks[:20])
