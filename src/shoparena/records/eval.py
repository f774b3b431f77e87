"""``eval run`` files other stages read: ``episodes.jsonl`` (:class:`EpisodeRecord` per finished episode) and
``summary.json`` (:class:`EvalSummary`, read by ``eval compare``, the report and the pipeline). Both read back
through :mod:`shoparena.runs.files`, so a damaged file names its line and field."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field


class SuiteIdentity(BaseModel):
    """Which suite was evaluated: file hash, content hash, size and the partition pool it came from."""

    model_config = ConfigDict(extra="forbid")

    path: str
    sha256: str = Field(description="sha256 of the suite file.")
    content_hash: str = Field(description="sha256 over the evaluated problems' content hashes, in order.")
    problems: int
    partition: str = Field(description="Pool name from a partition manifest beside the suite, or 'unknown'.")


class LeakCheck(BaseModel):
    """The outcome of the leak guard."""

    model_config = ConfigDict(extra="forbid")

    status: Literal["held_out", "leaked", "unchecked"]
    corpus: str | None = None
    train_problems: int = 0
    straddling_clusters: int = 0
    counts: dict[str, int] = Field(default_factory=dict)
    examples: list[dict[str, Any]] = Field(default_factory=list)
    note: str = ""


class Estimate(BaseModel):
    """A number with its 95 % interval and how the interval was made."""

    model_config = ConfigDict(extra="forbid")

    value: float
    ci_low: float
    ci_high: float
    method: str = Field(description="wilson or bootstrap")
    n: int = Field(description="Problems in the denominator.")


class GroupMetrics(BaseModel):
    """Metrics of one group of problems (a category or the whole suite) under one profile."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    problems: int
    samples: int
    greedy_asr: Estimate | None = Field(
        default=None, description="Share of problems the greedy episode solved."
    )
    pass_at_1: Estimate = Field(
        serialization_alias="pass@1",
        validation_alias=AliasChoices("pass@1", "pass_at_1"),
        description="Mean over problems of c/n.",
    )
    pass_at_k: dict[str, Estimate] = Field(
        default_factory=dict,
        serialization_alias="pass@k",
        validation_alias=AliasChoices("pass@k", "pass_at_k"),
        description="Unbiased pass@k for k = 1..n.",
    )
    pass_hat_k: dict[str, Estimate] = Field(
        default_factory=dict,
        serialization_alias="pass^k",
        validation_alias=AliasChoices("pass^k", "pass_hat_k"),
        description="pass^k (all k samples pass).",
    )
    format_score: Estimate
    mean_steps: float = 0.0
    mean_tokens: float = 0.0


class EpisodeRecord(BaseModel):
    """One finished episode as ``episodes.jsonl`` stores it."""

    model_config = ConfigDict(extra="forbid")

    problem_id: str
    sample_idx: int
    decoding: str
    category: str
    status: str = Field(description="SUCCESS, FAILED or TIMED_OUT (the envelope status).")
    termination_reason: str | None = None
    success_strict: bool
    success_shoppingbench: bool
    format_strict: float = 0.0
    format_shoppingbench: float = 0.0
    steps: int = 0
    prompt_tokens: int = 0
    prefilled_tokens: int | None = Field(
        default=None,
        description="Prompt tokens the engine computed (the rest came from its prefix cache); "
        "None: the engine did not say.",
    )
    prefix_misses: int = Field(
        default=0, description="Turns whose prompt did not extend the previous turn's (computed again)."
    )
    completion_tokens: int = 0
    tokens: int = 0
    calls: int = 0
    failed_calls: int = 0
    wall_s: float = 0.0
    model: str = ""
    finish_reasons: dict[str, int] = Field(default_factory=dict)
    error: str | None = None


class EvalSummary(BaseModel):
    """``summary.json``."""

    model_config = ConfigDict(extra="forbid")

    run_id: str
    run_dir: str
    label: str = Field(description="held_out, leaked or unchecked (no --train-corpus).")
    policy: dict[str, Any]
    suite: SuiteIdentity
    leak: LeakCheck
    decoding: dict[str, Any]
    scoring: dict[str, Any]
    episodes: dict[str, Any]
    profiles: dict[str, dict[str, GroupMetrics]]
    shortcut_floor: dict[str, dict[str, Estimate]] = Field(default_factory=dict)
    throughput: dict[str, float] = Field(default_factory=dict)
    prefix_cache: dict[str, Any] = Field(
        default_factory=dict,
        description="Whether the engine reused computed prefixes; prompt and prefilled token totals, misses.",
    )
    notes: list[str] = Field(default_factory=list)

    def dump(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)


__all__ = ["EpisodeRecord", "Estimate", "EvalSummary", "GroupMetrics", "LeakCheck", "SuiteIdentity"]
