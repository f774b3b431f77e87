"""Every worked example of environment spec §8.7, under both profiles."""

from __future__ import annotations

import pytest
from scoring_helpers import FixedSimilarity, problem, product, recommending, step

from shoparena.records.problem import Intent
from shoparena.records.trajectory import Trajectory
from shoparena.scoring import DictLookup, score_trajectory

BOTH = ("shoppingbench", "strict")


def test_example_1_title_threshold_and_absent_fields() -> None:
    prob = problem(
        [
            {
                "product_id": "1",
                "title": ["GT title"],
                "price": [{"between": [180, 505]}],
                "attributes": [{"brand": ["hosport"]}],
            }
        ]
    )
    lookup = DictLookup([product("2", price=329.0, attributes={"brand": ["hosport"]})])
    sb = score_trajectory(
        prob, recommending("2"), lookup, scoring_profile="shoppingbench", similarity=FixedSimilarity(0.62)
    )
    strict = score_trajectory(
        prob, recommending("2"), lookup, scoring_profile="strict", similarity=FixedSimilarity(0.62)
    )
    assert sb.rule == 1.0 and sb.success and sb.field_scores["service"] == 1.0
    assert (
        strict.rule == pytest.approx(2 / 3) and not strict.success and strict.field_scores["service"] == 0.0
    )
    assert [c.name for c in strict.failed_checks()] == ["title", "rule"]
    assert sb.title_threshold == 0.5 and strict.title_threshold == 0.7


@pytest.mark.parametrize("profile", BOTH)
def test_example_2_sku_pairs_need_one_variant(profile: str) -> None:
    prob = problem(
        [{"product_id": "1", "title": ["t"], "sku_options": [{"color_family": "black", "size": "m"}]}]
    )
    p = product(
        "2",
        sku_options={"1": {"color_family": "black", "size": "s"}, "2": {"color_family": "red", "size": "m"}},
    )
    v = score_trajectory(
        prob, recommending("2"), DictLookup([p]), scoring_profile=profile, similarity=FixedSimilarity(0.9)
    )
    assert v.slots[0].hits["sku_attrs"] == 1 and v.slots[0].units["sku_attrs"] == 2
    assert v.rule == pytest.approx(2 / 3) and not v.success


@pytest.mark.parametrize("profile", BOTH)
def test_example_3_attribute_pool_completes_a_variant(profile: str) -> None:
    prob = problem(
        [{"product_id": "1", "title": ["t"], "sku_options": [{"color_family": "black", "size": "m"}]}]
    )
    p = product(
        "2",
        sku_options={"1": {"color_family": "black", "size": "s"}, "2": {"color_family": "red", "size": "m"}},
        attributes={"size": ["m"]},
    )
    v = score_trajectory(
        prob, recommending("2"), DictLookup([p]), scoring_profile=profile, similarity=FixedSimilarity(0.9)
    )
    assert v.rule == 1.0 and v.success
    sku = next(c for c in v.checks if c.name == "sku_attrs")
    assert sku.actual["best_variant"] == "1"


def test_example_4_id_stripping_differs() -> None:
    prob = problem([{"product_id": "100", "title": ["t"]}])
    lookup = DictLookup([product("100", title="t")])
    sb = score_trajectory(
        prob, recommending(" 100"), lookup, scoring_profile="shoppingbench", similarity=FixedSimilarity(0)
    )
    strict = score_trajectory(
        prob, recommending(" 100"), lookup, scoring_profile="strict", similarity=FixedSimilarity(0)
    )
    assert not sb.success and sb.rule == 0 and sb.checks[0].name == "found"
    assert strict.success and strict.gt == 1.0 and strict.recommended_ids == ["100"]


@pytest.mark.parametrize("profile", BOTH)
def test_example_5_shop_needs_one_shop(profile: str) -> None:
    prob = problem([{"product_id": "1", "title": ["a"]}, {"product_id": "2", "title": ["b"]}])
    lookup = DictLookup([product("1", title="a", shop_id="1"), product("2", title="b", shop_id="2")])
    v = score_trajectory(
        prob, recommending("1,2"), lookup, scoring_profile=profile, similarity=FixedSimilarity(0)
    )
    assert v.rule == 1.0 and v.shop == 0.0 and not v.success
    assert [c.name for c in v.failed_checks()] == ["shop"]
    same = DictLookup([product("1", title="a", shop_id="7"), product("2", title="b", shop_id="7")])
    assert score_trajectory(
        prob, recommending("1,2"), same, scoring_profile=profile, similarity=FixedSimilarity(0)
    ).success


def _voucher_problem(prices: list[float], shops: list[str], **voucher: object):
    reward = [{"product_id": str(i + 1), "title": [f"t{i}"]} for i in range(len(prices))]
    base = {"voucher_type": "platform", "price_after_voucher": 1.0}
    base.update(voucher)
    prob = problem(reward, voucher=base)
    lookup = DictLookup(
        [
            product(str(i + 1), title=f"t{i}", price=p, shop_id=s)
            for i, (p, s) in enumerate(zip(prices, shops, strict=True))
        ]
    )
    ids = ",".join(str(i + 1) for i in range(len(prices)))
    return prob, lookup, ids


FIXED = {"threshold": 139, "discount_type": "fixed", "face_value": 53, "budget": 104}
PCT = {"threshold": 63, "discount_type": "percentage", "discount": 0.34, "cap": 28, "budget": 82}


@pytest.mark.parametrize("profile", BOTH)
@pytest.mark.parametrize(
    ("prices", "shops", "voucher", "budget"),
    [
        ([90, 60], ["1", "2"], FIXED, 1.0),  # 6: 150 - 53 = 97 <= 104
        ([80, 50], ["1", "2"], FIXED, 0.0),  # 7: 130 > 104 but below threshold 139
        ([102.0], ["1"], PCT, 1.0),  # 8: max(67.32, 74) = 74 <= 82
        ([115.0], ["1"], PCT, 0.0),  # 9: cap binds: max(75.9, 87) = 87 > 82
        (
            [70, 80],
            ["1", "2"],
            {
                "voucher_type": "shop",
                "threshold": 100,
                "discount_type": "fixed",
                "face_value": 30,
                "budget": 120,
            },
            0.0,
        ),  # 10: two shops
        (
            [70, 80],
            ["5", "5"],
            {
                "voucher_type": "shop",
                "threshold": 100,
                "discount_type": "fixed",
                "face_value": 30,
                "budget": 120,
            },
            1.0,
        ),  # 10: one shop, 120 <= 120
        ([40, 50], ["1", "2"], FIXED, 1.0),  # T <= budget: no voucher needed, shops irrelevant
    ],
)
def test_examples_6_to_10_budget(profile: str, prices, shops, voucher, budget: float) -> None:
    prob, lookup, ids = _voucher_problem(prices, shops, **voucher)
    v = score_trajectory(
        prob, recommending(ids), lookup, scoring_profile=profile, similarity=FixedSimilarity(0)
    )
    assert v.budget == budget
    assert v.success is (budget == 1.0)
    check = next(c for c in v.checks if c.name == "budget")
    assert check.passed is (budget == 1.0) and check.actual == pytest.approx(sum(prices))


def _web_problem():
    gt = {"product_id": "9", "title": "GT Title 1969 coin", "description": ""}
    return problem(
        [{"product_id": "9", "title": [gt["title"]]}],
        intent=Intent.WEB,
        knowledge_attribute=1969,
        web_product=gt,
    )


@pytest.mark.parametrize(("sim", "success", "rule"), [(0.83, True, 1.0), (0.79, False, 0.5)])
def test_example_11_web(sim: float, success: bool, rule: float) -> None:
    lookup = DictLookup([product("5", title="Commemorative 1969 souvenir")])
    v = score_trajectory(
        _web_problem(),
        recommending("5"),
        lookup,
        scoring_profile="shoppingbench",
        similarity=FixedSimilarity(sim),
    )
    assert v.web_kw == 1.0 and v.success is success and v.rule == rule and v.title_threshold == 0.8


def test_web_gt_is_a_substring_and_answer_can_be_in_description() -> None:
    lookup = DictLookup([product("9", title="other"), product("5", title="x", description="made in 1969")])
    gt = score_trajectory(
        _web_problem(),
        recommending("9"),
        lookup,
        scoring_profile="shoppingbench",
        similarity=FixedSimilarity(0),
    )
    assert gt.success and gt.gt == 1.0
    desc = score_trajectory(
        _web_problem(),
        recommending("5"),
        lookup,
        scoring_profile="shoppingbench",
        similarity=FixedSimilarity(0),
    )
    assert desc.web_kw == 1.0 and desc.web_title == 0.0 and not desc.success


def test_example_12_timestamp_penalty() -> None:
    calls = [("recommend_product", {"product_ids": "1"})]
    traj = Trajectory(
        query="q",
        steps=[step(1, calls=calls), step(2, calls=[("terminate", {"status": "success"})], timestamp=None)],
    )
    prob = problem([{"product_id": "1", "title": ["t"]}])
    lookup = DictLookup([product("1", title="t")])
    sb = score_trajectory(prob, traj, lookup, scoring_profile="shoppingbench", similarity=FixedSimilarity(0))
    strict = score_trajectory(
        prob, traj, lookup, scoring_profile="production-strict", similarity=FixedSimilarity(0)
    )
    assert sb.format_score == 1.0
    assert strict.format_score == 0.75 and strict.profile == "strict"
    assert sb.length_reward == 0.5
