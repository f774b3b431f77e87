"""Corpus build configuration: inputs, thresholds (documented defaults, docs/corpus.md) and split settings."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from shoparena.formats.profiles import ProfileName, RenderProfile
from shoparena.suites.clusters import NEAR_DUP_THRESHOLD


class FilterConfig(BaseModel):
    """Structural-quality filter thresholds (distillation spec §2, decision 1)."""

    model_config = ConfigDict(extra="forbid")

    tau: float = Field(default=1.0, ge=0.0, le=1.0, description="Keep when richness >= tau.")
    richness_variant: Literal["proof", "nonce", "pending"] = Field(
        default="proof",
        description=(
            "'proof' (default): the proxy's per-dispatch proof (nonce_valid or matched_emitted) from the "
            "trusted log, falling back to 'nonce' where the log carries no proofs; 'nonce' = Variant B "
            "(nonce-stamped); 'pending' = Variant A."
        ),
    )
    require_all_nonces_valid: bool = Field(
        default=True, description="'nonce' variant: stamps exist → every one 'valid'."
    )
    none_richness: Literal["reject", "fallback_pending"] = Field(
        default="fallback_pending",
        description="No stamps (richness None, no proof): 'reject' (no_richness_proof) or use Variant A.",
    )
    require_llm_final: bool = Field(default=True, description="recommend_product must be LLM-requested.")
    require_format: bool = True
    trusted_teacher: bool = Field(
        default=False,
        description=(
            "Rejection sampling of a trusted teacher's own episodes (an `eval run` of the reference planner, "
            "the synthetic-data arm): no proxy log proves authorship and none is needed, so the structural "
            "checks are skipped (label agentic), every assistant turn is trainable, and the format, judge "
            "and success gates decide. Never for a firehose."
        ),
    )


class GateConfig(BaseModel):
    """Judge, success, dedup and token gates (spec §3, decisions 2-3)."""

    model_config = ConfigDict(extra="forbid")

    judge_bar: float | None = Field(
        default=0.7,
        ge=0.0,
        le=1.0,
        allow_inf_nan=False,
        description="Keep judge_q >= bar (G3 passed); None = off.",
    )
    success_profile: Literal["strict", "shoppingbench", "off"] = "strict"
    near_dup_threshold: float = Field(
        default=0.9, ge=0.0, le=1.0, description="MinHash Jaccard of the assistant turns of the same problem."
    )
    max_tokens: int = Field(default=8192, ge=1, description="Truncation length for the token gate.")
    min_trainable_tokens: int = Field(default=1, ge=0)


class SplitConfig(BaseModel):
    """Leak-guarded split (spec §4, decision 4)."""

    model_config = ConfigDict(extra="forbid")

    seed: int = 0
    eval_fraction: float = Field(default=0.15, ge=0.0, lt=1.0)
    near_dup_threshold: float = Field(
        default=NEAR_DUP_THRESHOLD, ge=0.0, le=1.0, description="Query Jaccard for clusters (suite audit's)."
    )


class CorpusConfig(BaseModel):
    """Everything ``shoparena corpus build`` needs (written resolved to ``config.yaml``)."""

    model_config = ConfigDict(extra="forbid")

    run_dirs: list[Path] = Field(
        default_factory=list, description="Arena run directories (e.g. firehose races)."
    )
    files: list[Path] = Field(
        default_factory=list, description="Envelope / rollout / SN15 chat-row JSONL files."
    )
    problems: list[Path] = Field(
        default_factory=list, description="Suites giving ground truth for --from trajectories."
    )
    index: Path | None = Field(default=None, description="Catalogue index to score --from trajectories.")
    out: Path = Field(description="Corpus directory (re-running resumes it).")
    filter: FilterConfig = Field(default_factory=FilterConfig)
    gates: GateConfig = Field(default_factory=GateConfig)
    split: SplitConfig = Field(default_factory=SplitConfig)
    recover: bool = Field(default=True, description="Rewrite sub-task trajectories as agentic ones.")
    tokenizer: str | None = Field(
        default=None, description="Tokenizer folder for the token gate; None = the tiny Qwen3 tokenizer."
    )
    # compact, as the pipeline renders it: what a small student is trained and evaluated on (upstream's
    # full JSON results make rows the tiny and student-word presets' max_length cuts).
    render_profile: ProfileName = Field(
        default=RenderProfile.COMPACT.value,
        description="Render profile of the views: compact (as the pipeline renders them) | upstream "
        "(ShoppingBench's full tool results, for large-context models); shoparena.formats.profiles.",
    )
    # Excluded from dumps: it changes no output byte, so it is neither in the build's identity nor in
    # config.yaml (a build resumed with another count is the same build).
    workers: int | None = Field(
        default=None,
        ge=1,
        exclude=True,
        description="Processes ingesting inputs at once, one input (race, file) each (default: one per "
        "usable CPU, within memory).",
    )

    @field_validator("tokenizer")
    @classmethod
    def _tokenizer_folder(cls, value: str | None) -> str | None:
        # A missing folder would fail only at the token gate, after the whole ingest. A relative name that
        # is not a folder here may be a Hub id: left to the tokenizer loader.
        if value and value.startswith(("/", ".", "~")) and not Path(value).expanduser().is_dir():
            raise ValueError(f"{value}: no such tokenizer folder")
        return value


__all__ = ["CorpusConfig", "FilterConfig", "GateConfig", "SplitConfig"]
