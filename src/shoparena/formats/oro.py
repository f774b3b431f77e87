"""ORO ``output.jsonl`` envelopes and dialogues (arena spec §5), plus proxy-call bucketing (§5.3).

One line per problem: ``{problem_id, status, execution_time, inference_failure_count, inference_total, error,
dialogue}`` where ``dialogue`` is null unless the problem succeeded. Older files hold the bare dialogue list.
Steps put tool results inline (``message.tool_call[].result``) and carry ``extra_info.problem_id`` and
``proxy_calls``. ORO writes lines with Python ``json.dumps`` defaults, reproduced by
:func:`dumps_oro_line`; appending them resumably is :class:`shoparena.runs.envelopes.EnvelopeLog`'s job.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from shoparena.formats._common import FormatError, emit, is_number, oro_dumps, type_name, unknown_fields
from shoparena.formats._steps import step_from_dict, step_to_dict
from shoparena.records.trajectory import EpisodeStatus, Step, Trajectory, TrajectoryError
from shoparena.runs.envelopes import bucket_proxy_calls

ENVELOPE_KEYS: tuple[str, ...] = (
    "problem_id",
    "status",
    "execution_time",
    "inference_failure_count",
    "inference_total",
    "error",
    "dialogue",
)


def _fail(path: str, detail: str, line_no: int | None) -> FormatError:
    return FormatError(path, detail, line_no=line_no)


def steps_from_dialogue(
    dialogue: list[Any], *, path: str = "dialogue", line_no: int | None = None
) -> list[Step]:
    """Read a dialogue list into steps; errors name ``line_no`` and ``dialogue[i]``."""
    steps = []
    for i, obj in enumerate(dialogue):
        try:
            steps.append(step_from_dict(obj, position=i, path=f"{path}[{i}]"))
        except FormatError as exc:
            raise _fail(exc.path, exc.detail, line_no) from None
    return steps


def _query_of(steps: Sequence[Step]) -> str:
    for step in steps:
        query = step.extra_info.get("query")
        if isinstance(query, str):
            return query
    return ""


def from_oro_dialogue(dialogue: list[Any], *, line_no: int | None = None) -> Trajectory:
    """A trajectory from an old-format line (a bare dialogue list). Status is SUCCESS by construction."""
    steps = steps_from_dialogue(dialogue, path="dialogue", line_no=line_no)
    first = steps[0].extra_info if steps else {}
    problem_id = first.get("problem_id")
    execution_time = first.get("execution_time")
    return Trajectory(
        problem_id=problem_id if isinstance(problem_id, str) else None,
        query=_query_of(steps),
        execution_time=float(execution_time) if is_number(execution_time) else None,
        steps=steps,
        source_format="oro_bare",
    )


def from_oro_envelope(obj: Any, *, line_no: int | None = None) -> Trajectory:
    """Read one ``output.jsonl`` line (already JSON-decoded): an envelope or an old bare dialogue list.

    Envelope fields are written by the validator, so a wrong type there is an error; step contents are written
    by the agent and read leniently (see :mod:`shoparena.formats._steps`).

    Raises:
        FormatError: naming ``line_no`` and the field.
    """
    if isinstance(obj, list):
        return from_oro_dialogue(obj, line_no=line_no)
    if not isinstance(obj, dict):
        raise _fail("", f"expected an envelope object or a dialogue list, got {type_name(obj)}", line_no)
    unknown = {k: v for k, v in obj.items() if k not in ENVELOPE_KEYS}
    problem_id = obj.get("problem_id")
    if problem_id is not None and not isinstance(problem_id, str):
        raise _fail("problem_id", f"expected a string or null, got {type_name(problem_id)}", line_no)
    status = obj.get("status", EpisodeStatus.SUCCESS.value)
    if not isinstance(status, str) or status not in {s.value for s in EpisodeStatus}:
        raise _fail("status", f"expected SUCCESS, FAILED or TIMED_OUT, got {status!r}", line_no)
    execution_time = obj.get("execution_time")
    if execution_time is not None and not is_number(execution_time):
        raise _fail("execution_time", f"expected a number or null, got {type_name(execution_time)}", line_no)
    if isinstance(execution_time, int):
        unknown["execution_time"] = execution_time  # keep the int spelling for byte-exact writing
    counts = {}
    for key in ("inference_failure_count", "inference_total"):
        value = obj.get(key, 0)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise _fail(key, f"expected a non-negative integer, got {value!r}", line_no)
        counts[key] = value
    error_obj = obj.get("error")
    error = None
    if error_obj is not None:
        if not isinstance(error_obj, dict):
            raise _fail("error", f"expected an object or null, got {type_name(error_obj)}", line_no)
        if list(error_obj) == ["type", "message"] and all(isinstance(v, str) for v in error_obj.values()):
            error = TrajectoryError(type=error_obj["type"], message=error_obj["message"])
        else:
            # Non-standard error objects are kept verbatim; the record still gets a readable summary.
            unknown["error"] = error_obj
            error = TrajectoryError(type=str(error_obj.get("type", "UnknownError")), message=str(error_obj))
    dialogue = obj.get("dialogue")
    if dialogue is not None and not isinstance(dialogue, list):
        raise _fail("dialogue", f"expected a list or null, got {type_name(dialogue)}", line_no)
    steps = steps_from_dialogue(dialogue, line_no=line_no) if dialogue is not None else []
    return Trajectory(
        problem_id=problem_id,
        status=EpisodeStatus(status),
        execution_time=float(execution_time) if execution_time is not None else None,
        inference_failure_count=counts["inference_failure_count"],
        inference_total=counts["inference_total"],
        error=error,
        query=_query_of(steps),
        steps=steps,
        dialogue_is_null=dialogue is None,
        source_format="oro_envelope",
        unknown_keys=unknown,
        key_order=list(obj),
    )


def to_oro_dialogue(traj: Trajectory) -> list[dict[str, Any]]:
    """The trajectory's steps as an ORO dialogue list (results inline, ``extra_info`` filled like ORO)."""
    return [step_to_dict(step, traj, mode="oro", position=i) for i, step in enumerate(traj.steps)]


def to_oro_envelope(traj: Trajectory) -> dict[str, Any]:
    """One ``output.jsonl`` envelope. ``dialogue`` is null when the record says so, or, for records built in
    memory, when the status is not SUCCESS (ORO keeps dialogues of successful problems only)."""
    raw = traj.unknown_keys
    null_dialogue = traj.dialogue_is_null or (not traj.key_order and traj.status != EpisodeStatus.SUCCESS)
    error = traj.error.model_dump() if traj.error is not None else None
    values: dict[str, Any] = {
        "problem_id": traj.problem_id,
        "status": traj.status.value,
        "execution_time": traj.execution_time,
        "inference_failure_count": traj.inference_failure_count,
        "inference_total": traj.inference_total,
        "error": error,
        "dialogue": None if null_dialogue else to_oro_dialogue(traj),
    }
    fields = [(k, raw[k] if k in raw else values[k], True, k in raw) for k in ENVELOPE_KEYS]
    fields += unknown_fields({k: v for k, v in raw.items() if k not in ENVELOPE_KEYS})
    return emit(traj.key_order, fields)


def dumps_oro_line(traj: Trajectory, *, legacy_bare: bool = False) -> str:
    """Serialise one trajectory as an ``output.jsonl`` line (no newline).

    Args:
        traj: The trajectory.
        legacy_bare: Write records read from old bare-list lines back as bare lists.
    """
    if legacy_bare and traj.source_format == "oro_bare":
        return oro_dumps(to_oro_dialogue(traj))
    return oro_dumps(to_oro_envelope(traj))


def attach_proxy_calls(traj: Trajectory, calls: Iterable[dict[str, Any]]) -> None:
    """Bucket ``calls`` onto ``traj``'s steps in place, by the arena's one rule
    (:func:`shoparena.runs.envelopes.bucket_proxy_calls`); steps given entries store them as
    ``proxy_calls``."""
    buckets = bucket_proxy_calls([s.timestamp for s in traj.steps], calls)
    for step, bucket in zip(traj.steps, buckets, strict=True):
        if bucket:
            step.proxy_calls = bucket


def all_proxy_calls(traj: Trajectory) -> list[dict[str, Any]]:
    """Every step's ``proxy_calls`` concatenated in step order (consumers must not read step 0 only)."""
    return [call for step in traj.steps for call in step.proxy_calls]


__all__ = [
    "ENVELOPE_KEYS",
    "all_proxy_calls",
    "attach_proxy_calls",
    "dumps_oro_line",
    "from_oro_dialogue",
    "from_oro_envelope",
    "steps_from_dialogue",
    "to_oro_dialogue",
    "to_oro_envelope",
]
