"""The canonical corpus record: one input trajectory on its way from the firehose to a training view.

Every adapter in :mod:`shoparena.corpus.ingest` (arena run directories, ORO envelopes, ShoppingBench rollouts,
SN15 chat rows) produces a :class:`CorpusRecord` or a :class:`Quarantined` entry; the filter and the gates
only read the record, so their outcome is a pure function of it and of the configuration.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

#: Structural labels (distillation spec §2), harness-independent: computed from logs and messages only.
StructuralLabel = Literal["agentic", "subtask", "no_llm", "forged", "malformed"]


class Outcome(StrEnum):
    """What became of a corpus record: ``kept``, or the first reason it was not (a ``str``, so records
    read and written as JSON keep the plain value)."""

    KEPT = "kept"
    NOT_SUCCESS_ENVELOPE = "not_success_envelope"
    PROXY_LOG_MISSING = "proxy_log_missing"
    FORGED_LOG = "forged_log"
    NO_DISPATCH = "no_dispatch"
    NONCE_INVALID = "nonce_invalid"
    NO_RICHNESS_PROOF = "no_richness_proof"
    LOW_RICHNESS = "low_richness"
    MESSAGE_RULE_FAILED = "message_rule_failed"
    CODE_INJECTED_FINAL = "code_injected_final"
    FORMAT_INVALID = "format_invalid"
    JUDGE_MISSING = "judge_missing"
    JUDGE_BELOW_BAR = "judge_below_bar"
    SUCCESS_UNSCORED = "success_unscored"
    NOT_SUCCESSFUL = "not_successful"
    DUPLICATE = "duplicate"
    NEAR_DUPLICATE = "near_duplicate"
    TOO_FEW_TOKENS = "too_few_tokens"


#: Every outcome reason, in the fixed order the filter and the gates test them; ``kept`` when none fails.
OUTCOME_ORDER: tuple[Outcome, ...] = tuple(o for o in Outcome if o is not Outcome.KEPT)


class CorpusMessage(BaseModel):
    """One OpenAI-style message with its training flag (corpus contract)."""

    model_config = ConfigDict(extra="forbid")

    role: Literal["system", "user", "assistant", "tool"]
    content: str | None = None
    reasoning_content: str | None = Field(
        default=None,
        description="The assistant's reasoning (a tagged step's think), kept apart from content; views show "
        "it only as their render profile says (compact: an item list as handles).",
    )
    tool_calls: list[dict[str, Any]] | None = Field(
        default=None, description="[{id, type: 'function', function: {name, arguments: JSON string}}]"
    )
    tool_call_id: str | None = None
    name: str | None = None
    trainable: bool = False


class StructuralEvidence(BaseModel):
    """What the structural filter reads, computed at ingest from the most trusted source available."""

    model_config = ConfigDict(extra="forbid")

    envelope_status: str = Field(description="SUCCESS / FAILED / TIMED_OUT, or CHAT for chat rows.")
    has_dialogue: bool = True
    log_source: Literal["trusted_proxy", "envelope", "messages"] = "messages"
    inference_calls: int | None = Field(default=None, description="None when the source has no call log.")
    dispatches: int = Field(default=0, description="Catalogue dispatches (or catalogue tool calls in chat).")
    nonce_counts: dict[str, int] = Field(default_factory=dict, description="nonce_status → dispatches.")
    richness_nonce: float | None = Field(default=None, description="Variant B; None = no stamps (no proof).")
    richness_proof: float | None = Field(
        default=None,
        description="Share of dispatches the trusted proxy proved model-emitted; None = no proofs logged.",
    )
    richness_pending: float | None = Field(default=None, description="Variant A (pending-target matching).")
    dispatch_matched: list[bool] = Field(
        default_factory=list, description="Per catalogue dispatch, in log order: requested by the LLM (A)."
    )
    forged: list[str] = Field(
        default_factory=list, description="Why the log contradicts itself or the agent."
    )
    final_llm_emitted: bool | None = Field(
        default=None, description="recommend_product requested by the LLM."
    )
    format_ok: bool | None = None
    format_detail: str = ""
    proxy_log_problem: str | None = Field(
        default=None,
        description="Trusted log missing or torn: lost evidence (proxy_log_missing), never forged.",
    )
    message_rule_ok: bool | None = Field(default=None, description="Chat-only rule; None when not applied.")
    message_rule_detail: str = ""


class CorpusLabels(BaseModel):
    """Per-trajectory supervision (spec §5 ``labels``); None means unknown, never 0."""

    model_config = ConfigDict(extra="forbid")

    success: bool | None = None
    success_shoppingbench: bool | None = None
    gt: float | None = None
    rule: float | None = None
    format: float | None = None
    judge_q: float | None = None
    agentic_richness: float | None = None
    richness_pending: float | None = None
    nonce_valid_ratio: float | None = None


class CorpusProvenance(BaseModel):
    """Where the record came from (spec §5 ``provenance``)."""

    model_config = ConfigDict(extra="forbid")

    source_format: str = ""
    source_path: str = ""
    source_line: int | None = None
    race_id: str | None = None
    eval_run_id: str | None = None
    agent: str | None = None
    agent_version: str | None = None
    miner_hotkey_hash: str | None = None
    validator: str | None = None
    agent_model: str | None = None
    judge_status: str | None = None
    judge_model: str | None = None
    judge_prompt_version: str | None = None
    judge_parse_stage: str | None = None
    judge_explanation: str | None = None
    scorer_profile: str | None = None
    scorer_version: str | None = None
    collection_window: list[str] | None = None
    converter_commit: str | None = None


class CorpusRecord(BaseModel):
    """One input trajectory, whatever its fate (kept, rejected with its first failing reason, recovered)."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = 1
    record_id: str = Field(description="run_id:problem_id:rollout_idx (unique in a corpus).")
    run_id: str
    problem_id: str
    rollout_idx: int = 0
    query: str = ""
    category: str = ""
    difficulty: str = ""
    messages: list[CorpusMessage] = Field(default_factory=list)
    tools: str = Field(default="[]", description="JSON array of OpenAI function schemas.")
    evidence: StructuralEvidence
    labels: CorpusLabels = Field(default_factory=CorpusLabels)
    provenance: CorpusProvenance = Field(default_factory=CorpusProvenance)
    structural_label: StructuralLabel = "malformed"
    outcome: Outcome = Outcome.KEPT
    origin: Literal["agentic", "recovered"] = "agentic"
    recovered_from: str | None = Field(default=None, description="record_id of the sub-task source.")
    miner_kind: str = Field(default="", description="Harness truth (firehose); never read by the filter.")
    teacher: str = ""
    split: str = ""
    cluster_id: str = ""
    gt_product_ids: list[str] = Field(default_factory=list, description="For leak clustering only.")
    gt_shop_ids: list[str] = Field(default_factory=list)
    trainable_tokens: int | None = None


class Quarantined(BaseModel):
    """An input record that could not become a :class:`CorpusRecord`: where it was and which field failed."""

    model_config = ConfigDict(extra="forbid")

    source: str
    line: int | None = None
    record: str = Field(description="What identifies the record (problem id, row id, or line number).")
    field: str = Field(description="The field that failed, as a dotted path.")
    reason: str


class CorpusFunnel(BaseModel):
    """``report.json``'s funnel: input = kept + quarantined + every rejection reason (``adds_up``)."""

    model_config = ConfigDict(extra="allow")

    input: int
    quarantined: int
    records: int
    rejected: dict[str, int] = Field(description="Records per first failing reason (every reason listed).")
    kept: int
    recovered: int = 0
    recovered_kept: int = 0
    views: dict[str, dict[str, int]] = Field(default_factory=dict, description="Rows per view and split.")
    adds_up: bool


class CorpusRender(BaseModel):
    """The render profile the views were built with (``report.json``'s ``render``)."""

    model_config = ConfigDict(extra="allow")

    profile: str
    profile_hash: str = ""


class CorpusReport(BaseModel):
    """A corpus run's ``report.json``: the funnel and its breakdowns, written by ``corpus build`` and read by
    training (the render profile), the HTML report, the card and ``corpus report``.

    Sections a corpus of an older build lacks (``render``, ``diversity``, ``sft_lengths``) are None, and keys
    this model does not name are kept as they are (``extra="allow"``), so :meth:`document` writes back what
    was read. Numbers keep the type they were written with (no int to float coercion): the file a build
    writes through this model is byte-identical to the dict it was built from.
    """

    model_config = ConfigDict(extra="allow")

    funnel: CorpusFunnel
    recovered_outcomes: dict[str, int] = Field(default_factory=dict)
    richness_histogram: dict[str, dict[str, int]] = Field(default_factory=dict)
    judge_bins: dict[str, int] = Field(default_factory=dict)
    breakdown: dict[str, dict[str, dict[str, int]]] = Field(default_factory=dict)
    splits: dict[str, int] = Field(default_factory=dict)
    quarantine_fields: dict[str, int] = Field(default_factory=dict)
    filter_quality: dict[str, Any] | None = None
    thresholds: dict[str, dict[str, Any]] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list)
    render: CorpusRender | None = None
    diversity: dict[str, Any] | None = None
    sft_lengths: dict[str, Any] | None = None

    def document(self) -> dict[str, Any]:
        """The JSON object of ``report.json``: the fields that were set, extra keys included."""
        return self.model_dump(mode="json", exclude_unset=True)

    def render_profile(self, default: str) -> str:
        """The views' render profile (``default`` for a corpus from before it was recorded)."""
        return self.render.profile if self.render is not None else default


__all__ = [
    "OUTCOME_ORDER",
    "CorpusFunnel",
    "CorpusLabels",
    "CorpusMessage",
    "CorpusProvenance",
    "CorpusRecord",
    "CorpusRender",
    "CorpusReport",
    "Outcome",
    "Quarantined",
    "StructuralEvidence",
    "StructuralLabel",
]
