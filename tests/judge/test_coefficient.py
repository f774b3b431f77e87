"""Coefficient, final score and richness variant."""

from __future__ import annotations

import pytest

from shoparena.judge import (
    JudgeAttempt,
    JudgeStatus,
    JudgeVerdict,
    combine_scores,
    judge_counts,
    judge_final_score,
    quality_scores,
    reasoning_coefficient,
    reasoning_quality,
    richness_final_score,
)


@pytest.mark.parametrize(
    ("q", "coefficient"),
    [(0.0, 0.3), (0.1, 0.3875), (0.3, 0.5625), (0.5, 0.7375), (0.7, 0.9125), (0.79, 0.9912), (0.8, 1.0),
     (0.9, 1.0)],
)
def test_coefficient_bins(q: float, coefficient: float) -> None:
    assert reasoning_coefficient(q) == coefficient


def test_quality_mean_skips_nulls_and_rounds() -> None:
    assert reasoning_quality([0.1, 0.3, None, 0.5]) == 0.3
    assert reasoning_quality([0.1, 0.1, 0.9]) == 0.3667
    assert reasoning_quality([None, None]) == 0.0 and reasoning_quality([]) == 0.0


def test_final_scores() -> None:
    assert judge_final_score(0.6, 0.9125) == 0.5475
    assert judge_final_score(1 / 3, 0.3875) == 0.1292
    assert richness_final_score(0.6, 0.5) == 0.39
    assert richness_final_score(0.6, 1.5) == 0.6 and richness_final_score(0.6, -1) == 0.18


def _v(status: JudgeStatus, score: float | None = None) -> JudgeVerdict:
    return JudgeVerdict(status=status, score=score)


def test_combine_scores_reports_both_variants() -> None:
    verdicts = [_v(JudgeStatus.OK, 0.9), _v(JudgeStatus.OK, 0.5), _v(JudgeStatus.UNAVAILABLE),
                _v(JudgeStatus.OK, 0.7)]
    score = combine_scores(0.5, verdicts, agentic_richness=0.25, accounting="verdicts")
    assert score.reasoning_quality == 0.7 and score.reasoning_coefficient == 0.9125
    assert score.final_judge == 0.4562
    assert score.final_richness == round(0.5 * (0.3 + 0.7 * 0.25), 4)
    assert score.base == 0.5 and (score.judge_total, score.judge_failed) == (4, 1) and not score.run_failed
    failing = combine_scores(0.5, [_v(JudgeStatus.PARSE_ERROR), _v(JudgeStatus.SKIPPED_BREAKER),
                                   _v(JudgeStatus.OK, 0.9)], accounting="verdicts")
    assert failing.run_failed and failing.reasoning_quality == 0.9 and failing.final_richness is None
    assert failing.failure_accounting == "verdicts"


def _call(outcome: str) -> JudgeAttempt:
    return JudgeAttempt(model="m", outcome=outcome)


def test_oro_accounting_scores_failures_as_zero_and_counts_calls() -> None:
    verdicts = [
        JudgeVerdict(status=JudgeStatus.OK, score=0.9, attempts=[_call("rate_limited"), _call("ok")]),
        JudgeVerdict(status=JudgeStatus.UNAVAILABLE, attempts=[_call("timeout")] * 8),
        JudgeVerdict(status=JudgeStatus.PARSE_ERROR, attempts=[_call("unparseable")]),
        _v(JudgeStatus.SKIPPED_BREAKER),  # no call, no score: out of both
        _v(JudgeStatus.OK, 0.5),  # the rubric judge makes no model call: one successful call
    ]
    assert quality_scores(verdicts) == [0.9, 0.0, 0.0, 0.5]
    assert quality_scores(verdicts, "verdicts") == [0.9, 0.5]
    assert judge_counts(verdicts) == (12, 10) and judge_counts(verdicts, "verdicts") == (5, 3)
    score = combine_scores(1.0, verdicts)
    assert score.failure_accounting == "oro" and score.reasoning_quality == 0.35
    assert score.reasoning_coefficient == round(0.3 + 0.35 * 0.7 / 0.8, 4) and score.run_failed


def test_verdict_score_must_match_status() -> None:
    with pytest.raises(ValueError, match=r"JudgeVerdict\.score"):
        JudgeVerdict(status=JudgeStatus.UNAVAILABLE, score=0.0)
    with pytest.raises(ValueError, match=r"JudgeVerdict\.score"):
        JudgeVerdict(status=JudgeStatus.OK)
