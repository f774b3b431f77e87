"""Opening the scoring bench from files: a suite (or several) and a search index, each read once per path.

:class:`BenchCache` replaces the string-keyed ``dict`` caches (``"suite:…"``, ``"index:…"``) a corpus build
and the readers kept: a build that scores many race directories over one index opens the index once.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from shoparena.records.episode import ScoringInputs
from shoparena.records.problem import Problem
from shoparena.runs.files import RunFileError
from shoparena.scoring.bench import ScoringBench
from shoparena.scoring.lookup import MemoLookup
from shoparena.scoring.similarity import TitleSimilarity
from shoparena.search.engine import SearchIndex


class BenchCache:
    """Suites (problems by id) and search indexes, each opened once per path."""

    def __init__(self) -> None:
        self._suites: dict[str, dict[str, Problem]] = {}
        self._indexes: dict[str, SearchIndex] = {}

    def __bool__(self) -> bool:
        return bool(self._suites or self._indexes)

    def suite(self, path: str | Path) -> dict[str, Problem]:
        """The problems of a suite file by id (``suites.loaders.load_suite``).

        Raises:
            ValueError, OSError: the file cannot be read as a suite.
        """
        key = str(path)
        if key not in self._suites:
            from shoparena.suites.loaders import load_suite

            self._suites[key] = {p.problem_id: p for p in load_suite(path)[0]}
        return self._suites[key]

    def index(self, path: str | Path) -> SearchIndex:
        """The search index in ``path`` (the product lookup).

        Raises:
            ValueError, OSError: ``path`` is not an index.
        """
        key = str(path)
        if key not in self._indexes:
            self._indexes[key] = SearchIndex.open(path)
        return self._indexes[key]

    def problems(self) -> dict[str, Problem]:
        """Every problem of every suite opened so far (a later path, in sorted order, wins a shared id)."""
        known: dict[str, Problem] = {}
        for key in sorted(self._suites):
            known.update(self._suites[key])
        return known

    def indexes(self) -> list[SearchIndex]:
        """Every index opened so far, in sorted path order."""
        return [self._indexes[key] for key in sorted(self._indexes)]


def open_bench(
    suites: str | Path | Iterable[str | Path],
    index: str | Path | None,
    similarity: TitleSimilarity | str = "lexical",
    *,
    cache: BenchCache | None = None,
    model_path: str | Path | None = None,
) -> ScoringBench:
    """A bench over the problems of ``suites`` and the index in ``index`` (None: no lookup, nothing scores).

    Raises:
        ValueError, OSError: a suite or the index cannot be read.
    """
    cache = cache if cache is not None else BenchCache()
    paths = [suites] if isinstance(suites, str | Path) else list(suites)
    bench = ScoringBench(similarity=similarity, model_path=model_path)
    for path in paths:
        bench.add_problems(cache.suite(path))
    bench.lookup = cache.index(index) if index is not None else None
    return bench


def run_bench(
    inputs: ScoringInputs | None, *, config_path: Path, where: Path, cache: BenchCache
) -> tuple[ScoringBench, list[str]]:
    """The bench of a run's :class:`ScoringInputs` (None: the run has no config), with notes on what is
    missing: a suite or index that does not exist leaves the run's trajectories unscored (noted, not an
    error).

    Raises:
        RunFileError: the suite or index exists but cannot be read (names ``config_path`` and the key).
    """
    notes: list[str] = []
    if inputs is None:
        inputs = ScoringInputs()
        notes.append(f"{config_path}: missing; trajectories are not scored")
    bench = ScoringBench(similarity=inputs.similarity)
    suite = inputs.suite
    if suite and Path(suite).exists():
        try:
            bench.add_problems(cache.suite(suite))
        except (ValueError, OSError) as exc:
            raise RunFileError(f"{config_path}: suite: {suite}: {_first_line(exc)}") from None
    else:
        notes.append(f"{where}: suite {suite!r} not readable; trajectories are not scored")
    index = inputs.index
    if index and Path(index).exists():
        try:
            # Products are read once per id for the whole run (both profiles, every miner's trajectory).
            bench.lookup = MemoLookup(cache.index(index))
        except (ValueError, OSError) as exc:
            raise RunFileError(
                f"{config_path}: index: {index} is not an index ({_first_line(exc)})"
            ) from None
    else:
        notes.append(f"{where}: index {index!r} not readable; trajectories are not scored")
    return bench, notes


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


__all__ = ["BenchCache", "open_bench", "run_bench"]
