"""Canonical trajectory records: one episode of one agent on one problem.

Upstream formats (ShoppingBench rollout lines, ORO ``output.jsonl`` envelopes, native chat rows) are read and
written by adapters in :mod:`shoparena.formats`; this module holds only the schema.
"""

from __future__ import annotations

from enum import Enum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class EpisodeStatus(str, Enum):
    """ORO envelope status (a subset of the backend's ``ProblemStatus``)."""

    SUCCESS = "SUCCESS"
    FAILED = "FAILED"
    TIMED_OUT = "TIMED_OUT"


class ToolCall(BaseModel):
    """One tool call as recorded in a step (ShoppingBench ``{name, parameters, tool_call_id}`` + ORO ``result``)."""

    model_config = ConfigDict(extra="forbid")

    name: str
    parameters: dict[str, Any] = Field(default_factory=dict)
    tool_call_id: str = ""
    result: Any = None
    has_result: bool = Field(
        default=False, description="True when the tool ran and `result` holds its return (which may be null)."
    )


class Step(BaseModel):
    """One model turn: the parsed roles, the raw completion and the step's metadata (``extra_info``)."""

    model_config = ConfigDict(extra="forbid")

    index: int = Field(ge=1, description="1-based step number (extra_info.step).")
    think: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    response: str = ""
    content: str = Field(default="", description="Raw completion content (tagged text) as the model emitted it.")
    reasoning_content: str = ""
    timestamp: int | float | None = Field(
        default=None, description="extra_info.timestamp, epoch ms; None when missing (strict format penalty)."
    )
    proxy_calls: list[dict[str, Any]] = Field(
        default_factory=list, description="extra_info.proxy_calls summary entries assigned to this step."
    )
    extra_info: dict[str, Any] = Field(
        default_factory=dict, description="Other extra_info keys, kept verbatim for lossless round trips."
    )


class TrajectoryError(BaseModel):
    model_config = ConfigDict(extra="forbid")

    type: str
    message: str


class Trajectory(BaseModel):
    """One episode, keyed by ``(run_id, problem_id, rollout_idx)`` — never by a single ambiguous id."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = 1
    run_id: str = ""
    problem_id: str | None = None
    rollout_idx: int = 0
    agent_id: str = ""
    query: str = ""
    status: EpisodeStatus = EpisodeStatus.SUCCESS
    execution_time: float | None = None
    inference_failure_count: int = 0
    inference_total: int = 0
    error: TrajectoryError | None = None
    steps: list[Step] = Field(default_factory=list)
    dialogue_is_null: bool = Field(
        default=False, description="ORO writes dialogue=null for non-SUCCESS problems; kept for round trips."
    )
    meta: dict[str, Any] = Field(default_factory=dict, description="Free provenance (agent file hash, model).")

    def last_recommendation(self) -> ToolCall | None:
        """The last ``recommend_product`` call (the one scorers read), or None."""
        for step in reversed(self.steps):
            for call in reversed(step.tool_calls):
                if call.name == "recommend_product":
                    return call
        return None
