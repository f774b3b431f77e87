"""Ingesting inputs in several processes writes the same corpus, byte for byte, as one after another."""

from __future__ import annotations

import shutil
from pathlib import Path

from sandbox_marks import needs_bwrap
from shoparena.corpus import CorpusConfig, build_corpus

#: Files that name the output folder or record when and how long, and the lock; the rest must match.
_RUN_SPECIFIC = {"config.yaml", "manifest.json", "summary.json", "run.lock"}


def _snapshot(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.name not in _RUN_SPECIFIC and "work" not in p.relative_to(root).parts
    }


@needs_bwrap
def test_parallel_ingest_equals_serial(firehose_dir: Path, tmp_path: Path):
    race = firehose_dir / "race-000"
    twin = tmp_path / "race-twin"  # another race: the same run with one trajectory fewer
    shutil.copytree(race, twin)
    log = sorted((twin / "agents").glob("*/output.jsonl"))[0]
    log.write_bytes(b"".join(log.read_bytes().splitlines(keepends=True)[1:]))
    envelopes = tmp_path / "envelopes.jsonl"
    envelopes.write_bytes(next(iter(sorted((race / "agents").glob("*/output.jsonl")))).read_bytes())
    messages: dict[int, list[str]] = {}
    outs = {}
    for workers in (1, 2):
        outs[workers] = tmp_path / f"c{workers}"
        config = CorpusConfig(run_dirs=[race, twin], files=[envelopes], out=outs[workers], workers=workers)
        messages[workers] = []
        build_corpus(config, progress=messages[workers].append)
    serial, parallel = _snapshot(outs[1]), _snapshot(outs[2])
    assert "records.jsonl" in serial and any(name.startswith("views/") for name in serial)
    assert parallel == serial
    ingested = sorted(m for m in messages[2] if m.startswith("ingested"))
    assert ingested == sorted(m for m in messages[1] if m.startswith("ingested"))
