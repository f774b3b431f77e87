"""Rule score, id parsing, slot mapping and profile differences (environment spec §8.1-§8.3)."""

from __future__ import annotations

import pytest
from scoring_helpers import FixedSimilarity, problem, product, recommending, step

from shoparena.records.trajectory import EpisodeStatus, Trajectory
from shoparena.records.verdict import VerdictStatus
from shoparena.scoring import SHOPPINGBENCH, STRICT, DictLookup, get_profile, score_trajectory

SIM = FixedSimilarity(0.0)


def test_profile_aliases_and_unknown() -> None:
    assert get_profile("production-strict") is STRICT and get_profile("shoppingbench") is SHOPPINGBENCH
    with pytest.raises(ValueError, match="unknown scoring profile"):
        get_profile("lenient")


def test_id_parsing_per_profile() -> None:
    assert STRICT.parse_ids(" 1 ,2,, 1,3 ") == ["1", "2", "3"]
    assert SHOPPINGBENCH.parse_ids("1,1, 2") == ["1", "1", " 2"]
    assert STRICT.parse_ids("") == [] and SHOPPINGBENCH.parse_ids("") == [""]


def test_dedup_shifts_slots_in_strict_only() -> None:
    prob = problem([{"product_id": "1", "title": ["a"]}, {"product_id": "2", "title": ["b"]}])
    lookup = DictLookup([product("1", title="a"), product("2", title="b")])
    strict = score_trajectory(prob, recommending("1,1,2"), lookup, scoring_profile="strict", similarity=SIM)
    sb = score_trajectory(
        prob, recommending("1,1,2"), lookup, scoring_profile="shoppingbench", similarity=SIM
    )
    assert strict.success and strict.gt == 1.0
    assert not sb.success and sb.gt == 0.5  # slot 1 got product 1 again


def test_last_recommend_wins_and_reset_by_call_without_ids() -> None:
    prob = problem([{"product_id": "1", "title": ["a"]}])
    lookup = DictLookup([product("1", title="a"), product("2", title="zzz")])
    first_good = Trajectory(
        query="q",
        steps=[
            step(1, calls=[("recommend_product", {"product_ids": "1"})]),
            step(2, calls=[("recommend_product", {"product_ids": "2"})]),
        ],
    )
    v = score_trajectory(prob, first_good, lookup, scoring_profile="strict", similarity=SIM)
    assert v.recommended_ids == ["2"] and not v.success
    reset = Trajectory(
        query="q",
        steps=[
            step(1, calls=[("recommend_product", {"product_ids": "1"})]),
            step(2, calls=[("recommend_product", {})]),
        ],
    )
    v = score_trajectory(prob, reset, lookup, scoring_profile="strict", similarity=SIM)
    assert v.recommended_raw == "" and v.recommended_ids == [] and not v.success


@pytest.mark.parametrize("profile", ["strict", "shoppingbench"])
def test_non_string_ids_are_no_recommendation(profile: str) -> None:
    prob = problem([{"product_id": "1", "title": ["a"]}])
    v = score_trajectory(
        prob,
        recommending(["1"]),
        DictLookup([product("1", title="a")]),
        scoring_profile=profile,
        similarity=SIM,
    )
    assert not v.success and v.recommended_ids == [] and any("not a string" in n for n in v.notes)


def test_extras_ignored_and_missing_slot_scores_zero() -> None:
    prob = problem([{"product_id": "1", "title": ["a"]}, {"product_id": "2", "title": ["b"]}])
    lookup = DictLookup([product("1", title="a"), product("2", title="b"), product("3")])
    extra = score_trajectory(prob, recommending("1,2,3"), lookup, scoring_profile="strict", similarity=SIM)
    assert extra.success and len(extra.slots) == 2
    short = score_trajectory(prob, recommending("1"), lookup, scoring_profile="strict", similarity=SIM)
    assert short.rule == 0.5 and short.product == 0.5 and short.shop == 0.0
    found = [c for c in short.failed_checks() if c.name == "found"]
    assert found and found[0].slot == 1 and found[0].detail == "no id in this position"


def test_gt_short_circuit_vs_strict_counters() -> None:
    prob = problem(
        [{"product_id": "1", "title": ["a"], "service": ["COD"], "price": [{"greater than": [50, None]}]}]
    )
    lookup = DictLookup([product("1", title="a", price=10.0)])
    sb = score_trajectory(prob, recommending("1"), lookup, scoring_profile="shoppingbench", similarity=SIM)
    strict = score_trajectory(prob, recommending("1"), lookup, scoring_profile="strict", similarity=SIM)
    assert sb.rule == 1.0 and sb.slots[0].units == {} and sb.field_scores["price"] == 1.0
    assert strict.rule == 1.0 and strict.success
    assert strict.slots[0].hits["title"] == 1 and strict.field_scores["price"] == 0.0
    assert strict.field_scores["service"] == 0.0 and strict.slots[0].units["service"] == 1


def test_price_ops_and_unknown_op() -> None:
    prob = problem(
        [
            {
                "product_id": "1",
                "title": ["a"],
                "price": [
                    {"less than": [0, 20]},
                    {"greater than": [10, None]},
                    {"between": [10, 10]},
                    {"about": [5]},
                ],
            }
        ]
    )
    lookup = DictLookup([product("2", title="a", price=10.0)])
    v = score_trajectory(
        prob, recommending("2"), lookup, scoring_profile="strict", similarity=FixedSimilarity(1.0)
    )
    assert v.slots[0].units["price"] == 4 and v.slots[0].hits["price"] == 3
    unknown = [c for c in v.checks if c.field == "price.about"]
    assert unknown and not unknown[0].passed and "unknown price op" in unknown[0].detail


def test_service_check_is_exact() -> None:
    prob = problem([{"product_id": "1", "title": ["a"], "service": ["COD", "official"]}])
    lookup = DictLookup([product("2", title="a", service=["COD"])])
    v = score_trajectory(
        prob, recommending("2"), lookup, scoring_profile="shoppingbench", similarity=FixedSimilarity(1.0)
    )
    assert v.field_scores["service"] == 0.5
    assert [c.expected for c in v.failed_checks() if c.name == "service"] == ["official"]


def test_strict_no_units_is_rule_zero() -> None:
    prob = problem([{"product_id": "1", "title": []}])
    v = score_trajectory(
        prob, recommending("2"), DictLookup([product("2")]), scoring_profile="strict", similarity=SIM
    )
    assert v.rule == 0.0


def test_strict_shop_hits_need_rule_above_zero() -> None:
    prob = problem([{"product_id": "1", "title": ["a"]}, {"product_id": "2", "title": ["b"]}])
    lookup = DictLookup([product("1", title="a", shop_id="4"), product("3", title="zzz", shop_id="4")])
    strict = score_trajectory(prob, recommending("1,3"), lookup, scoring_profile="strict", similarity=SIM)
    sb = score_trajectory(prob, recommending("1,3"), lookup, scoring_profile="shoppingbench", similarity=SIM)
    assert strict.shop == 0.0 and sb.shop == 1.0
    assert not strict.success and not sb.success  # rule 0.5 either way


def test_failed_runs_and_missing() -> None:
    prob = problem([{"product_id": "1", "title": ["a"]}])
    lookup = DictLookup([product("1", title="a")])
    failed = recommending("1", status=EpisodeStatus.FAILED)
    assert (
        score_trajectory(prob, failed, lookup, scoring_profile="strict", similarity=SIM).status
        is VerdictStatus.FAILED_RUN
    )
    sb = score_trajectory(prob, failed, lookup, scoring_profile="shoppingbench", similarity=SIM)
    assert sb.status is VerdictStatus.SCORED and sb.success
    missing = score_trajectory(prob, None, lookup, scoring_profile="strict", similarity=SIM)
    assert missing.status is VerdictStatus.MISSING and not missing.success


def test_verdict_records_backend_and_explains() -> None:
    prob = problem([{"product_id": "1", "title": ["a"]}])
    v = score_trajectory(
        prob,
        recommending("2"),
        DictLookup([product("2", title="b")]),
        scoring_profile="strict",
        similarity=FixedSimilarity(0.3),
    )
    assert v.title_backend == "fixed:test" and v.title_threshold == 0.7 and not v.title_comparable
    text = v.explain()
    assert "similarity 0.300 < 0.7" in text and "non-comparable" in text
    assert type(v).model_validate_json(v.model_dump_json()) == v


@pytest.mark.parametrize("profile", ["shoppingbench", "strict"])
def test_the_public_checks_have_one_shape_whether_the_exact_id_or_another_product_passed(profile) -> None:
    """Issue 52, finding 5: under shoppingbench the ground-truth id short-circuits to rule 1, and its public
    verdict listed no required check while another passing product's listed one per constraint: the
    shape told exact matches apart. Both now list the same checks, all passed."""
    reward = {
        "product_id": "1",
        "title": ["a"],
        "service": ["COD"],
        "price": [{"greater than": [5, None]}, {"less than": [0, 50]}],
    }
    prob = problem([reward])
    lookup = DictLookup([product("1", title="a", service=["COD"]), product("2", title="a", service=["COD"])])
    views = []
    for pid in ("1", "2"):
        verdict = score_trajectory(
            prob, recommending(pid), lookup, scoring_profile=profile, similarity=FixedSimilarity(1.0)
        )
        assert verdict.success and verdict.gt == float(pid == "1")
        views.append(verdict.public_view())
    exact, other = views
    assert exact["checks"] == other["checks"] and len(exact["checks"]) == 5  # 4 constraints and the rule
    assert {k: v for k, v in exact.items() if k not in ("recommended_ids",)} == {
        k: v for k, v in other.items() if k not in ("recommended_ids",)
    }
