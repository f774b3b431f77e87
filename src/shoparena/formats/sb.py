"""ShoppingBench rollout lines (environment spec §5.1): one JSON list of steps per query.

Each step is ``{prompt: [system, user], completion: {reasoning_content, content, message: {think?, tool_call?,
obs?, response?}}, extra_info: {step, query, timestamp}}``; tool results live in ``message.obs`` as
``{tool_call_id, results}`` entries. ShoppingBench writes lines with ujson defaults, reproduced by
:func:`dumps_sb_line`.
"""

from __future__ import annotations

from typing import Any

from shoparena.formats._common import FormatError, type_name, ujson_dumps
from shoparena.formats._steps import step_from_dict, step_to_dict
from shoparena.records.trajectory import Trajectory


def from_sb_rollout(obj: Any, *, line_no: int | None = None) -> Trajectory:
    """A trajectory from one decoded rollout line. Results are moved from ``obs`` onto their calls.

    Raises:
        FormatError: when the line is not a list of step objects.
    """
    if not isinstance(obj, list):
        raise FormatError("", f"expected a list of steps, got {type_name(obj)}", line_no=line_no)
    steps = []
    for i, item in enumerate(obj):
        try:
            steps.append(step_from_dict(item, position=i, path=f"[{i}]"))
        except FormatError as exc:
            raise FormatError(exc.path, exc.detail, line_no=line_no) from None
    query = next((s.extra_info["query"] for s in steps if isinstance(s.extra_info.get("query"), str)), "")
    return Trajectory(query=query, steps=steps, source_format="sb_rollout")


def to_sb_rollout(traj: Trajectory, *, system_prompt: str = "") -> list[dict[str, Any]]:
    """The trajectory as a rollout list.

    Steps without a recorded ``prompt`` get one rebuilt from ``system_prompt`` and the history of the steps
    before them (what the model would have seen).
    """
    return [
        step_to_dict(step, traj, mode="sb", position=i, system_prompt=system_prompt)
        for i, step in enumerate(traj.steps)
    ]


def dumps_sb_line(traj: Trajectory, *, system_prompt: str = "") -> str:
    """Serialise one trajectory as a rollout line (ujson style, no newline)."""
    return ujson_dumps(to_sb_rollout(traj, system_prompt=system_prompt))


__all__ = ["dumps_sb_line", "from_sb_rollout", "to_sb_rollout"]
