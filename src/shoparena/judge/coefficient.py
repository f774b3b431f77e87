"""Reasoning coefficient and final arena score, exactly as ORO computes them, plus the richness variant.

>>> reasoning_coefficient(0.1), reasoning_coefficient(0.7), reasoning_coefficient(0.9)
(0.3875, 0.9125, 1.0)
>>> judge_final_score(0.5, reasoning_coefficient(0.5))
0.3688
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict, Field

from shoparena.judge.llm_judge import run_failed
from shoparena.judge.records import JudgeStatus, JudgeVerdict


def reasoning_quality(scores: Iterable[float | None]) -> float:
    """q: the mean of the non-null scores, rounded to 4 decimals; 0.0 when there are none."""
    present = [s for s in scores if s is not None]
    return round(sum(present) / len(present), 4) if present else 0.0


def reasoning_coefficient(q: float) -> float:
    """1.0 when q >= 0.8, else round(0.3 + q * 0.7 / 0.8, 4)."""
    return 1.0 if q >= 0.8 else round(0.3 + q * 0.7 / 0.8, 4)


def judge_final_score(success_rate: float, coefficient: float) -> float:
    """ORO's ``validator_score``: round(success_rate * coefficient, 4)."""
    return round(success_rate * coefficient, 4)


def richness_final_score(base: float, agentic_richness: float) -> float:
    """ORO's announced replacement: round(base * (0.3 + 0.7 * richness), 4), richness clamped to [0, 1]."""
    richness = min(1.0, max(0.0, agentic_richness))
    return round(base * (0.3 + 0.7 * richness), 4)


class ArenaScore(BaseModel):
    """Both final-score variants and the unmultiplied base for one run."""

    model_config = ConfigDict(extra="forbid")

    base: float = Field(description="success_rate over the full run.")
    reasoning_quality: float
    reasoning_coefficient: float
    final_judge: float = Field(description="base x judge coefficient (ORO v1.0.79 validator_score).")
    agentic_richness: float | None = None
    final_richness: float | None = Field(default=None, description="base x (0.3 + 0.7 x richness).")
    judge_total: int = 0
    judge_failed: int = 0
    run_failed: bool = Field(
        default=False, description="judge_total >= 3 and judge_failed > judge_total / 2."
    )


def combine_scores(
    success_rate: float, verdicts: Iterable[JudgeVerdict], agentic_richness: float | None = None
) -> ArenaScore:
    """Turn a run's success rate, judge verdicts and optional richness into an :class:`ArenaScore`.

    Args:
        success_rate: Successful problems / full run size.
        verdicts: One verdict per judged (SUCCESS) trajectory; non-ok verdicts count as judge failures.
        agentic_richness: The run's richness in [0, 1], or None when it was not measured.
    """
    verdicts = list(verdicts)
    q = reasoning_quality(v.score for v in verdicts if v.status is JudgeStatus.OK)
    coefficient = reasoning_coefficient(q)
    failed = sum(v.status is not JudgeStatus.OK for v in verdicts)
    return ArenaScore(
        base=success_rate,
        reasoning_quality=q,
        reasoning_coefficient=coefficient,
        final_judge=judge_final_score(success_rate, coefficient),
        agentic_richness=agentic_richness,
        final_richness=(
            None if agentic_richness is None else richness_final_score(success_rate, agentic_richness)
        ),
        judge_total=len(verdicts),
        judge_failed=failed,
        run_failed=run_failed(len(verdicts), failed),
    )
