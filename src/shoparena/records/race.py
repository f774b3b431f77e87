"""Race and weights documents: what one stage writes into a race directory and others read back.

``race.json`` (:class:`RaceDocument`, one shape for ``arena firehose`` and the race stage), ``weights.json``
(:class:`WeightsDocument`) and ``agents/<name>/miner.json`` (:class:`MinerTruth`, the firehose's harness
truth). The race models themselves (:class:`Race`, :class:`Qualifier`, ...) live here so the documents can
hold them; the rules that compute them stay in :mod:`shoparena.arena.race_rules` and
:mod:`shoparena.arena.weights`.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator


class RaceStatus(StrEnum):
    QUALIFYING_OPEN = "QUALIFYING_OPEN"
    RACE_RUNNING = "RACE_RUNNING"
    RACE_COMPLETE = "RACE_COMPLETE"
    CANCELLED = "CANCELLED"


class QualificationType(StrEnum):
    INCUMBENT = "INCUMBENT"
    SCORED = "SCORED"


def _aware(value: datetime | None, where: str) -> datetime | None:
    if value is not None and value.tzinfo is None:
        raise ValueError(f"{where} must be timezone-aware (e.g. '2026-05-04T19:00:00Z')")
    return value


class Qualifier(BaseModel):
    """One agent version in a race (one active qualifier per hotkey)."""

    model_config = ConfigDict(extra="forbid")

    hotkey: str | None = None
    agent_version_id: str
    qualification_type: QualificationType = QualificationType.SCORED
    qualifying_score: float | None = None
    race_score: float | None = Field(default=None, description="None: did not finish (0.0 still counts).")
    race_rank: int | None = Field(default=None, ge=1)


class Race(BaseModel):
    """A race as the Backend publishes it (``/v1/public/races/history``)."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = 1
    race_id: str
    status: RaceStatus
    qualifiers: list[Qualifier] = Field(default_factory=list)
    completed_at: datetime | None = None
    problem_seed: int | None = None
    problem_count: int | None = None

    @field_validator("completed_at")
    @classmethod
    def _completed_aware(cls, value: datetime | None) -> datetime | None:
        return _aware(value, "Race.completed_at")


class Incumbent(BaseModel):
    """The current top miner and when it took the top."""

    model_config = ConfigDict(extra="forbid")

    hotkey: str
    top_at: datetime
    agent_version_id: str | None = None
    top_score: float | None = Field(
        default=None, description="Informational; races compare scores from the same race."
    )

    @field_validator("top_at")
    @classmethod
    def _top_at_aware(cls, value: datetime) -> datetime:
        _aware(value, "Incumbent.top_at")
        return value


class QualifyingResult(BaseModel):
    """Who enters the race, or CANCELLED."""

    model_config = ConfigDict(extra="forbid")

    status: RaceStatus = Field(
        description="RACE_RUNNING when a scored qualifier met the threshold, else CANCELLED."
    )
    threshold: float
    qualifiers: list[Qualifier] = Field(default_factory=list)
    rejected: list[Qualifier] = Field(default_factory=list)


class PromotionDecision(BaseModel):
    """The incumbent-versus-best-challenger comparison (mirrors ORO's SCORE_BELOW_THRESHOLD fields)."""

    model_config = ConfigDict(extra="forbid")

    candidate_hotkey: str | None
    candidate_score: float | None
    current_top_score: float
    required_score: float
    margin: float
    elapsed_s: float
    promoted: bool


class RaceOutcome(BaseModel):
    """A finished race: ranked finishers (``race_rank`` set), the new top and how it was decided."""

    model_config = ConfigDict(extra="forbid")

    race_id: str
    status: RaceStatus
    ranking: list[Qualifier] = Field(default_factory=list)
    top_hotkey: str | None = None
    incumbent: Incumbent | None = Field(default=None, description="The top after this race.")
    decision: PromotionDecision | None = None


RankBy = Literal["race_score", "race_rank"]
NoFinishers = Literal["skip", "burn"]
TailOnBurnUid = Literal["overwrite", "add"]
DuplicateHotkeys = Literal["once", "add"]


class WeightConfig(BaseModel):
    """Weight-setting knobs. Every default is what ORO's validator (v1.0.79) does; the other values are
    shoparena's earlier choices, kept as named options (docs/arena.md, "ORO parity")."""

    model_config = ConfigDict(extra="forbid")

    t_top: float = Field(default=0.25, ge=0, description="Share of the vector pinned to the top miner.")
    t_burn: float = Field(
        default=0.75, ge=0, description="Share pinned to the burn UID (the tail comes out of it)."
    )
    burn_uid: int = Field(default=0, ge=0)
    rank_by: RankBy = Field(
        default="race_score",
        description="race_score: ORO's validator order (score desc, agent_version_id asc), whatever the "
        "race ranked. race_rank: honour the race's published ranks (incumbent protection), ties as ORO.",
    )
    no_finishers: NoFinishers = Field(
        default="skip",
        description="A completed race without finishers. skip: write no weights (ORO submits nothing; "
        "the chain keeps the last ones). burn: 65535 on the burn UID.",
    )
    tail_on_burn_uid: TailOnBurnUid = Field(
        default="overwrite",
        description="A tail finisher registered on the burn UID. overwrite: the burn weight replaces its "
        "weight, which still counts in the tail sum (ORO). add: both are added.",
    )
    duplicate_hotkeys: DuplicateHotkeys = Field(
        default="once",
        description="A hotkey listed more than once. once: one entry per hotkey, the top's if it is the "
        "top, else its lowest-ranked tail weight (ORO's hotkey map). add: every listing adds its weight.",
    )
    scan_window: int | None = Field(
        default=5,
        ge=1,
        description="How many of the newest races a tick scans for the first RACE_COMPLETE one (ORO: 5); "
        "none: the whole history.",
    )

    @model_validator(mode="after")
    def _shares_sum_to_one(self) -> WeightConfig:
        if abs(self.t_top + self.t_burn - 1.0) > 1e-9:
            raise ValueError("WeightConfig.t_top + WeightConfig.t_burn must equal 1 (within 1e-9)")
        return self


class WeightVector(BaseModel):
    """Dense weights over UIDs ``0..n-1``.

    An entry can exceed 65535 only when the top miner sits on the burn UID (the two are added, as ORO does);
    the chain normalises by the maximum on submission.
    """

    model_config = ConfigDict(extra="forbid")

    race_id: str | None = None
    uids: list[int]
    weights: list[int]
    top_hotkey: str | None = None
    top: int = 0
    burn: int = 0
    tail_sum: int = Field(default=0, description="Sum of tail weights that reached a registered UID.")

    def to_bytes(self) -> bytes:
        """Canonical serialisation of (uids, weights) for cross-validator byte comparison."""
        return orjson.dumps({"uids": self.uids, "weights": self.weights}, option=orjson.OPT_SORT_KEYS)


class WeightsDocument(BaseModel):
    """``weights.json``: the race's weight vector over UIDs, or ``skipped`` (with ``skip_reason``) when a
    validator would submit nothing: no race completed, or it completed without finishers."""

    model_config = ConfigDict(extra="forbid")

    race_id: str | None
    status: RaceStatus
    hotkey_to_uid: dict[str, int] = Field(default_factory=dict)
    config: WeightConfig = Field(default_factory=WeightConfig)
    skipped: bool = False
    skip_reason: str | None = Field(default=None, description="Why no weights were written (skipped).")
    uids: list[int] = Field(default_factory=list)
    weights: list[int] = Field(default_factory=list)
    top_hotkey: str | None = None
    top: int = 0
    burn: int = 0
    tail_sum: int = 0

    def to_bytes(self) -> bytes:
        """Canonical bytes (sorted keys, only the top-level fields set): identical inputs, identical bytes."""
        data = self.model_dump(mode="json")
        data = {key: value for key, value in data.items() if key in self.model_fields_set}
        return orjson.dumps(data, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2) + b"\n"


class RaceBank(BaseModel):
    """The hidden bank a race stage drew its problems from."""

    model_config = ConfigDict(extra="forbid")

    path: str
    sha256: str


class RaceDocument(BaseModel):
    """``race.json``, the one shape both writers use: ``arena firehose`` per race and the race stage.

    Its presence marks a finished race (the firehose resumes the races without one).
    """

    model_config = ConfigDict(extra="forbid")

    race: Race
    qualifying: QualifyingResult
    outcome: RaceOutcome | None = None
    config: dict[str, Any] | None = Field(
        default=None, description="The race stage's settings (informational; the firehose writes none)."
    )
    bank: RaceBank | None = None
    qualifying_runs: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)


class MinerTruth(BaseModel):
    """``agents/<name>/miner.json``: the harness truth of a firehose miner, copied onto corpus records and
    never read by the filter."""

    model_config = ConfigDict(extra="forbid")

    kind: str
    teacher: str = ""
    hotkey_hash: str | None = None


class ArenaRunFile(BaseModel):
    """What a reader of an arena run's (a race's) ``config.yaml`` needs: the suite, index and similarity that
    score its trajectories. The file is :class:`shoparena.arena.config.ArenaRunConfig`; other keys are the
    runner's own and ignored here."""

    model_config = ConfigDict(extra="ignore")

    suite: str | None = None
    index: str | None = None
    similarity: Literal["exact", "lexical", "embedding"] = "lexical"
    run_id: str | None = None


__all__ = [
    "ArenaRunFile",
    "DuplicateHotkeys",
    "Incumbent",
    "MinerTruth",
    "NoFinishers",
    "PromotionDecision",
    "QualificationType",
    "Qualifier",
    "QualifyingResult",
    "Race",
    "RaceBank",
    "RaceDocument",
    "RaceOutcome",
    "RaceStatus",
    "RankBy",
    "TailOnBurnUid",
    "WeightConfig",
    "WeightVector",
    "WeightsDocument",
]
