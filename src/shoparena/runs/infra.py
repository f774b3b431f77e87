"""``infra.jsonl``: the one reader and writer of infrastructure failures (:class:`InfraFailure`).

An episode that failed for an infrastructure reason is written here instead of to the episode files, so a
re-run of the same command retries it; once it succeeds its line here is history, not a pending failure.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from pydantic import ValidationError

from shoparena.jsonl import append_line, iter_jsonl
from shoparena.records.infra import InfraFailure

log = logging.getLogger(__name__)

INFRA_FILE = "infra.jsonl"


class InfraStopError(RuntimeError):
    """Every episode of a stage failed for one infrastructure reason: stop here, say which (one line)."""


def append_infra(run_dir: Path, failure: InfraFailure) -> None:
    append_line(Path(run_dir) / INFRA_FILE, failure.model_dump_json())


def read_infra(run_dir: Path) -> list[InfraFailure]:
    """Every readable line (missing file: []); a damaged line is skipped, with a warning naming its field."""
    path = Path(run_dir) / INFRA_FILE
    if not path.exists():
        return []
    out = []
    for line_no, value in iter_jsonl(path):
        try:
            if isinstance(value, ValueError):
                raise value
            out.append(InfraFailure.model_validate(value))
        except ValidationError as exc:
            err = exc.errors()[0]
            field = ".".join(str(p) for p in err["loc"]) or "(record)"
            log.warning("%s:%d: skipped an infra record: %s: %s", path, line_no, field, err["msg"])
        except ValueError as exc:
            log.warning("%s:%d: skipped an infra record: %s", path, line_no, exc)
    return out


def pending_infra(failures: Iterable[InfraFailure], done: Iterable[tuple[str, int]]) -> list[InfraFailure]:
    """The latest failure of each (problem, sample) that has not been run successfully since."""
    finished = set(done)
    latest: dict[tuple[str, int], InfraFailure] = {}
    for failure in failures:
        key = (failure.problem_id, failure.sample_idx)
        if key not in finished:
            latest[key] = failure
    return list(latest.values())


def infra_counts(failures: Iterable[InfraFailure]) -> dict[str, int]:
    return dict(sorted(Counter(f.reason.value for f in failures).items()))


def stop_if_all_infra(where: str, finished: int, pending: list[InfraFailure]) -> None:
    """Raise :class:`InfraStopError` when nothing finished and every episode failed for infrastructure.

    One reason is named with a sample message; several are counted. Any finished episode leaves the stage
    alone: its summaries count the failures and a re-run retries them.
    """
    if finished or not pending:
        return
    counts = infra_counts(pending)
    if len(counts) == 1:
        sample = " ".join(pending[0].message.split())[:200]
        why = f"one infrastructure reason, {next(iter(counts))} ({sample})"
    else:
        why = "infrastructure reasons (" + ", ".join(f"{k} {v}" for k, v in counts.items()) + ")"
    raise InfraStopError(
        f"{where}: all {len(pending)} episode(s) failed for {why}; "
        "fix it and re-run the same command to retry them"
    )


__all__ = [
    "INFRA_FILE",
    "InfraStopError",
    "append_infra",
    "infra_counts",
    "pending_infra",
    "read_infra",
    "stop_if_all_infra",
]
