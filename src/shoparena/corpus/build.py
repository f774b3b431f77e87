"""``shoparena corpus build``: ingest → filter → gates → recovery → split → views, resumable.

Layout of ``OUT`` (corpus contract): ``config.yaml``, ``manifest.json`` (:class:`shoparena.runs.RunDir`),
``work/ingest-NNN.jsonl`` (one per input, written atomically: a killed build re-ingests only unfinished
inputs), ``records.jsonl``, ``quarantine.jsonl``, ``problems.json``, ``views/``, ``report.json``,
``README.md`` and ``summary.json``. Every later stage is a pure function of the ingested records and the
configuration, so a re-run after a kill writes byte-identical records, Parquet and JSONL.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from shoparena.corpus.config import CorpusConfig
from shoparena.corpus.export import export_views
from shoparena.corpus.filter import classify
from shoparena.corpus.gates import apply_gates, default_tokenizer
from shoparena.corpus.ingest import ScoringContext, ingest_file, ingest_run_dir
from shoparena.corpus.recover import recover
from shoparena.corpus.report import build_report, write_card
from shoparena.corpus.split import assign_split
from shoparena.records.corpus import CorpusRecord, Quarantined
from shoparena.runs import RunDir

Progress = Callable[[str], None]


def _atomic_write(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _sources(config: CorpusConfig) -> list[tuple[str, Path]]:
    return [("run", p) for p in config.run_dirs] + [("file", p) for p in config.files]


def _file_context(config: CorpusConfig, cache: dict[str, Any]) -> ScoringContext:
    context = ScoringContext()
    for suite in config.problems:
        from shoparena.suites.loaders import load_suite

        key = f"suite:{suite}"
        if key not in cache:
            cache[key] = {p.problem_id: p for p in load_suite(suite)[0]}
        context.problems.update(cache[key])
    if config.index is not None:
        from shoparena.search import SearchIndex

        key = f"index:{config.index}"
        if key not in cache:
            cache[key] = SearchIndex.open(config.index)
        context.lookup = cache[key]
    return context


def ingest_all(config: CorpusConfig, work: Path, progress: Progress, cache: dict[str, Any]) -> list[str]:
    """Ingest every source not already ingested (one atomic file per source); returns notes."""
    work.mkdir(parents=True, exist_ok=True)
    notes: list[str] = []
    for i, (kind, path) in enumerate(_sources(config)):
        target = work / f"ingest-{i:03d}.jsonl"
        if target.exists():
            continue
        lines: list[bytes] = []

        def emit(item: CorpusRecord | Quarantined, lines: list[bytes] = lines) -> None:
            tag = "record" if isinstance(item, CorpusRecord) else "quarantine"
            lines.append(orjson.dumps({"type": tag, "item": item.model_dump(mode="json")}))

        if kind == "run":
            notes += ingest_run_dir(Path(path), emit, cache)
        else:
            ingest_file(Path(path), _file_context(config, cache), emit)
        _atomic_write(target, b"\n".join(lines) + (b"\n" if lines else b""))
        progress(f"ingested {path}: {len(lines)} input record(s)")
    return notes


def load_ingested(work: Path, n_sources: int) -> tuple[list[CorpusRecord], list[Quarantined]]:
    records: list[CorpusRecord] = []
    quarantined: list[Quarantined] = []
    for i in range(n_sources):
        for line in (work / f"ingest-{i:03d}.jsonl").read_bytes().splitlines():
            entry = orjson.loads(line)
            if entry["type"] == "record":
                records.append(CorpusRecord.model_validate(entry["item"]))
            else:
                quarantined.append(Quarantined.model_validate(entry["item"]))
    return records, quarantined


def process(records: list[CorpusRecord], config: CorpusConfig, tokenizer: Any) -> list[CorpusRecord]:
    """Filter, recover, gate and split (in place + recovered copies); returns every record, sorted."""
    for record in records:
        classify(record, config.filter, config.gates)
    recovered = list(recover(records, config.gates)) if config.recover else []
    everything = sorted(records + recovered, key=lambda r: r.record_id)
    apply_gates(everything, config.gates, tokenizer)
    assign_split(everything, config.split)
    return everything


def _tokenizer(config: CorpusConfig) -> Any:
    if config.tokenizer is None:
        return default_tokenizer()
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(config.tokenizer)


def _problems_doc(records: list[CorpusRecord], cache: dict[str, Any]) -> list[dict[str, Any]]:
    from shoparena.suites.loaders import oro_record

    known: dict[str, Any] = {}
    for key, value in sorted(cache.items()):
        if key.startswith("suite:"):
            known.update(value)
    seen: dict[str, CorpusRecord] = {}
    for record in records:
        seen.setdefault(record.problem_id, record)
    out = []
    for pid, record in sorted(seen.items()):
        if pid in known:
            doc = {"problem_id": pid, **oro_record(known[pid])}
            doc.update(split=record.split, cluster_id=record.cluster_id)
            out.append(doc)
    return out


def build_corpus(config: CorpusConfig, *, progress: Progress | None = None) -> dict[str, Any]:
    """Build (or resume) the corpus in ``config.out``; returns the report."""
    say = progress or (lambda _msg: None)
    out = Path(config.out)
    rundir = RunDir(out, kind="corpus", config=config)
    cache: dict[str, Any] = {}
    started = time.time()
    work = out / "work"
    notes = ingest_all(config, work, say, cache)
    records, quarantined = load_ingested(work, len(_sources(config)))
    say(f"{len(records)} record(s), {len(quarantined)} quarantined; filtering")
    everything = process(records, config, _tokenizer(config))
    _atomic_write(
        out / "records.jsonl", b"".join(orjson.dumps(r.model_dump(mode="json")) + b"\n" for r in everything)
    )
    _atomic_write(
        out / "quarantine.jsonl",
        b"".join(orjson.dumps(q.model_dump(mode="json")) + b"\n" for q in quarantined),
    )
    if not cache:  # resumed run with every source ingested: reload ground truth for problems.json
        for path in config.run_dirs:
            from shoparena.corpus.ingest import load_run_context

            load_run_context(Path(path), cache)
        if config.problems:
            _file_context(config, cache)
    problems = _problems_doc(everything, cache)
    _atomic_write(out / "problems.json", json.dumps(problems, indent=1, ensure_ascii=False).encode())
    say("exporting views")
    view_counts = export_views(everything, out / "views")
    report = build_report(everything, quarantined, view_counts, config, notes)
    _atomic_write(out / "report.json", json.dumps(report, indent=2, sort_keys=True).encode())
    write_card(out / "README.md", report, config)
    rundir.complete("build", config.model_dump(mode="json"), started, {"records": len(everything)})
    rundir.write_summary({"report": "report.json", "funnel": report["funnel"], "views": view_counts})
    return report


__all__ = ["build_corpus", "ingest_all", "load_ingested", "process"]
