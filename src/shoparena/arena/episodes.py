"""Episodes out of what runs leave behind: every input line becomes one
:class:`~shoparena.records.episode.Episode` or one :class:`~shoparena.records.corpus.Quarantined` entry naming
the line and the field.

- an arena run directory (``arena run``, a firehose race): :meth:`ArenaRun.read_episodes
  <shoparena.arena.layout.ArenaRun.read_episodes>`, each agent's envelopes with the proxy's trusted log of
  the problem (:func:`trusted_log`), the judge's verdict and the harness truth (``miner.json``); an agent
  folder the manifest does not list is quarantined line by line;
- a run whose trajectories are one envelope log (an ``eval run``): :func:`envelope_log_episodes`;
- a ``--from`` file of ORO envelopes (also bare dialogue lists), ShoppingBench rollouts or SN15 chat rows,
  detected per line by :func:`shoparena.formats.io.parse_trajectory_value`: :func:`file_episodes`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from shoparena.arena.proxy_log import summaries
from shoparena.formats._common import FormatError
from shoparena.formats.io import parse_trajectory_value
from shoparena.jsonl import iter_jsonl, iter_raw_lines
from shoparena.records.corpus import Quarantined
from shoparena.records.episode import Episode, EpisodeOrigin
from shoparena.records.proxy_log import ProxyLogEntry, proxy_entries
from shoparena.records.trajectory import Trajectory
from shoparena.runs.layout import EnvelopeLogRun

EpisodeItem = Episode | Quarantined
#: What a reader catches from agent content that slipped past the format adapter (pydantic validation
#: included): still a reasoned quarantine.
CONTENT_ERRORS = (ValueError, TypeError, KeyError, AttributeError, IndexError)


# --- files ------------------------------------------------------------------------------------------------


def file_episodes(path: Path, run_id: str) -> Iterator[EpisodeItem]:
    """Each JSON line of ``path`` → one episode or quarantine (a line that is not JSON is quarantined)."""
    counts: dict[str, int] = {}
    for line_no, raw in iter_raw_lines(path):
        try:
            obj = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            yield line_quarantine(path, line_no, "", f"invalid JSON: {exc}")
            continue
        yield line_episode(obj, path, line_no, run_id, counts)


def envelope_log_episodes(run: EnvelopeLogRun) -> Iterator[EpisodeItem]:
    """The episodes of a run whose trajectories are one envelope log (an ``eval run``: a policy's scored
    episodes, the input of rejection sampling); their evidence is the envelope's, as for ``--from`` files.

    Raises:
        RunFileError: the log is missing.
    """
    source = run.need(run.envelope_log, "an eval run directory without its episodes")
    return file_episodes(source, f"{run.run_id}/{run.kind}")


def line_quarantine(source: Path, line_no: int, field: str, reason: str) -> Quarantined:
    """A quarantine entry for an input line that is not a usable record at all."""
    return Quarantined(source=str(source), line=line_no, record=f"line {line_no}", field=field, reason=reason)


def content_quarantine(origin: EpisodeOrigin, exc: Exception) -> Quarantined:
    """The quarantine entry of a file line whose content fails (a format error, or a record error naming the
    field pydantic names)."""
    if isinstance(exc, FormatError):
        field, reason = exc.path or "(record)", exc.detail
    else:
        first = str(exc).splitlines()[0] if str(exc) else ""
        field, reason = _error_field(exc), f"{type(exc).__name__}: {first}"
    return Quarantined(
        source=origin.source_path, line=origin.source_line, record=origin.record, field=field, reason=reason
    )


def _problem_id_of(traj: Trajectory, obj: Any, line_no: int) -> str:
    from shoparena.records.problem import problem_id_for_query

    if traj.problem_id:
        return str(traj.problem_id)
    if isinstance(obj, dict) and obj.get("id"):
        return str(obj["id"])
    return problem_id_for_query(traj.query) if traj.query else f"line{line_no}"


def line_episode(obj: Any, path: Path, line_no: int, run_id: str, counts: dict[str, int]) -> EpisodeItem:
    """One decoded line of a file → its episode (the ``counts``-th of its problem) or its quarantine."""
    label = f"line {line_no}"
    if isinstance(obj, dict) and isinstance(obj.get("id"), str):
        label = f"line {line_no} (id {obj['id']})"
    elif isinstance(obj, dict) and isinstance(obj.get("problem_id"), str):
        label = f"line {line_no} (problem {obj['problem_id']})"
    origin = EpisodeOrigin(
        source_format="", source_path=str(path), source_line=line_no, run_id=run_id, record=label
    )
    try:
        traj = parse_trajectory_value(obj, line_no=line_no)
        chat = obj["messages"] if traj.source_format == "chat" else None
        pid = _problem_id_of(traj, obj, line_no)
        idx = counts.get(pid, 0)
        counts[pid] = idx + 1
        origin.source_format = traj.source_format
        if isinstance(obj, dict) and isinstance(obj.get("source"), dict):
            origin.dataset = str(obj["source"].get("dataset") or "") or None
        return Episode(
            trajectory=traj, problem_id=pid, rollout_idx=idx, origin=origin, chat_messages=chat
        )
    except (FormatError, *CONTENT_ERRORS) as exc:
        return content_quarantine(origin, exc)


def _error_field(exc: Exception) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors):
        try:
            first = errors()[0]
            return ".".join(str(p) for p in first.get("loc", ())) or "(record)"
        except Exception:
            return "(record)"
    return "(record)"


# --- arena run directories --------------------------------------------------------------------------------


def trusted_log(path: Path) -> tuple[list[ProxyLogEntry], str | None]:
    """The trusted log of one problem and what is wrong with it: missing, or a torn / foreign line. The
    proxy creates the file when the episode starts, so a missing or damaged one is lost evidence (never
    read as an empty log, which would make an honest trajectory look forged)."""
    values = []
    try:  # opened, not looked up first: one system call fewer per problem
        for line_no, value in iter_jsonl(path):  # parsed once (was: checked, then read again)
            if not isinstance(value, dict):
                return [], f"{path.name}:{line_no}: torn or not an object"
            values.append(value)
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return [], f"{path.name}: missing"
    return summaries(proxy_entries(values)), None


__all__ = [
    "CONTENT_ERRORS",
    "EpisodeItem",
    "content_quarantine",
    "envelope_log_episodes",
    "file_episodes",
    "line_episode",
    "line_quarantine",
    "trusted_log",
]
