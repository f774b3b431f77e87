"""The agent protocol and a scripted agent for tests."""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from shoparena.env.environment import Observation
from shoparena.records.message import ToolSchema
from shoparena.records.trajectory import ToolCall

#: What an agent may return for one step: tagged completion text, a native assistant message dict, or a list
#: of tool calls (:class:`ToolCall` or ``{name, parameters}`` dicts).
AgentAction = str | dict[str, Any] | list[ToolCall] | list[dict[str, Any]]


@runtime_checkable
class Agent(Protocol):
    """Chooses the next step of an episode. One instance may serve several episodes concurrently; per-episode
    state must be keyed on ``observation.episode_id``.
    """

    name: str

    def act(self, observation: Observation, tools: Sequence[ToolSchema]) -> AgentAction:
        """The next step for ``observation``."""
        ...


def tagged_step(think: str, calls: Sequence[dict[str, Any]] = (), response: str = "") -> str:
    """A well-formed tagged completion: ``<think>`` plus a ``<tool_call>`` JSON list and/or ``<response>``."""
    parts = [f"<think>{think}</think>"]
    if calls:
        payload = [{"name": c["name"], "parameters": c.get("parameters", {})} for c in calls]
        parts.append(f"<tool_call>{json.dumps(payload, ensure_ascii=False)}</tool_call>")
    if response:
        parts.append(f"<response>{response}</response>")
    return "\n".join(parts)


class ScriptedAgent:
    """Replays a fixed list of steps, the same for every episode (then an empty completion, which stops it).

    Args:
        steps: Actions to return in order (anything :meth:`ShopEnv.step` accepts).
        name: Agent id recorded on trajectories.
    """

    def __init__(self, steps: Sequence[AgentAction], name: str = "scripted") -> None:
        self.name = name
        self._steps = list(steps)
        self._lock = threading.Lock()
        self.calls: list[tuple[str, int]] = []  # (episode_id, step_index) of each act call, for assertions

    def act(self, observation: Observation, tools: Sequence[ToolSchema]) -> AgentAction:
        with self._lock:
            self.calls.append((observation.episode_id, observation.step_index))
        i = observation.step_index - 1
        return self._steps[i] if i < len(self._steps) else ""


__all__ = ["Agent", "AgentAction", "ScriptedAgent", "tagged_step"]
