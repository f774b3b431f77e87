"""Where a corpus build's CPU goes, without a profiler's overhead: the build's main functions wrapped to add
up their own CPU seconds (``time.process_time``, outermost call only; nested entries overlap their callers).

cProfile inflates Python-level calls several-fold against imports and Rust (the tokenizer, pyarrow), so its
shares misstate a build; these are the CPU seconds of an unprofiled build, one process, ``workers=1``.
Usage: ``python benchmarks/corpus_stage_cpu.py OUT RACE_DIR...`` (OUT must not exist).
"""

from __future__ import annotations

import functools
import importlib
import sys
import time
from pathlib import Path

#: (module, class or None, function): the stages of corpus.build and the larger steps inside them.
WRAPPED = [
    ("shoparena.corpus.build", None, "ingest_all"),
    ("shoparena.corpus.build", None, "classify_all"),
    ("shoparena.corpus.build", None, "corpus_identity"),
    ("shoparena.corpus.build", None, "assign_split"),
    ("shoparena.corpus.build", None, "sft_row_lengths"),
    ("shoparena.corpus.build", None, "write_card"),
    ("shoparena.corpus.ingest", None, "corpus_labels"),
    ("shoparena.corpus.ingest", None, "record_from_episode"),
    ("shoparena.corpus.ingest", None, "episode_evidence"),
    ("shoparena.arena.episodes", None, "parse_trajectory_value"),
    ("shoparena.arena.episodes", None, "trusted_log"),
    ("shoparena.corpus.gates", "OnlineGates", "apply"),
    ("shoparena.corpus.gates", None, "trainable_tokens"),
    ("shoparena.corpus.diversity", "DiversityBuilder", "add"),
    ("shoparena.corpus.export", "ViewWriter", "__init__"),
    ("shoparena.corpus.export", "ViewWriter", "add"),
    ("shoparena.corpus.export", "ViewWriter", "close"),
]


def _wrap(totals: dict[str, float], module: str, cls: str | None, name: str) -> None:
    owner = importlib.import_module(module)
    owner = getattr(owner, cls) if cls else owner
    inner = getattr(owner, name)
    label = f"{module.rsplit('.', 1)[-1]}.{cls + '.' if cls else ''}{name}"
    depth = [0]

    @functools.wraps(inner)
    def timed(*args: object, **kwargs: object) -> object:
        if depth[0]:
            return inner(*args, **kwargs)
        depth[0] += 1
        started = time.process_time()
        try:
            return inner(*args, **kwargs)
        finally:
            depth[0] -= 1
            totals[label] = totals.get(label, 0.0) + time.process_time() - started

    setattr(owner, name, timed)


def main() -> None:
    out, races = Path(sys.argv[1]), [Path(p) for p in sys.argv[2:]]
    started = time.process_time()
    from shoparena.corpus import CorpusConfig, build_corpus

    imported = time.process_time() - started
    totals: dict[str, float] = {}
    for module, cls, name in WRAPPED:
        _wrap(totals, module, cls, name)
    started = time.process_time()
    build_corpus(CorpusConfig(run_dirs=races, out=out, workers=1))
    total = time.process_time() - started
    print(f"build {total:.2f} CPU s (importing shoparena.corpus before it: {imported:.2f} CPU s)")
    for label, seconds in sorted(totals.items(), key=lambda kv: -kv[1]):
        print(f"  {label:40s} {seconds:6.2f}  {100 * seconds / total:5.1f} %")


if __name__ == "__main__":
    main()
