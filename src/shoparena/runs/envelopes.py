"""ORO ``output.jsonl`` envelopes (arena spec §3, §5): the one writer for the episode runner and the arena.

Building (:func:`make_envelope`), executor defaults and the one proxy-call bucketing rule
(:func:`bucket_proxy_calls`), and :class:`EnvelopeLog`: append + fsync, torn-last-line repair, resume by the
completed problem ids. Lines are written like ORO's Python side (``json.dumps`` defaults); typed
trajectories are turned into envelope dicts by :func:`shoparena.formats.oro.to_oro_envelope`.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from shoparena.jsonl import append_line, read_jsonl_dicts, repair_torn_tail
from shoparena.records.proxy_log import is_summary

#: The envelope log's name wherever one is kept (episodes and eval runs, an arena agent's folder).
ENVELOPE_LOG_NAME = "output.jsonl"


def envelope_log_path(directory: str | Path) -> Path:
    """``directory``'s envelope log."""
    return Path(directory) / ENVELOPE_LOG_NAME


def make_envelope(
    problem_id: str | None,
    status: str,
    execution_time: float,
    *,
    error: dict[str, str] | None = None,
    dialogue: list[Any] | None = None,
    inference_total: int = 0,
    inference_failure_count: int = 0,
) -> dict[str, Any]:
    """One envelope in ORO's key order; ``dialogue`` is kept only for SUCCESS."""
    if status not in ("SUCCESS", "FAILED", "TIMED_OUT"):
        raise ValueError(f"envelope.status must be SUCCESS, FAILED or TIMED_OUT, got {status!r}")
    return {
        "problem_id": problem_id,
        "status": status,
        "execution_time": round(float(execution_time), 3),
        "inference_failure_count": int(inference_failure_count),
        "inference_total": int(inference_total),
        "error": None if status == "SUCCESS" else error,
        "dialogue": dialogue if status == "SUCCESS" else None,
    }


def _stamp(value: Any) -> float | None:
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


def bucket_proxy_calls(
    step_timestamps: Sequence[Any], calls: Iterable[dict[str, Any]]
) -> list[list[dict[str, Any]]]:
    """Assign trusted proxy summary entries to steps by timestamp (arena spec §5.3); one list per step.

    An entry goes to the last step stamped at or before it (anywhere in the list, so a step whose stamp was
    filled at write time does not hide the later ones); entries earlier than every step go to the first step.
    Steps without a numeric timestamp never receive entries; an entry without one counts as 0. Only
    summary entries are bucketed (:func:`shoparena.records.proxy_log.is_summary`: a missing kind is a
    summary; ``attempt`` entries are diagnostic).
    """
    stamps = [_stamp(t) for t in step_timestamps]
    buckets: list[list[dict[str, Any]]] = [[] for _ in stamps]
    if not stamps:
        return buckets
    for call in calls:
        if not is_summary(call):
            continue
        call_ts = _stamp(call.get("timestamp")) or 0
        target = 0
        for i, stamp in enumerate(stamps):
            if stamp is not None and stamp <= call_ts:
                target = i
        buckets[target].append(call)
    return buckets


def apply_executor_defaults(
    dialogue: list[Any],
    *,
    query: str,
    problem_id: str | None,
    execution_time: float,
    trusted_calls: list[dict[str, Any]],
    now_ms: int | None = None,
) -> list[Any]:
    """ORO executor defaults on an agent's steps, plus the arena's trusted ``proxy_calls``.

    Fills ``step`` (1-based), ``query`` and a missing ``timestamp`` (write time), adds ``problem_id``, puts
    ``execution_time`` on the first step only, **drops** any agent-written ``proxy_calls`` and buckets the
    proxy's own summary entries instead. Non-dict steps are left untouched (the format scorer judges them).
    """
    stamp = int(time.time() * 1000) if now_ms is None else now_ms
    dict_steps: list[dict[str, Any]] = []
    for index, step in enumerate(dialogue):
        if not isinstance(step, dict):
            continue
        info = step.get("extra_info")
        if not isinstance(info, dict):
            info = {}
            step["extra_info"] = info
        info.setdefault("step", index + 1)
        info.setdefault("query", query)
        info.setdefault("timestamp", stamp)
        if problem_id is not None:
            info["problem_id"] = problem_id
        info.pop("proxy_calls", None)  # agent-written, untrusted
        info.pop("execution_time", None)
        dict_steps.append(step)
    if dict_steps:
        dict_steps[0]["extra_info"]["execution_time"] = round(execution_time, 3)
    stamps = [step["extra_info"].get("timestamp") for step in dict_steps]
    for step, bucket in zip(dict_steps, bucket_proxy_calls(stamps, trusted_calls), strict=True):
        if bucket:
            step["extra_info"]["proxy_calls"] = bucket
    return dialogue


def dumps_envelope(envelope: dict[str, Any]) -> str:
    """One ``output.jsonl`` line (no newline), serialised like ORO's Python side (``json.dumps`` defaults)."""
    return json.dumps(envelope, default=str)


class EnvelopeLog:
    """Append-only ``output.jsonl`` with resume support (thread-safe).

    On open, a torn last line (a run killed mid-write) is cut off; :meth:`done` lists problem ids already
    recorded, so a restarted run skips them and never writes a problem twice. Each append is fsynced.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._done: set[str] = set()
        self.repaired_bytes = repair_torn_tail(self.path)
        for record in read_jsonl_dicts(self.path):
            if record.get("problem_id") is not None:
                self._done.add(str(record["problem_id"]))

    def done(self) -> set[str]:
        """Problem ids with an envelope."""
        with self._lock:
            return set(self._done)

    def append(self, envelope: dict[str, Any]) -> bool:
        """Append and fsync one envelope; False (nothing written) if its problem is already recorded."""
        line = dumps_envelope(envelope)
        with self._lock:
            pid = envelope.get("problem_id")
            if pid is not None and str(pid) in self._done:
                return False
            append_line(self.path, line)
            if pid is not None:
                self._done.add(str(pid))
            return True

    def read(self) -> list[dict[str, Any]]:
        """All envelopes (bare-list legacy lines are skipped)."""
        return read_jsonl_dicts(self.path)


__all__ = [
    "ENVELOPE_LOG_NAME",
    "EnvelopeLog",
    "apply_executor_defaults",
    "bucket_proxy_calls",
    "dumps_envelope",
    "envelope_log_path",
    "make_envelope",
]
