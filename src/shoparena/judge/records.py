"""Judge records: the structured judge input (trusted proxy facts + untrusted trajectory) and verdicts."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

# The verdict is a run-directory file record (judge.jsonl): its home is records.judge; re-exported here.
from shoparena.records.judge import JudgeAttempt, JudgeStatus, JudgeVerdict  # noqa: F401

SCORE_BINS: tuple[float, ...] = (0.1, 0.3, 0.5, 0.7, 0.9)
"""The rubric's score for: G1 fails, G2 fails, G3 fails, G4 fails, all gates pass."""


class CallKind(StrEnum):
    SEARCH = "search"
    VIEW = "view"
    INFERENCE = "inference"
    OTHER = "other"


class TrustedCall(BaseModel):
    """One proxy call as the judge sees it, derived only from a proxy-side summary entry."""

    model_config = ConfigDict(extra="forbid")

    kind: CallKind
    method: str
    path: str
    params: str = Field(default="", description="GET params as JSON, cut to 200 characters.")
    model: str | None = None
    completion_tokens: int | None = None
    status_code: int | None = None
    duration_ms: float = 0.0
    timestamp: float | None = None
    product_ids: list[str] = Field(
        default_factory=list, description="Up to 20 product ids the call returned."
    )
    more_product_ids: int = Field(default=0, description="How many further ids were cut off.")


class TrustedSummary(BaseModel):
    """Counts and call lines built from the proxy's own log (never from agent-written text)."""

    model_config = ConfigDict(extra="forbid")

    searches: int = 0
    views: int = 0
    inference_calls: int = 0
    completion_tokens: int = 0
    failures: int = Field(default=0, description="Calls with status >= 400.")
    total_seconds: float = 0.0
    calls: list[TrustedCall] = Field(default_factory=list, description="At most 30 call lines, in order.")
    more_calls: int = Field(default=0, description="Calls beyond the 30 shown.")
    all_product_ids: list[str] = Field(
        default_factory=list, description="Every product id seen in any call's response or params (sorted)."
    )
    max_completion_tokens: int = Field(
        default=0, description="Largest completion_tokens of one inference call."
    )


class Candidate(BaseModel):
    """A product a tool result showed: its id and title (either may be empty)."""

    model_config = ConfigDict(extra="forbid")

    product_id: str = ""
    title: str = ""


class ResultFacts(BaseModel):
    """Data found in one full tool result, lowercased, for the mechanical rubric (never rendered)."""

    model_config = ConfigDict(extra="forbid")

    product_ids: list[str] = Field(default_factory=list)
    other_ids: list[str] = Field(default_factory=list, description="shop_id and other *_id values.")
    prices: list[str] = Field(default_factory=list, description="Canonical numbers: '389', '12.5'.")
    values: list[str] = Field(
        default_factory=list, description="Brand, attribute, option and service values."
    )
    title_words: list[str] = Field(default_factory=list)
    candidates: list[Candidate] = Field(default_factory=list)


class JudgeToolLine(BaseModel):
    """One tool call of one step (untrusted)."""

    model_config = ConfigDict(extra="forbid")

    name: str
    arguments: str = Field(description="JSON of the call's parameters.")
    result: str = Field(description="The result as text, cut to 300 characters.")
    has_result: bool = False
    facts: ResultFacts = Field(
        default_factory=ResultFacts, description="Data from the full result (rubric only; not rendered)."
    )


class JudgeStep(BaseModel):
    """One trajectory step (untrusted)."""

    model_config = ConfigDict(extra="forbid")

    index: int
    think: str = Field(default="", description="Thinking cut to 1000 characters.")
    think_truncated: bool = False
    tools: list[JudgeToolLine] = Field(default_factory=list)


class JudgeInput(BaseModel):
    """Everything a judge may look at for one trajectory."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = 1
    query: str
    trusted: TrustedSummary
    steps: list[JudgeStep] = Field(default_factory=list)


