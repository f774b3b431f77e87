"""The evaluation-time leak guard and the suite's identity (hash and partition pool).

``--train-corpus DIR`` audits the suite against the TRAIN problems of a corpus (``DIR/problems.json``, each
record with ``split`` and ``cluster_id``) with :func:`shoparena.suites.audit.audit_files`, the same audit as
``shoparena suite audit``. A cluster with members on both sides is a leak: the run is refused unless
``--allow-leak``, and then every number it reports is labelled ``leaked``.
"""

from __future__ import annotations

from pathlib import Path

import orjson

from shoparena.corpus.layout import PROBLEMS_NAME
from shoparena.eval.layout import AUDIT_NAME
from shoparena.jsonl import iter_raw_lines
from shoparena.records.eval import LeakCheck, SuiteIdentity

CORPUS_PROBLEMS = PROBLEMS_NAME


class LeakError(RuntimeError):
    """The suite shares leak clusters with the training corpus (and ``--allow-leak`` was not given)."""


def partition_of(suite: Path, sha256: str) -> str:
    """The pool whose file is ``suite`` (by hash), read from a partition ``manifest.json`` beside it."""
    from shoparena.suites.partition import MANIFEST_NAME, read_manifest

    if not (suite.parent / MANIFEST_NAME).exists():
        return "unknown"
    try:
        manifest = read_manifest(suite.parent)
    except Exception:  # a run manifest or anything else that is not a partition
        return "unknown"
    for name, pool in manifest.pools.items():
        if any(ref.sha256 == sha256 for ref in pool.files.values()):
            return name
    return "unknown"


def train_split_file(corpus: Path, out_dir: Path) -> tuple[Path, int]:
    """Write the corpus's train problems to ``out_dir`` (same format) and count them.

    Raises:
        LeakError: the corpus has no ``problems.json`` or it cannot be read.
    """
    source = corpus / CORPUS_PROBLEMS
    if not source.is_file():
        raise LeakError(f"--train-corpus {corpus}: no {CORPUS_PROBLEMS} (not a corpus directory?)")
    data = source.read_bytes()
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / "train_problems.json"
    try:
        if data.lstrip()[:1] == b"[":
            records = orjson.loads(data)
        else:
            records = [orjson.loads(line) for _, line in iter_raw_lines(source)]
    except orjson.JSONDecodeError as exc:
        raise LeakError(f"--train-corpus {source}: not valid JSON: {exc}") from None
    train = [r for r in records if isinstance(r, dict) and str(r.get("split", "train")) == "train"]
    target.write_bytes(orjson.dumps(train))
    return target, len(train)


def check_leaks(
    suite: Path, corpus: Path | None, out_dir: Path, *, allow_leak: bool, index_dir: Path | None = None
) -> LeakCheck:
    """Audit ``suite`` against the corpus's train problems.

    Raises:
        LeakError: a cluster straddles suite and train split and ``allow_leak`` is false.
    """
    if corpus is None:
        return LeakCheck(status="unchecked", note="no --train-corpus: held-out status not verified")
    from shoparena.suites.audit import AuditInputError, audit_files

    train_file, n_train = train_split_file(corpus, out_dir)
    if n_train == 0:
        return LeakCheck(status="held_out", corpus=str(corpus), note="the corpus has no train problems")
    try:
        report = audit_files(suite, train_file, index_dir=index_dir)
    except AuditInputError as exc:
        raise ValueError(f"leak audit of {suite} against {corpus}: {exc}") from None
    (out_dir / AUDIT_NAME).write_text(report.model_dump_json(indent=1), encoding="utf-8")
    examples = [
        {
            "cluster_id": s.cluster_id,
            "suite": [r.model_dump() for r in s.a[:3]],
            "train": [r.model_dump() for r in s.b[:3]],
            "edges": s.edges_by_reason,
        }
        for s in report.straddling[:5]
    ]
    check = LeakCheck(
        status="leaked" if report.leak else "held_out",
        corpus=str(corpus),
        train_problems=n_train,
        straddling_clusters=report.counts.straddling_clusters,
        counts=report.counts.model_dump(),
        examples=examples,
    )
    if report.leak and not allow_leak:
        raise LeakError(
            f"suite {suite} leaks into the train split of {corpus}: "
            f"{report.counts.straddling_clusters} leak cluster(s) straddle them "
            f"(e.g. {examples[0]['cluster_id']}); see {out_dir / AUDIT_NAME}. "
            "Use a held-out suite, or --allow-leak to report the numbers labelled 'leaked'."
        )
    if report.leak:
        check.note = "--allow-leak: numbers are NOT held-out"
    return check


__all__ = ["LeakCheck", "LeakError", "SuiteIdentity", "check_leaks", "partition_of"]
