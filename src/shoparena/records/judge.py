"""``judge.jsonl``: one :class:`JudgeVerdict` per judged trajectory (written by ``arena judge``, read back by
the corpus, the viewer and judge calibration)."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator


class JudgeStatus(StrEnum):
    """Outcome of judging one trajectory. Only ``ok`` carries a score; nothing silently becomes 0."""

    OK = "ok"
    PARSE_ERROR = "parse_error"
    UNAVAILABLE = "unavailable"
    SKIPPED_BREAKER = "skipped_breaker"


class JudgeAttempt(BaseModel):
    """One call to one judge model and what came of it."""

    model_config = ConfigDict(extra="forbid")

    model: str
    outcome: str = Field(
        description="ok | unparseable | invalid_response | auth | rate_limited | server | timeout | "
        "connection | http_error"
    )
    status_code: int | None = None
    detail: str = ""
    slept_s: float = 0.0


class JudgeVerdict(BaseModel):
    """A judge's verdict on one trajectory. ``score`` is None unless ``status`` is ``ok``."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = 1
    problem_id: str | None = None
    judge: str = Field(default="", description="Judge name, e.g. 'llm' or 'rubric'.")
    status: JudgeStatus
    score: float | None = None
    explanation: str = ""
    model: str | None = Field(default=None, description="Model that produced the verdict (LLM judge).")
    parse_stage: str | None = Field(default=None, description="json | last_match | repair (LLM judge).")
    gates: dict[str, bool] | None = Field(default=None, description="G1..G4 pass flags (rubric judge).")
    evidence: dict[str, Any] = Field(default_factory=dict, description="What each gate matched (rubric).")
    attempts: list[JudgeAttempt] = Field(default_factory=list)

    @field_validator("score", mode="before")
    @classmethod
    def _score_not_bool(cls, value: Any) -> Any:
        # JSON true is not a score of 1.0: a verdict file with a boolean score is damaged, not a pass.
        if isinstance(value, bool):
            raise ValueError("must be a number, not a boolean")
        return value

    @model_validator(mode="after")
    def _score_matches_status(self) -> JudgeVerdict:
        if self.status is JudgeStatus.OK:
            if self.score is None or not 0.0 <= self.score <= 1.0:
                raise ValueError("JudgeVerdict.score must be in [0, 1] when status is ok")
        elif self.score is not None:
            raise ValueError(f"JudgeVerdict.score must be None when status is {self.status.value}")
        return self


__all__ = ["JudgeAttempt", "JudgeStatus", "JudgeVerdict"]
