"""Every shared-data suite: GT ids score 100 % under both profiles; another problem's ids fail, explained."""

from __future__ import annotations

import pytest
from scoring_helpers import SHARED_SUITES, recommending

from shoparena.scoring import LexicalSimilarity, plant_products, score_run
from shoparena.suites import load_suite

pytestmark = pytest.mark.skipif(not SHARED_SUITES, reason="shared data not present")


@pytest.fixture(scope="module", params=SHARED_SUITES, ids=lambda p: p.name)
def suite(request):
    problems, summary = load_suite(request.param)
    assert summary.quarantined == 0
    return problems, plant_products(problems)


@pytest.mark.parametrize("profile", ["shoppingbench", "strict"])
def test_gt_ids_succeed_everywhere(suite, profile: str) -> None:
    problems, lookup = suite
    trajs = [recommending(",".join(p.gt_ids), query=p.query) for p in problems]
    run = score_run(problems, trajs, lookup, scoring_profile=profile, similarity=LexicalSimilarity())
    failed = [v.explain() for v in run.verdicts if not v.success]
    assert not failed, failed[:2]
    assert run.aggregate.success_rate == 1.0 and run.aggregate.ground_truth_rate == 1.0


def test_planted_products_meet_constraints_without_gt_shortcut(suite) -> None:
    problems, lookup = suite
    # Strict still counts every constraint on a GT product: planted products must meet all of them.
    trajs = [recommending(",".join(p.gt_ids), query=p.query) for p in problems]
    run = score_run(problems, trajs, lookup, scoring_profile="strict", similarity=LexicalSimilarity())
    for v in run.verdicts:
        for slot in v.slots:
            assert slot.hits == slot.units, v.explain()


def test_other_problems_ids_fail_with_named_checks(suite) -> None:
    problems, lookup = suite
    trajs = [
        recommending(",".join(problems[(i + 1) % len(problems)].gt_ids), query=p.query)
        for i, p in enumerate(problems)
    ]
    run = score_run(problems, trajs, lookup, scoring_profile="strict", similarity=LexicalSimilarity())
    assert run.aggregate.success_rate == 0.0
    for v in run.verdicts:
        names = {c.name for c in v.failed_checks()}
        assert names & {"title", "found", "rule"}, v.explain()
