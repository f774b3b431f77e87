"""The scoring bench: one object, both profiles, the same verdicts as the scorer it wraps."""

from __future__ import annotations

import json

import pytest

from shoparena.scoring import get_similarity, score_run, score_trajectory
from shoparena.scoring.bench import BOTH_PROFILES, ScoringBench
from shoparena.suites.bench import BenchCache, open_bench
from shoparena.suites.checks import recommend_trajectory


def test_score_gives_both_profiles_verdicts_of_the_scorer(hand, product_problem):
    bench = ScoringBench([product_problem], hand.index, "lexical")
    wrong = recommend_trajectory(product_problem, ["102"])
    right = recommend_trajectory(product_problem, ["101"])
    for trajectory in (wrong, right):
        both = bench.score(trajectory)
        assert both is not None
        for name in BOTH_PROFILES:
            direct = score_trajectory(
                product_problem,
                trajectory,
                hand.index,
                scoring_profile=name,
                similarity=get_similarity("lexical"),
            )
            assert both.of(name).model_dump() == direct.model_dump()
    assert bench.score(right).strict.success and not bench.score(wrong).strict.success


def test_what_cannot_be_scored_says_why(hand, product_problem):
    trajectory = recommend_trajectory(product_problem, ["101"])
    assert ScoringBench([], hand.index).unscorable("p1") == "no ground truth"
    assert ScoringBench([product_problem], None).unscorable("p1") == "no catalogue index"
    assert ScoringBench([product_problem], None).score(trajectory) is None
    assert ScoringBench([], hand.index).score(trajectory) is None
    with pytest.raises(ValueError, match="no product lookup"):
        ScoringBench([product_problem], None).verdict(product_problem, trajectory)


def test_score_run_matches_the_scorer_and_the_similarity_is_built_once(
    hand, product_problem, voucher_problem
):
    problems = [product_problem, voucher_problem]
    bench = ScoringBench(problems, hand.index, "exact")
    runs = [recommend_trajectory(product_problem, ["101"])]
    for name in BOTH_PROFILES:
        ours = bench.score_run(runs, name).aggregate
        theirs = score_run(
            problems, runs, hand.index, scoring_profile=name, similarity=get_similarity("exact")
        ).aggregate
        assert ours.model_dump() == theirs.model_dump()
    assert bench.similarity is bench.similarity and bench.backend.startswith("exact:")


def test_open_bench_reads_each_suite_and_index_once(hand, product_problem, tmp_path):
    suite = tmp_path / "suite.json"
    suite.write_text(json.dumps([{"problem_id": "p1", **_oro(product_problem)}]))
    cache = BenchCache()
    first = open_bench(suite, hand.index.index_dir, cache=cache)
    second = open_bench([suite], hand.index.index_dir, cache=cache)
    assert list(first.problems) == ["p1"] and first.lookup is second.lookup
    assert cache.problems().keys() == {"p1"} and len(cache.indexes()) == 1
    assert open_bench([], None).score(recommend_trajectory(product_problem, ["101"])) is None


def _oro(problem):
    from shoparena.suites.loaders import oro_record

    return oro_record(problem)


class _CountingLookup:
    def __init__(self, inner) -> None:
        self.inner, self.asked = inner, []

    def get_product(self, product_id: str):
        self.asked.append(product_id)
        return self.inner.get_product(product_id)


def test_a_memo_lookup_gives_the_same_verdicts_and_reads_each_product_once(hand, product_problem):
    from shoparena.scoring.lookup import MemoLookup

    trajectories = [recommend_trajectory(product_problem, [pid]) for pid in ("101", "102", "101", "nope")]
    plain = ScoringBench([product_problem], hand.index, "lexical")
    counting = _CountingLookup(hand.index)
    lookup = MemoLookup(counting, size=2)
    memo = ScoringBench([product_problem], lookup, "lexical")
    for trajectory in trajectories:
        for name in BOTH_PROFILES:
            assert (
                memo.score(trajectory).of(name).model_dump() == plain.score(trajectory).of(name).model_dump()
            )
    # Both profiles and the repeated recommendation read "101" once; the unknown id's None is kept too.
    assert counting.asked == ["101", "102", "nope"]
    again = recommend_trajectory(product_problem, ["nope"])
    assert memo.score(again).strict.model_dump() == plain.score(again).strict.model_dump()
    assert counting.asked == ["101", "102", "nope"]
    # A full memo (size 2) starts over: "101" is read again after "102" and "nope" filled it (by a new bench:
    # this one remembers the slot verdicts of "101" itself).
    ScoringBench([product_problem], lookup, "lexical").score(recommend_trajectory(product_problem, ["101"]))
    assert counting.asked == ["101", "102", "nope", "101"]


def test_slot_verdicts_are_remembered_per_problem_and_ids(hand, product_problem, voucher_problem):
    """A bench remembers slot verdicts (miners recommend alike): the same verdicts as the scorer without the
    memo, lists the caller extends are its own, and a look-alike problem (same id, other ground truth) or a
    bench over another lookup is never answered from it."""
    bench = ScoringBench([product_problem, voucher_problem], hand.index, "lexical")
    similarity = get_similarity("lexical")
    picks = [(product_problem, ["101"]), (product_problem, ["102"]), (voucher_problem, ["102", "104"])]
    for _ in range(3):  # the second and third rounds are answered from the memo
        for problem, ids in picks:
            trajectory = recommend_trajectory(problem, ids)
            for name in BOTH_PROFILES:
                direct = score_trajectory(
                    problem, trajectory, hand.index, scoring_profile=name, similarity=similarity
                )
                assert bench.verdict(problem, trajectory, name).model_dump() == direct.model_dump()
    assert len(bench._slot_memo._items) == len(picks) * len(BOTH_PROFILES)
    other = product_problem.model_copy(update={"reward": voucher_problem.reward[:1]})
    trajectory = recommend_trajectory(other, ["102"])
    direct = score_trajectory(other, trajectory, hand.index, scoring_profile="strict", similarity=similarity)
    assert bench.verdict(other, trajectory, "strict").model_dump() == direct.model_dump()
    assert direct.gt == 1.0  # "102" is the look-alike's ground truth, not product_problem's
