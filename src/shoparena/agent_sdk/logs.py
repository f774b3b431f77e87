"""Sandbox-side call logs with ORO's ``proxy_client`` names: ``RequestLog`` and ``InferenceStats``.

Both append one JSON line per event so data survives a killed process. They are the agent's own (untrusted)
records, written where ``$REQUEST_LOG_FILE`` / ``$INFERENCE_STATS_FILE`` point; the arena never scores from
them (the proxy keeps the trusted log), but ORO miners that use or reference them keep working.

Their ``summary`` and ``attempt`` lines are :class:`shoparena.records.proxy_log.ProxyLogEntry` records. This
package is stdlib only inside the sandbox, so it writes plain dicts; ``tests/records/test_proxy_log_entry.py``
holds them to the model.
"""

from __future__ import annotations

import json
import os
import threading
import time
from typing import Any


class RequestLog:
    """Appends ``summary`` (one per call) and ``attempt`` (one per HTTP try) entries; no file, no log."""

    def __init__(self, log_file: str | None = None) -> None:
        self._lock = threading.Lock()
        self._log_file = log_file

    def record(
        self,
        method: str,
        path: str,
        params: dict[str, Any] | None = None,
        json_data: Any = None,
        status_code: int | None = None,
        response_body: Any = None,
        duration_ms: float = 0.0,
    ) -> None:
        """One ``summary`` entry for a finished call (all retries included)."""
        entry: dict[str, Any] = {
            "kind": "summary",
            "method": method,
            "path": path,
            "timestamp": int(time.time() * 1000),
            "duration_ms": round(duration_ms, 1),
            "status_code": status_code,
        }
        if params:
            entry["params"] = {k: v for k, v in params.items() if v is not None}
        if json_data:
            entry["json_data"] = json_data
        if response_body is not None:
            entry["response"] = response_body
        self._write(entry)

    def record_attempt(
        self,
        method: str,
        path: str,
        attempt: int,
        duration_ms: float,
        status_code: int | None = None,
        error_class: str | None = None,
    ) -> None:
        """One ``attempt`` entry per HTTP try (a hung call shows as one long attempt)."""
        entry: dict[str, Any] = {
            "kind": "attempt",
            "method": method,
            "path": path,
            "timestamp": int(time.time() * 1000),
            "attempt": attempt,
            "duration_ms": round(duration_ms, 1),
            "status_code": status_code,
        }
        if error_class:
            entry["error_class"] = error_class
        self._write(entry)

    def _write(self, entry: dict[str, Any]) -> None:
        if not self._log_file:
            return
        with self._lock:
            try:
                with open(self._log_file, "a", encoding="utf-8") as fh:
                    fh.write(json.dumps(entry, default=str) + "\n")
            except OSError:
                pass  # best effort: a full or read-only disk must not crash the agent


class InferenceStats:
    """Counts inference successes and failures; appends the running totals after every call."""

    def __init__(self, stats_file: str | None = None) -> None:
        self._lock = threading.Lock()
        self._success = 0
        self._failed = 0
        self._stats_file = stats_file

    def record_success(self) -> None:
        with self._lock:
            self._success += 1
            self._flush()

    def record_failure(self) -> None:
        with self._lock:
            self._failed += 1
            self._flush()

    def _flush(self) -> None:
        if not self._stats_file:
            return
        try:
            problem = json.loads(os.environ.get("PROBLEM_DATA", "{}") or "{}")
            problem_id = problem.get("problem_id") or problem.get("id", "unknown")
        except (ValueError, AttributeError):
            problem_id = "unknown"
        entry = {
            "problem_id": str(problem_id),
            "inference_success": self._success,
            "inference_failed": self._failed,
            "inference_total": self._success + self._failed,
        }
        try:
            with open(self._stats_file, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(entry) + "\n")
        except OSError:
            pass
