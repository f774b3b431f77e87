"""ORO ``output.jsonl`` envelopes (arena spec §3, §5): building, executor defaults, resumable append log."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any

from shoparena.jsonl import read_jsonl_dicts


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


def bucket_calls(steps: list[dict[str, Any]], calls: list[dict[str, Any]]) -> None:
    """Attach trusted summary entries to steps (in place): each goes to the last step stamped at or before it.

    Calls earlier than every step go to the first step; steps without a numeric timestamp are skipped.
    """
    if not steps:
        return
    stamps = [
        (i, s["extra_info"]["timestamp"])
        for i, s in enumerate(steps)
        if isinstance(s.get("extra_info"), dict) and isinstance(s["extra_info"].get("timestamp"), int | float)
    ]
    for call in calls:
        if call.get("kind", "summary") != "summary":
            continue
        target = 0
        for i, stamp in stamps:
            if stamp <= call.get("timestamp", 0):
                target = i
        info = steps[target].setdefault("extra_info", {})
        info.setdefault("proxy_calls", []).append(call)


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
    bucket_calls(dict_steps, trusted_calls)
    return dialogue


class EnvelopeLog:
    """Append-only ``output.jsonl`` with resume support.

    On open, a torn last line (a run killed mid-write) is cut off; :meth:`done` lists problem ids already
    recorded, so a restarted run skips them and never writes a problem twice.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._done: set[str] = set()
        if path.exists():
            raw = path.read_bytes()
            if raw and not raw.endswith(b"\n"):
                cut = raw.rfind(b"\n") + 1
                with open(path, "r+b") as fh:
                    fh.truncate(cut)
                raw = raw[:cut]
            for line in raw.split(b"\n"):  # never splitlines(): U+0085 may sit inside a record
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                if isinstance(record, dict) and record.get("problem_id") is not None:
                    self._done.add(str(record["problem_id"]))

    def done(self) -> set[str]:
        """Problem ids with an envelope."""
        with self._lock:
            return set(self._done)

    def append(self, envelope: dict[str, Any]) -> bool:
        """Append and fsync one envelope; False (nothing written) if its problem is already recorded."""
        line = json.dumps(envelope, ensure_ascii=False, default=str) + "\n"
        with self._lock:
            pid = envelope.get("problem_id")
            if pid is not None and str(pid) in self._done:
                return False
            with open(self.path, "a", encoding="utf-8") as fh:
                fh.write(line)
                fh.flush()
                os.fsync(fh.fileno())
            if pid is not None:
                self._done.add(str(pid))
            return True

    def read(self) -> list[dict[str, Any]]:
        """All envelopes (bare-list legacy lines are skipped)."""
        return read_jsonl_dicts(self.path)
