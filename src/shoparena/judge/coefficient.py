"""Reasoning coefficient and final arena score, exactly as ORO computes them, plus the richness variant.

>>> reasoning_coefficient(0.1), reasoning_coefficient(0.7), reasoning_coefficient(0.9)
(0.3875, 0.9125, 1.0)
>>> judge_final_score(0.5, reasoning_coefficient(0.5))
0.3688
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict, Field

from shoparena.judge.llm_judge import FailureAccounting, run_failed
from shoparena.judge.records import JudgeStatus, JudgeVerdict


def reasoning_quality(scores: Iterable[float | None]) -> float:
    """q: the mean of the non-null scores, rounded to 4 decimals; 0.0 when there are none."""
    present = [s for s in scores if s is not None]
    return round(sum(present) / len(present), 4) if present else 0.0


def quality_scores(verdicts: Iterable[JudgeVerdict], accounting: FailureAccounting = "oro") -> list[float]:
    """The scores q averages: ``ok`` scores, plus 0.0 per failed judgement under ``oro`` (ORO's judge returns
    0.0 when it gives up; a problem the circuit breaker skipped has no score either way)."""
    scores: list[float] = []
    for verdict in verdicts:
        if verdict.status is JudgeStatus.OK and verdict.score is not None:  # an ok verdict has a score
            scores.append(verdict.score)
        elif accounting == "oro" and verdict.status is not JudgeStatus.SKIPPED_BREAKER:
            scores.append(0.0)
    return scores


def judge_counts(verdicts: Iterable[JudgeVerdict], accounting: FailureAccounting = "oro") -> tuple[int, int]:
    """``(total, failed)`` for the run-failure rule.

    ``oro``: model calls, as ORO's ``judge_inference_total`` / ``judge_inference_failed``; a verdict made
    without a model call (the rubric judge) counts as one call of its own outcome, a skipped one as none.
    ``verdicts``: verdicts, every non-``ok`` one (skipped included) failed.
    """
    total = failed = 0
    for verdict in verdicts:
        ok = verdict.status is JudgeStatus.OK
        if accounting == "verdicts":
            total, failed = total + 1, failed + (not ok)
        elif verdict.attempts:
            total += len(verdict.attempts)
            failed += sum(a.outcome != "ok" for a in verdict.attempts)
        elif verdict.status is not JudgeStatus.SKIPPED_BREAKER:
            total, failed = total + 1, failed + (not ok)
    return total, failed


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
    judge_total: int = Field(default=0, description="Model calls (oro) or verdicts (verdicts).")
    judge_failed: int = 0
    run_failed: bool = Field(
        default=False, description="judge_total >= 3 and judge_failed > judge_total / 2."
    )
    failure_accounting: FailureAccounting = Field(
        default="verdicts",
        description="How judge failures counted (judge.llm_judge.FailureAccounting); files written before "
        "the option existed used verdicts.",
    )

    @property
    def judge_unusable(self) -> bool:
        """No judge score can be shown: the run failed by ORO's rule, or not one verdict was usable (a run
        of fewer than three judged trajectories, all failed, would otherwise print q 0 as a score)."""
        return self.run_failed or (self.judge_total > 0 and self.judge_failed == self.judge_total)


def combine_scores(
    success_rate: float,
    verdicts: Iterable[JudgeVerdict],
    agentic_richness: float | None = None,
    *,
    accounting: FailureAccounting = "oro",
) -> ArenaScore:
    """Turn a run's success rate, judge verdicts and optional richness into an :class:`ArenaScore`.

    Args:
        success_rate: Successful problems / full run size.
        verdicts: One verdict per judged (SUCCESS) trajectory.
        agentic_richness: The run's richness in [0, 1], or None when it was not measured.
        accounting: How judge failures count in q and in the run-failure rule (:data:`FailureAccounting`).
    """
    verdicts = list(verdicts)
    q = reasoning_quality(quality_scores(verdicts, accounting))
    coefficient = reasoning_coefficient(q)
    total, failed = judge_counts(verdicts, accounting)
    return ArenaScore(
        base=success_rate,
        reasoning_quality=q,
        reasoning_coefficient=coefficient,
        final_judge=judge_final_score(success_rate, coefficient),
        agentic_richness=agentic_richness,
        final_richness=(
            None if agentic_richness is None else richness_final_score(success_rate, agentic_richness)
        ),
        judge_total=total,
        judge_failed=failed,
        run_failed=run_failed(total, failed),
        failure_accounting=accounting,
    )
