"""Races: qualifying threshold, incumbent protection with a decaying margin, and the final ranking.

ORO keeps these rules inside its closed Backend; the formulas here are our published design (defaults in
``docs/arena.md``, section "Race and weights"). Everything is a pure function of its inputs: time comes from
the race's own ``completed_at`` and the incumbent's ``top_at``, never from a clock.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, model_validator

from shoparena.records.race import (
    Incumbent,
    PromotionDecision,
    QualificationType,
    Qualifier,
    QualifyingResult,
    Race,
    RaceOutcome,
    RaceStatus,
)


class DecayShape(StrEnum):
    EXPONENTIAL = "exponential"
    LINEAR = "linear"


class RaceConfig(BaseModel):
    """Race policy knobs (our design; ORO publishes none). Defaults are documented in docs/arena.md."""

    model_config = ConfigDict(extra="forbid")

    qualifying_floor: float = Field(default=0.1, ge=0, description="Absolute minimum qualifying score.")
    qualifying_ratio: float = Field(
        default=0.95, ge=0, le=1, description="Share of the best qualifying score a version must reach."
    )
    margin0: float = Field(default=0.05, ge=0, description="Margin right after the incumbent took the top.")
    margin_min: float = Field(default=0.01, ge=0, description="Margin the decay tends to.")
    decay_shape: DecayShape = DecayShape.EXPONENTIAL
    half_life_s: float = Field(
        default=3 * 86400, gt=0, description="Exponential: margin - margin_min halves this often."
    )
    linear_decay_s: float = Field(default=7 * 86400, gt=0, description="Linear: time to reach margin_min.")

    @model_validator(mode="after")
    def _margins_ordered(self) -> RaceConfig:
        if self.margin_min > self.margin0:
            raise ValueError("RaceConfig.margin_min must not exceed RaceConfig.margin0")
        return self


def ranking_key(q: Qualifier) -> tuple[float, str]:
    """ORO's order: race_score descending, then agent_version_id ascending as a string."""
    return (-(q.race_score if q.race_score is not None else -math.inf), q.agent_version_id)


def rank_by_score(qualifiers: Iterable[Qualifier]) -> list[Qualifier]:
    """Qualifiers sorted in ORO's order."""
    return sorted(qualifiers, key=ranking_key)


SCORE_DECIMALS = 6
"""Thresholds are rounded to this many decimals so float noise (0.9 * 0.8 = 0.7200000000000001) cannot flip a
comparison; arena scores themselves carry 4 decimals."""


def qualifying_threshold(qualifying_scores: Iterable[float], config: RaceConfig) -> float:
    """``max(qualifying_floor, qualifying_ratio * best qualifying score)``, rounded to 6 decimals."""
    best = max(qualifying_scores, default=0.0)
    return round(max(config.qualifying_floor, config.qualifying_ratio * best), SCORE_DECIMALS)


def _qualifying_key(q: Qualifier) -> tuple[float, str]:
    score = q.qualifying_score if q.qualifying_score is not None else -math.inf
    return (-score, q.agent_version_id)


def _best_per_hotkey(candidates: Iterable[Qualifier]) -> list[Qualifier]:
    best: dict[str, Qualifier] = {}
    for c in candidates:
        key = c.hotkey or f"\0{c.agent_version_id}"  # hotkey-less versions stay separate
        if key not in best or _qualifying_key(c) < _qualifying_key(best[key]):
            best[key] = c
    return sorted(best.values(), key=_qualifying_key)


def select_qualifiers(
    candidates: Iterable[Qualifier], config: RaceConfig, incumbent: Incumbent | None = None
) -> QualifyingResult:
    """Apply the qualifying threshold.

    Each hotkey keeps its best version. The incumbent's hotkey (or a candidate already typed INCUMBENT)
    enters without meeting the threshold; it does not make a race alone. If no SCORED candidate meets the
    threshold the race is CANCELLED.
    """
    pool = _best_per_hotkey(candidates)
    scores = [c.qualifying_score for c in pool if c.qualifying_score is not None]
    threshold = qualifying_threshold(scores, config)
    accepted: list[Qualifier] = []
    rejected: list[Qualifier] = []
    scored = 0
    for c in pool:
        if (incumbent is not None and c.hotkey == incumbent.hotkey) or (
            c.qualification_type is QualificationType.INCUMBENT
        ):
            accepted.append(c.model_copy(update={"qualification_type": QualificationType.INCUMBENT}))
        elif c.qualifying_score is not None and c.qualifying_score >= threshold:
            accepted.append(c.model_copy(update={"qualification_type": QualificationType.SCORED}))
            scored += 1
        else:
            rejected.append(c)
    if scored == 0:
        return QualifyingResult(status=RaceStatus.CANCELLED, threshold=threshold, rejected=pool)
    return QualifyingResult(
        status=RaceStatus.RACE_RUNNING,
        threshold=threshold,
        qualifiers=rank_by_qualifying(accepted),
        rejected=rejected,
    )


def rank_by_qualifying(qualifiers: Iterable[Qualifier]) -> list[Qualifier]:
    """Sort by qualifying score descending (missing last), then agent_version_id."""
    return sorted(qualifiers, key=_qualifying_key)


def margin_at(elapsed_s: float, config: RaceConfig) -> float:
    """The challenge margin ``elapsed_s`` seconds after the incumbent took the top.

    Exponential: ``margin_min + (margin0 - margin_min) * 2 ** (-t / half_life_s)``.
    Linear: from ``margin0`` down to ``margin_min`` over ``linear_decay_s``, then flat.
    """
    t = max(0.0, elapsed_s)
    gap = config.margin0 - config.margin_min
    if config.decay_shape is DecayShape.LINEAR:
        return config.margin0 - gap * min(t / config.linear_decay_s, 1.0)
    return config.margin_min + gap * 2.0 ** (-t / config.half_life_s)


def required_score(top_score: float, elapsed_s: float, config: RaceConfig) -> float:
    """``top_score * (1 + margin(t))`` rounded to 6 decimals; a challenger must score strictly more."""
    return round(top_score * (1.0 + margin_at(elapsed_s, config)), SCORE_DECIMALS)


def resolve_race(race: Race, incumbent: Incumbent | None, config: RaceConfig) -> RaceOutcome:
    """Rank a completed race, protecting the incumbent with the decaying margin.

    Finishers are qualifiers with a hotkey and a race score. Without an incumbent among them, rank 1 is the
    highest score (ORO tie-break). With one, the best challenger takes rank 1 only if its score is strictly
    above ``incumbent's score in this race * (1 + margin(t))``, ``t = race.completed_at - incumbent.top_at``;
    otherwise the incumbent is rank 1 and the rest follow in ORO order.

    Raises:
        ValueError: The race is not RACE_COMPLETE, or it lacks ``completed_at`` while an incumbent races.
    """
    if race.status is not RaceStatus.RACE_COMPLETE:
        raise ValueError(f"Race.status is {race.status.value}; only RACE_COMPLETE races can be resolved")
    finishers = rank_by_score(q for q in race.qualifiers if q.hotkey and q.race_score is not None)
    inc = next((q for q in finishers if incumbent and q.hotkey == incumbent.hotkey), None)
    decision = None
    new_incumbent = incumbent
    if inc is not None and incumbent is not None:
        if race.completed_at is None:
            raise ValueError("Race.completed_at is required to age the incumbent's margin")
        elapsed = max(0.0, (race.completed_at - incumbent.top_at).total_seconds())
        assert inc.race_score is not None
        required = required_score(inc.race_score, elapsed, config)
        challenger = next((q for q in finishers if q.hotkey != incumbent.hotkey), None)
        promoted = (
            challenger is not None
            and challenger.race_score is not None
            and (challenger.race_score > required)
        )
        decision = PromotionDecision(
            candidate_hotkey=challenger.hotkey if challenger else None,
            candidate_score=challenger.race_score if challenger else None,
            current_top_score=inc.race_score,
            required_score=required,
            margin=margin_at(elapsed, config),
            elapsed_s=elapsed,
            promoted=promoted,
        )
        if promoted:
            assert challenger is not None and challenger.hotkey is not None
            new_incumbent = Incumbent(
                hotkey=challenger.hotkey,
                agent_version_id=challenger.agent_version_id,
                top_at=race.completed_at,
                top_score=challenger.race_score,
            )
        else:
            finishers = [inc] + [q for q in finishers if q is not inc]
            new_incumbent = incumbent.model_copy(update={"top_score": inc.race_score})
    elif finishers:
        winner = finishers[0]
        assert winner.hotkey is not None
        if incumbent is None or winner.hotkey != incumbent.hotkey:
            top_at = race.completed_at
            if top_at is None:
                raise ValueError("Race.completed_at is required to record when the new top took over")
            new_incumbent = Incumbent(
                hotkey=winner.hotkey,
                agent_version_id=winner.agent_version_id,
                top_at=top_at,
                top_score=winner.race_score,
            )
    ranking = [q.model_copy(update={"race_rank": i}) for i, q in enumerate(finishers, start=1)]
    return RaceOutcome(
        race_id=race.race_id,
        status=race.status,
        ranking=ranking,
        top_hotkey=ranking[0].hotkey if ranking else (incumbent.hotkey if incumbent else None),
        incumbent=new_incumbent,
        decision=decision,
    )
