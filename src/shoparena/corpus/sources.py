"""One source of a corpus build (a run directory or a ``--from`` file) into its ingest file: what the build's
ingest processes run. Kept apart from :mod:`shoparena.corpus.build` so that a process started for it
imports only what ingest needs (not the gates, views or diversity measure, and their libraries).
"""

from __future__ import annotations

import os
from pathlib import Path

from shoparena.corpus.config import CorpusConfig
from shoparena.corpus.ingest import ingest_file, ingest_run_dir
from shoparena.jsonl import LineWriter, fewer_gc_passes
from shoparena.records.corpus import CorpusRecord, Quarantined
from shoparena.runs.machine import MIB
from shoparena.scoring.bench import ScoringBench
from shoparena.suites.bench import BenchCache, open_bench

#: Resident memory of one ingest process (its interpreter, a suite, an index handle, a record at a time).
INGEST_WORKER_MEMORY_BYTES = 512 * MIB


def file_context(config: CorpusConfig, cache: BenchCache) -> ScoringBench:
    """The bench that scores ``--from`` files: every ``problems`` suite over the ``index``."""
    return open_bench(config.problems, config.index, cache=cache)


def ingest_source(
    config: CorpusConfig, target: Path, kind: str, path: Path, cache: BenchCache
) -> tuple[list[str], int]:
    """One source into ``target`` (written to a temporary sibling, renamed when complete): (notes, lines)."""
    tmp = target.with_name(target.name + ".tmp")
    notes: list[str] = []
    with LineWriter(tmp) as fh:

        def emit(item: CorpusRecord | Quarantined) -> None:
            tag = "record" if isinstance(item, CorpusRecord) else "quarantine"
            fh.dump({"type": tag, "item": item.model_dump(mode="json")})

        if kind == "run":
            notes = ingest_run_dir(Path(path), emit, cache)
        else:
            ingest_file(Path(path), file_context(config, cache), emit)
    os.replace(tmp, target)
    return notes, fh.count


#: An ingest process's suites and indexes, opened once per path for all the sources it ingests.
_WORKER_CACHE = BenchCache()


def ingest_task(item: tuple[str, str, str, str]) -> tuple[list[str], int]:
    """:func:`ingest_source` in an ingest process: (config JSON, target, kind, path)."""
    config_json, target, kind, path = item
    config = CorpusConfig.model_validate_json(config_json)
    with fewer_gc_passes():
        return ingest_source(config, Path(target), kind, Path(path), _WORKER_CACHE)


__all__ = ["INGEST_WORKER_MEMORY_BYTES", "file_context", "ingest_source", "ingest_task"]
