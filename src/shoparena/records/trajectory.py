"""Canonical trajectory records: one episode of one agent on one problem.

Upstream formats (ShoppingBench rollout lines, ORO ``output.jsonl`` envelopes, native chat rows) are read and
written by adapters in :mod:`shoparena.formats`; this module holds only the schema.
"""

from __future__ import annotations

from enum import Enum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class EpisodeStatus(str, Enum):  # noqa: UP042 - str() of members is relied on as-is
    """ORO envelope status (a subset of the backend's ``ProblemStatus``)."""

    SUCCESS = "SUCCESS"
    FAILED = "FAILED"
    TIMED_OUT = "TIMED_OUT"


class ToolCall(BaseModel):
    """A step's tool call (ShoppingBench ``{name, parameters, tool_call_id}``, ORO ``result``)."""

    model_config = ConfigDict(extra="forbid")

    name: str
    parameters: dict[str, Any] = Field(default_factory=dict)
    tool_call_id: str = ""
    result: Any = None
    has_result: bool = Field(
        default=False, description="True when the tool ran and `result` holds its return (which may be null)."
    )
    invalid_reason: str | None = Field(
        default=None,
        description="Why the call is malformed (non-string name, non-object parameters); the env answers it "
        "with an error observation instead of running it. None for a well-formed call.",
    )
    native_id: str | None = Field(
        default=None, description="OpenAI id of a native chat call, when it differs from tool_call_id."
    )
    native_arguments: Any = Field(
        default=None,
        description="Native `function.arguments` as received (string or object) when normalisation or "
        "re-serialisation would not reproduce it; None otherwise.",
    )
    unknown_keys: dict[str, Any] = Field(
        default_factory=dict,
        description="Raw values of keys this record does not model, or whose value did not fit its field "
        "(e.g. a non-object `parameters`); writers emit them verbatim.",
    )
    key_order: list[str] = Field(
        default_factory=list, description="Key order of the source object; empty for records built in memory."
    )


class Step(BaseModel):
    """One model turn: the parsed roles, the raw completion and the step's metadata (``extra_info``)."""

    model_config = ConfigDict(extra="forbid")

    index: int = Field(ge=1, description="1-based step number (extra_info.step).")
    think: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    response: str = ""
    content: str = Field(default="", description="Raw completion content as the model emitted it.")
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
    prompt: list[dict[str, Any]] | None = Field(
        default=None, description="ShoppingBench rollout `prompt` ([system, user]); None when absent."
    )
    content_format: Literal["tagged", "native", "hermes"] = Field(
        default="tagged",
        description="Convention of `content`: 'tagged' = §5.1 role tags; 'native' = chat text with calls in "
        "structured `tool_calls`; 'hermes' = chat text with inline <tool_call> blocks.",
    )
    parse_errors: list[str] = Field(
        default_factory=list, description="Why parts of the completion or step record were malformed."
    )
    unknown_keys: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        description="Per source object ('step', 'completion', 'message', 'chat'): raw values of unmodelled "
        "keys or of values that did not fit a field; writers emit them verbatim.",
    )
    key_order: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Per source object ('step', 'completion', 'message', 'extra_info', 'chat'): key order as "
        "read; empty for records built in memory.",
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
    meta: dict[str, Any] = Field(default_factory=dict, description="Free provenance (agent hash, model).")
    source_format: Literal["", "oro_envelope", "oro_bare", "sb_rollout", "chat"] = Field(
        default="", description="Upstream format the record was read from; '' when built in memory."
    )
    system_prompt: str | None = Field(default=None, description="System message of a native chat row.")
    unknown_keys: dict[str, Any] = Field(
        default_factory=dict, description="Envelope keys not modelled (or not fitting a field), verbatim."
    )
    key_order: list[str] = Field(
        default_factory=list, description="Envelope key order as read; empty for records built in memory."
    )

    def last_recommendation(self) -> ToolCall | None:
        """The last ``recommend_product`` call (the one scorers read), or None."""
        for step in reversed(self.steps):
            for call in reversed(step.tool_calls):
                if call.name == "recommend_product":
                    return call
        return None
