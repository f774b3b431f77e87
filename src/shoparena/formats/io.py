"""Read and write trajectory files in every supported line format, detected per line.

Recognised lines: ORO envelopes (``{problem_id, status, …, dialogue}``), old ORO bare dialogue lists,
ShoppingBench rollout lists (steps carry ``prompt``), native chat rows (``{id, messages, tools, source}``) and
this package's own :class:`Trajectory` JSON (``schema_version`` + ``steps``). Like the catalog loader, records
are split on ``\\n`` only, ``.gz`` files are handled, and every line is either kept or quarantined with its
line number and reason (``read == kept + quarantined``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from shoparena.catalog.io import LoadSummary, QuarantinedLine
from shoparena.formats._common import FormatError, reason_kind, type_name
from shoparena.formats.native import chat_to_trajectory
from shoparena.formats.oro import ENVELOPE_KEYS, dumps_oro_line, from_oro_dialogue, from_oro_envelope
from shoparena.formats.sb import dumps_sb_line, from_sb_rollout
from shoparena.jsonl import LineWriter, iter_raw_lines
from shoparena.records.message import ChatRow
from shoparena.records.trajectory import Trajectory


def _validation_error(exc: ValidationError, line_no: int | None, prefix: str = "") -> FormatError:
    err = exc.errors()[0]
    loc = ".".join(str(p) if str(p).strip() else repr(p) for p in err["loc"])  # name even a key ""
    return FormatError(f"{prefix}{loc}" if loc else prefix.rstrip("."), err["msg"], line_no=line_no)


def chat_row_to_trajectory(row: ChatRow, *, line_no: int | None = None) -> Trajectory:
    """A trajectory from a native chat row; the row's id, tools and source go to ``meta["chat_row"]``."""
    try:
        traj = chat_to_trajectory(row.messages)
    except FormatError as exc:
        raise FormatError(exc.path, exc.detail, line_no=line_no) from None
    traj.meta["chat_row"] = {"id": row.id, "tools": row.tools, "source": row.source}
    return traj


def parse_trajectory_value(obj: Any, *, line_no: int | None = None) -> Trajectory:
    """Turn one decoded line into a :class:`Trajectory`, detecting its format.

    Raises:
        FormatError: naming the line and the field.
    """
    if isinstance(obj, list):
        if any(isinstance(step, dict) and "prompt" in step for step in obj):
            return from_sb_rollout(obj, line_no=line_no)
        return from_oro_dialogue(obj, line_no=line_no)
    if not isinstance(obj, dict):
        raise FormatError("", f"expected an object or a list, got {type_name(obj)}", line_no=line_no)
    if "messages" in obj:
        try:
            row = ChatRow.model_validate(obj)
        except ValidationError as exc:
            raise _validation_error(exc, line_no) from None
        return chat_row_to_trajectory(row, line_no=line_no)
    if "schema_version" in obj and "steps" in obj:
        try:
            return Trajectory.model_validate(obj)
        except ValidationError as exc:
            raise _validation_error(exc, line_no) from None
    if any(key in obj for key in ENVELOPE_KEYS):
        return from_oro_envelope(obj, line_no=line_no)
    keys = ", ".join(list(obj)[:6])
    raise FormatError("", f"unrecognised record with keys {keys}", line_no=line_no)


def parse_trajectory_line(raw: bytes | str, *, line_no: int | None = None) -> Trajectory:
    """Decode and convert one line (see :func:`parse_trajectory_value`)."""
    try:
        obj = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise FormatError("", f"invalid JSON at char {exc.pos}: {exc.msg}", line_no=line_no) from None
    except UnicodeDecodeError as exc:
        raise FormatError("", f"invalid UTF-8 at byte {exc.start}", line_no=line_no) from None
    return parse_trajectory_value(obj, line_no=line_no)


def read_trajectories(
    path: str | Path,
    *,
    summary: LoadSummary | None = None,
    quarantine: Callable[[QuarantinedLine], None] | None = None,
    strict: bool = False,
) -> Iterator[Trajectory]:
    """Stream trajectories from a file of any supported line format (detected per line).

    Args:
        path: ``.jsonl`` or ``.jsonl.gz`` file.
        summary: Counts to update (``read == kept + quarantined``; reasons grouped by field path).
        quarantine: Receives each bad line with its number and reason.
        strict: Raise :class:`FormatError` on the first bad line instead.
    """
    summary = summary if summary is not None else LoadSummary(path=str(path))
    for line_no, raw in iter_raw_lines(path):
        summary.read += 1
        try:
            traj = parse_trajectory_line(raw, line_no=line_no)
        except FormatError as exc:
            if strict:
                raise
            kind = (
                "invalid JSON" if exc.detail.startswith("invalid") and not exc.path else reason_kind(exc.path)
            )
            summary.quarantined += 1
            summary.reasons[kind] = summary.reasons.get(kind, 0) + 1
            if quarantine is not None:
                reason = str(exc).split(": ", 1)[1]
                quarantine(QuarantinedLine(line_no, reason, raw.decode("utf-8", "replace")[:2000]))
            continue
        summary.kept += 1
        yield traj


def read_trajectory_file(
    path: str | Path, *, quarantine_path: str | Path | None = None, strict: bool = False
) -> tuple[list[Trajectory], LoadSummary]:
    """Read a whole trajectory file; bad lines go to ``quarantine_path`` (JSONL) when given."""
    summary = LoadSummary(path=str(path))
    quarantined: list[QuarantinedLine] = []
    trajectories = list(
        read_trajectories(path, summary=summary, quarantine=quarantined.append, strict=strict)
    )
    if quarantine_path is not None:
        with LineWriter(quarantine_path) as fh:
            for item in quarantined:
                fh.write(item.to_json())
    return trajectories, summary


def read_chat_rows(path: str | Path) -> Iterator[ChatRow]:
    """Stream native chat rows ``{id, messages, tools, source}`` (e.g. the SN15 SFT corpus).

    Raises:
        FormatError: naming the line and field of the first bad row.
    """
    for line_no, raw in iter_raw_lines(path):
        try:
            yield ChatRow.model_validate_json(raw)
        except ValidationError as exc:
            raise _validation_error(exc, line_no) from None


def _write_lines(path: str | Path, lines: Iterable[str]) -> int:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with LineWriter(path) as fh:
        for line in lines:
            fh.write(line.encode("utf-8", "surrogatepass"))
    return fh.count


def write_oro_envelopes(
    path: str | Path, trajectories: Iterable[Trajectory], *, legacy_bare: bool = False
) -> int:
    """Write ORO ``output.jsonl`` lines; returns the number written.

    Args:
        path: Target (``.gz`` compresses).
        trajectories: Records to write.
        legacy_bare: Write records read from old bare-list lines back as bare lists.
    """
    return _write_lines(path, (dumps_oro_line(t, legacy_bare=legacy_bare) for t in trajectories))


def write_sb_rollouts(
    path: str | Path, trajectories: Iterable[Trajectory], *, system_prompt: str = ""
) -> int:
    """Write ShoppingBench rollout lines; steps without a recorded prompt get one from ``system_prompt``."""
    return _write_lines(path, (dumps_sb_line(t, system_prompt=system_prompt) for t in trajectories))


def write_trajectories(path: str | Path, trajectories: Iterable[Trajectory]) -> int:
    """Write this package's own lossless :class:`Trajectory` JSON lines."""
    return _write_lines(path, (t.model_dump_json() for t in trajectories))


__all__ = [
    "chat_row_to_trajectory",
    "parse_trajectory_line",
    "parse_trajectory_value",
    "read_chat_rows",
    "read_trajectories",
    "read_trajectory_file",
    "write_oro_envelopes",
    "write_sb_rollouts",
    "write_trajectories",
]
