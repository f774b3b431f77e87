"""Read a stateless ShoppingBench/ORO history message back into the query and the earlier steps.

Stateless tagged agents (ShoppingBench's rollout, ORO's reference miner) send every step as two messages:
a system prompt and one user message ``# Dialogue Records History\\n`` followed by tagged entries joined by
blank lines: ``<user>query</user>``, then per step ``<think>``, ``<tool_call>[{name, parameters}]``,
``<obs>[{tool_call_id, results}]`` and ``<response>`` (each optional, in that order). This module is the
inverse of :func:`shoparena.formats.tagged.build_history_message`, so a backend can continue such a
conversation from its history instead of re-reading the whole message as a new request.
"""

from __future__ import annotations

from typing import Any

from shoparena.formats.scan import loads_bounded, tagged_entries
from shoparena.formats.tagged import HISTORY_HEADER, tool_call_id
from shoparena.records.trajectory import Step, ToolCall

_ROLES = ("user", "think", "tool_call", "obs", "response")
#: Position of each role inside one step; a role at or before the last one seen starts the next step.
_RANK = {"think": 0, "tool_call": 1, "obs": 2, "response": 3}


def is_history_message(text: str) -> bool:
    """True when ``text`` is a stateless tagged history message."""
    return text.lstrip().startswith(HISTORY_HEADER.strip())


def _json(text: str) -> Any:
    try:
        return loads_bounded(text.strip())
    except ValueError:
        return None


def _calls(text: str) -> list[ToolCall]:
    parsed = _json(text)
    items = parsed if isinstance(parsed, list) else [parsed]
    calls = []
    for item in items:
        if isinstance(item, dict) and isinstance(item.get("name"), str):
            params = item.get("parameters", item.get("arguments", {}))
            params = params if isinstance(params, dict) else {}
            call_id = str(item.get("tool_call_id") or tool_call_id(item["name"], params))
            calls.append(ToolCall(name=item["name"], parameters=params, tool_call_id=call_id))
    return calls


def _attach_obs(calls: list[ToolCall], text: str) -> None:
    """Put each observation on the call with its id, else on the first call still without a result."""
    parsed = _json(text)
    entries = parsed if isinstance(parsed, list) else [parsed]
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        wanted = str(entry.get("tool_call_id") or "")
        target = next((c for c in calls if c.tool_call_id == wanted and not c.has_result), None)
        target = target or next((c for c in calls if not c.has_result), None)
        if target is not None:
            target.result = entry.get("results", entry.get("result"))
            target.has_result = True


def parse_history_message(text: str) -> tuple[str, list[Step]]:
    """``(query, steps)`` of a history message; text outside the tags is ignored.

    The first ``<user>`` entry is the query. Each step's tool calls get their upstream ids (recomputed
    when the history omits them, as ORO's miner does) and the ``<obs>`` results that answer them.
    """
    query = ""
    steps: list[Step] = []
    current: dict[str, Any] | None = None
    last_rank = -1

    def flush() -> None:
        if current is not None:
            steps.append(Step(index=len(steps) + 1, **current))

    for role, inner in tagged_entries(text, _ROLES):  # linear: the history holds untrusted text
        if role == "user":
            query = query or inner.strip()
            continue
        rank = _RANK[role]
        if current is None or rank <= last_rank:
            flush()
            current = {"think": "", "tool_calls": [], "response": ""}
        last_rank = rank
        if role == "think":
            current["think"] = inner.strip()
        elif role == "tool_call":
            current["tool_calls"] = _calls(inner)
        elif role == "obs":
            _attach_obs(current["tool_calls"], inner)
        else:
            current["response"] = inner.strip()
    flush()
    return query, steps


__all__ = ["is_history_message", "parse_history_message"]
