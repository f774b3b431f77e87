"""``shoparena corpus build``: ingest → filter → gates → recovery → split → views, resumable.

Layout of ``OUT`` (corpus contract): ``identity.json`` (kind, config and input content: a build
over other inputs or settings is refused unless ``restart``), ``config.yaml``, ``manifest.json``
(:class:`shoparena.runs.RunDir`),
``work/ingest-<content>.jsonl`` (one per input, keyed by the input's content and what scores it, renamed
into place when complete: a killed build re-ingests only unfinished inputs, and a changed input is never
served from the cache), ``work/classified.jsonl`` (pass 1: filter, recovery, gates, in ingest order: what
they changed), ``records.jsonl``, ``quarantine.jsonl``, ``problems.json``, ``views/``, ``report.json``,
``README.md`` and ``summary.json``. Every stage after ingest streams and is a pure function of the ingested
records and the configuration, so a re-run after a kill writes byte-identical records, Parquet and JSONL.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import orjson

from shoparena.corpus.card import sft_row_lengths
from shoparena.corpus.config import CorpusConfig
from shoparena.corpus.diversity import DiversityBuilder
from shoparena.corpus.export import ViewWriter
from shoparena.corpus.filter import classify
from shoparena.corpus.gates import OnlineGates, default_chat_tokenizer, default_gate_tokenizer
from shoparena.corpus.layout import (
    CLASSIFIED_NAME,
    DATASET_DICT_NAME,
    OWN_OUTPUTS,
    QUARANTINE_NAME,
    CorpusRun,
)
from shoparena.corpus.recover import recover_record, recoverable
from shoparena.corpus.report import ReportBuilder, write_card
from shoparena.corpus.sources import INGEST_WORKER_MEMORY_BYTES, file_context, ingest_source, ingest_task
from shoparena.corpus.split import ProblemIndex, assign_split
from shoparena.corpus.views import SPLITS, VIEWS
from shoparena.formats.profiles import profile_hash
from shoparena.jsonl import LineWriter, fewer_gc_passes, iter_raw_lines
from shoparena.records.corpus import CorpusRecord, CorpusReport
from shoparena.runs import RunDir
from shoparena.runs.identity import Restart, RunIdentity, RunKind
from shoparena.runs.machine import default_workers
from shoparena.suites.bench import BenchCache

Progress = Callable[[str], None]


def _atomic_write(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


#: Config fields that name inputs (identified by content in the run identity, not by path) or the output.
_PATH_FIELDS = {"run_dirs", "files", "problems", "index", "out"}


def corpus_identity(config: CorpusConfig) -> RunIdentity:
    """The build's identity: every setting, and the content of each input by its role and position."""
    inputs: dict[str, Path | None] = {f"run_dirs.{i}": p for i, p in enumerate(config.run_dirs)}
    inputs.update({f"files.{i}": p for i, p in enumerate(config.files)})
    inputs.update({f"problems.{i}": p for i, p in enumerate(config.problems)})
    inputs["index"] = config.index
    settings = config.model_dump(mode="json", exclude=_PATH_FIELDS)
    return RunIdentity.of(RunKind.CORPUS, settings, inputs)


def _sources(config: CorpusConfig) -> list[tuple[str, Path]]:
    return [("run", p) for p in config.run_dirs] + [("file", p) for p in config.files]


def _cache_keys(identity: RunIdentity, config: CorpusConfig) -> list[str]:
    """One ingest cache key per source, from content: a run directory's fingerprint; a file's with the
    suites and index that score it."""
    context = [v for k, v in sorted(identity.inputs.items()) if k.startswith("problems.") or k == "index"]
    keys = [identity.inputs[f"run_dirs.{i}"] for i in range(len(config.run_dirs))]
    for i in range(len(config.files)):
        keys.append(hashlib.sha256("\0".join([identity.inputs[f"files.{i}"], *context]).encode()).hexdigest())
    return [f"ingest-{kind}-{key[:24]}.jsonl" for (kind, _), key in zip(_sources(config), keys, strict=True)]


def ingest_all(
    config: CorpusConfig, work: Path, progress: Progress, cache: BenchCache, names: list[str]
) -> list[str]:
    """Ingest every source not already ingested (one atomically renamed file per source, named by
    ``names``: content keys); returns notes, in source order.

    With several sources left and ``config.workers`` (default: one per usable CPU) above one, sources are
    ingested in that many processes, each writing its own file; the files are read in source order
    afterwards, so every output is byte-identical to ingesting them one after another. The processes' suites
    and indexes stay in them: ``cache`` is filled only by an ingest in this process.
    """
    work.mkdir(parents=True, exist_ok=True)
    todo: list[tuple[int, Path, str, Path]] = []
    for i, (name, (kind, path)) in enumerate(zip(names, _sources(config), strict=True)):
        # Sources of the same content share one file: ingested once, by the first of them.
        if not (work / name).exists() and all(target.name != name for _, target, _, _ in todo):
            todo.append((i, work / name, kind, Path(path)))
    workers = config.workers or default_workers(INGEST_WORKER_MEMORY_BYTES)
    notes: dict[int, list[str]] = {}
    if workers <= 1 or len(todo) <= 1:
        for i, target, kind, path in todo:
            notes[i], count = ingest_source(config, target, kind, path, cache)
            progress(f"ingested {path}: {count} input record(s)")
        return [note for i in sorted(notes) for note in notes[i]]
    payload = config.model_dump_json()
    # spawn, not fork: the caller may run threads (progress bars, a server).
    pool = ProcessPoolExecutor(max_workers=min(workers, len(todo)), mp_context=get_context("spawn"))
    try:
        futures = {
            pool.submit(ingest_task, (payload, str(target), kind, str(path))): (i, path)
            for i, target, kind, path in todo
        }
        for future in as_completed(futures):
            i, path = futures[future]
            notes[i], count = future.result()  # an input's error (RunFileError...) is raised here
            progress(f"ingested {path}: {count} input record(s)")
    finally:
        pool.shutdown(cancel_futures=True)  # after an error, the sources not started never start
    return [note for i in sorted(notes) for note in notes[i]]


def _ingested(work: Path, names: list[str]) -> Iterator[dict[str, Any]]:
    for name in names:
        for _, line in iter_raw_lines(work / name):
            yield orjson.loads(line)


#: The fields of an ingested record that pass 1 sets (filter, gates); with every other field as ingested,
#: ``work/classified.jsonl`` holds only these for it (a line ``{"patch": {...}}``).
PASS1_FIELDS = frozenset({"structural_label", "outcome", "trainable_tokens"})


def classify_all(
    config: CorpusConfig, work: Path, tokenizer: Any, names: list[str], gates: OnlineGates | None = None
) -> tuple[ProblemIndex, int, Counter[str]]:
    """Pass 1: filter, recovery and gates record by record (ingest order) into ``work/classified.jsonl``
    (``gates``: the gates to run, default new ones over ``tokenizer``), read back by
    :func:`classified_records`.

    A line per record, in order: ``{"patch": {...}}`` for an ingested record whose changes are
    :data:`PASS1_FIELDS` alone (its other fields are read again from the ingest file: rewriting the whole
    record cost a serialisation, a write and a parse of every message), ``{"record": {...}}`` for a whole
    one (a recovered copy; every record when ``trusted_teacher`` rewrites the training flags)."""
    gates = gates if gates is not None else OnlineGates(config.gates, tokenizer)
    index = ProblemIndex()
    quarantined: Counter[str] = Counter()
    n_quarantined = 0
    target, quarantine = work / CLASSIFIED_NAME, work / QUARANTINE_NAME
    patch_source = not config.filter.trusted_teacher
    with (
        LineWriter(target.with_name(target.name + ".tmp")) as out,
        LineWriter(quarantine.with_name(quarantine.name + ".tmp")) as bad,
    ):
        for entry in _ingested(work, names):
            if entry["type"] == "quarantine":
                bad.dump(entry["item"])
                quarantined[entry["item"]["field"]] += 1
                n_quarantined += 1
                continue
            record = classify(CorpusRecord.model_validate(entry["item"]), config.filter, config.gates)
            batch = [record]
            if config.recover and recoverable(record):
                batch.append(recover_record(record, config.gates))
            for item in batch:
                gates.apply(item)
                index.add(item.problem_id, item.query, item.category, item.gt_product_ids)
                if item is record and patch_source:
                    line = {"patch": item.model_dump(mode="json", include=PASS1_FIELDS)}
                else:
                    line = {"record": item.model_dump(mode="json")}
                out.dump(line)
    os.replace(target.with_name(target.name + ".tmp"), target)
    os.replace(quarantine.with_name(quarantine.name + ".tmp"), quarantine)
    return index, n_quarantined, quarantined


def classified_records(work: Path, names: list[str]) -> Iterator[dict[str, Any]]:
    """Pass 1's records (``CorpusRecord.model_dump(mode="json")``), in its order: each patch line applied
    to the next record of the ingest files ``names`` (the fields keep their places)."""
    ingested = (entry["item"] for entry in _ingested(work, names) if entry["type"] == "record")
    for _, line in iter_raw_lines(work / CLASSIFIED_NAME):
        entry = orjson.loads(line)
        if "patch" in entry:
            record = next(ingested)
            record.update(entry["patch"])
            yield record
        else:
            yield entry["record"]


def _gate_tokenizer(config: CorpusConfig) -> Any:
    """The token gate's tokenizer: the default one as its ``tokenizers`` backend (no transformers import)."""
    return default_gate_tokenizer() if config.tokenizer is None else _tokenizer(config)


def _tokenizer(config: CorpusConfig) -> Any:
    """The configured tokenizer with its chat template; the default one without transformers (the same text
    and ids as the transformers wrapper, :func:`shoparena.corpus.gates.default_chat_tokenizer`)."""
    if config.tokenizer is None:
        return default_chat_tokenizer()
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(config.tokenizer)


def _known_problems(cache: BenchCache) -> dict[str, Any]:
    return dict(cache.problems())


def _shop_lookup(cache: BenchCache) -> Callable[[str], str | None] | None:
    """product id → shop id over every catalogue index the inputs used (the first that knows it)."""
    indexes = cache.indexes()
    if not indexes:
        return None

    def shop_of(product_id: str) -> str | None:
        for index in indexes:  # the same reading as suites.clusters.index_shop_lookup
            i = index.doc_index(product_id)
            if i is not None:
                return str(index.product_dict(i).get("shop_id") or "") or None
        return None

    return shop_of


def _problems_doc(sides: dict[str, tuple[str, str]], cache: BenchCache) -> list[dict[str, Any]]:
    from shoparena.suites.loaders import oro_record

    known = _known_problems(cache)
    out = []
    for pid, (cluster, split) in sorted(sides.items()):
        if pid in known:
            out.append({"problem_id": pid, **oro_record(known[pid]), "split": split, "cluster_id": cluster})
    return out


def _outputs_present(out: Path) -> bool:
    run = CorpusRun.at(out)
    paths = [run.records_path, run.report_path, run.problems_path, run.card_path]
    paths += [run.view_file(v, s, ext) for v in VIEWS for s in SPLITS for ext in ("parquet", "jsonl")]
    paths += [run.view_dataset_dir(v) / DATASET_DICT_NAME for v in VIEWS]
    return all(path.exists() for path in paths)


def build_corpus(
    config: CorpusConfig, *, progress: Progress | None = None, restart: Restart = False
) -> CorpusReport:
    """Build (or resume) the corpus in ``config.out``; returns its ``report.json``.

    Raises:
        RunDirError: ``out`` holds another kind of run, a build of other settings or inputs (unless
            ``restart``: its outputs are cleared first), or is, holds or lies in an input. Nothing is written.
    """
    say = progress or (lambda _msg: None)
    out = Path(config.out)
    identity = corpus_identity(config)
    inputs = [*config.run_dirs, *config.files, *config.problems, config.index]
    rundir = RunDir(
        out,
        kind=RunKind.CORPUS,
        config=config,
        identity=identity,
        own=OWN_OUTPUTS,
        input_paths=inputs,
        restart=restart,
    )
    try:
        with fewer_gc_passes():
            return _build(config, rundir, identity, say)
    finally:
        rundir.close()


def _build(config: CorpusConfig, rundir: RunDir, identity: RunIdentity, say: Progress) -> CorpusReport:
    out = rundir.path
    layout = CorpusRun.at(out)
    if rundir.done("build", config.model_dump(mode="json")) and _outputs_present(out):
        return layout.report()  # finished: nothing to redo
    cache = BenchCache()
    started = time.time()
    work = layout.work_dir
    names = _cache_keys(identity, config)
    notes = ingest_all(config, work, say, cache, names)
    say("filtering and gating")
    # The tokenizer loads (or trains) on the first record that reaches the token gate.
    gate_tokenizer = lambda: _gate_tokenizer(config)  # noqa: E731
    gates = OnlineGates(config.gates, gate_tokenizer)
    index, n_quarantined, quarantine_fields = classify_all(config, work, gate_tokenizer, names, gates)
    if not cache:  # resumed with every source ingested: reload ground truth and indexes
        from shoparena.corpus.ingest import load_run_context

        for path in config.run_dirs:
            load_run_context(Path(path), cache)
        if config.problems or config.index:
            file_context(config, cache)
    sides = assign_split(index, config.split, problems=_known_problems(cache), shop_of=_shop_lookup(cache))
    report = ReportBuilder()
    diversity = DiversityBuilder()
    os.replace(work / QUARANTINE_NAME, layout.quarantine_path)
    _atomic_write(layout.problems_path, json.dumps(_problems_doc(sides, cache), indent=1).encode())
    say("writing records and views")
    # Pass 2, one read of pass 1's output: records.jsonl, the report and every view (ingest order).
    views = ViewWriter(layout.views_dir, config.render_profile)
    tmp = layout.records_path.with_name(layout.records_path.name + ".tmp")
    try:
        with LineWriter(tmp) as fh:
            for record in classified_records(work, names):
                record["cluster_id"], record["split"] = sides[record["problem_id"]]
                report.add(record)
                diversity.add(record)
                fh.dump(record)
                views.add(record)
    except BaseException:
        views.abort()
        raise
    os.replace(tmp, layout.records_path)
    view_counts = views.close()
    doc = report.build(n_quarantined, dict(quarantine_fields), view_counts, config, notes)
    doc["render"] = {"profile": config.render_profile, "profile_hash": profile_hash(config.render_profile)}
    doc["diversity"] = diversity.build()
    if view_counts.get("sft_kept") and any(view_counts["sft_kept"].values()):
        # The default tokenizer's rows are counted by the gate's counter: the same backend, most pieces
        # (system prompt, tool list, user turns, tool results) already counted.
        count = gates.counter if config.tokenizer is None else None
        doc["sft_lengths"] = sft_row_lengths(layout.views_dir, _tokenizer(config), count)
    built = CorpusReport.model_validate(doc)
    _atomic_write(layout.report_path, json.dumps(built.document(), indent=2, sort_keys=True).encode())
    write_card(layout.card_path, built)
    rundir.complete("build", config.model_dump(mode="json"), started, {"records": built.funnel.records})
    funnel = built.funnel.model_dump(mode="json")
    rundir.write_summary({"report": layout.report_path.name, "funnel": funnel, "views": view_counts})
    return built


__all__ = [
    "OWN_OUTPUTS",
    "PASS1_FIELDS",
    "build_corpus",
    "classified_records",
    "classify_all",
    "corpus_identity",
    "ingest_all",
]
