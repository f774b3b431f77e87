"""Aggregates and each profile's denominator rule (environment spec §8.5, arena spec §6)."""

from __future__ import annotations

import pytest
from scoring_helpers import FixedSimilarity, problem, product, recommending

from shoparena.records.problem import Intent
from shoparena.records.trajectory import EpisodeStatus
from shoparena.scoring import DictLookup, compute_aggregate, score_run

SIM = FixedSimilarity(0.0)


def _suite():
    probs = [
        problem([{"product_id": str(i), "title": [f"t{i}"]}], query=f"q{i}", category="Product")
        for i in range(1, 5)
    ]
    probs.append(
        problem(
            [{"product_id": "8", "title": ["t8"]}, {"product_id": "9", "title": ["t9"]}],
            query="q-shop",
            intent=Intent.SHOP,
        )
    )
    lookup = DictLookup([product(str(i), title=f"t{i}", shop_id="3") for i in (1, 2, 3, 4, 8, 9)])
    return probs, lookup


def _trajs(probs):
    # q1 success, q2 wrong product, q3 FAILED envelope, q4 missing, shop success (matched by query text)
    return [
        recommending("1", problem_id=probs[0].problem_id),
        recommending("4", query="q2"),
        recommending("3", query="q3", status=EpisodeStatus.FAILED),
        recommending("8,9", query="q-shop"),
    ]


def test_strict_denominator_is_suite_size() -> None:
    probs, lookup = _suite()
    run = score_run(probs, _trajs(probs), lookup, scoring_profile="strict", similarity=SIM)
    agg = run.aggregate
    assert agg.denominator == 5 and agg.total_problems == 5
    assert agg.successful_problems == 2 and agg.success_rate == pytest.approx(2 / 5)
    assert agg.scored_problems == 3 and agg.missing_problems == 1 and agg.failed_runs == 1
    assert agg.ground_truth_rate == pytest.approx(2 / 5)
    assert agg.per_category["Product"].denominator == 4
    assert agg.per_category["Product"].success_rate == pytest.approx(1 / 4)
    assert agg.per_category["Shop"].shop_rate == 1.0
    assert run.missing == 1


def test_shoppingbench_excludes_missing_but_reports_it() -> None:
    probs, lookup = _suite()
    agg = score_run(probs, _trajs(probs), lookup, scoring_profile="shoppingbench", similarity=SIM).aggregate
    assert agg.denominator == 4 and agg.total_problems == 5 and agg.missing_problems == 1
    assert agg.successful_problems == 3  # the FAILED envelope is scored from its steps
    assert agg.success_rate == pytest.approx(3 / 4)
    assert agg.per_category["Product"].denominator == 3


def test_rates_are_capped_and_empty_runs_are_zero() -> None:
    probs, lookup = _suite()
    run = score_run(probs, [recommending("1", query="q1")], lookup, scoring_profile="strict", similarity=SIM)
    capped = compute_aggregate(run.verdicts, scoring_profile="strict", suite_size=0)
    assert capped.success_rate == 1.0 and capped.denominator == 1
    empty = score_run(probs, [], lookup, scoring_profile="shoppingbench", similarity=SIM).aggregate
    assert empty.denominator == 0 and empty.success_rate == 0.0 and empty.missing_problems == 5


def test_duplicates_later_wins_and_unmatched_are_reported() -> None:
    probs, lookup = _suite()
    trajs = [recommending("1", query="q1"), recommending("2", query="q1"), recommending("1", query="nope")]
    run = score_run(probs, trajs, lookup, scoring_profile="strict", similarity=SIM)
    assert run.duplicates == 1 and len(run.unmatched) == 1
    assert not run.verdicts[0].success and run.verdicts[0].recommended_ids == ["2"]
