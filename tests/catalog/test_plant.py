"""Planting upstream problems: GT products solve, distractors break one constraint, files plant cleanly."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from shoparena.catalog.plant import plant_problems, voucher_prices
from shoparena.catalog.synth import SynthConfig, synthesize_catalog
from shoparena.jsonl import iter_raw_lines
from shoparena.records.problem import Problem, Voucher
from shoparena.scoring import DictLookup, ExactSimilarity, score_trajectory
from shoparena.suites.checks import gt_reasons, recommend_trajectory
from shoparena.suites.loaders import load_suite
from shoparena.suites.planting import plant_catalog
from world import SHARED_DATA

SHARED = SHARED_DATA
SHARED_FILES = [
    SHARED / "shoppingbench" / "synthesize_product_test.jsonl",
    SHARED / "shoppingbench" / "synthesize_shop_test.jsonl",
    SHARED / "oro" / "problem_suite_v1.json",
    SHARED / "oro" / "problem_suite_v3.json",
]

# Formats not in the shared data: an SB voucher line and an SB web line (full product object as reward).
EXTRA_SB = [
    {
        "query": "Two mugs please.\n\nMy budget is only `300`, but ...",
        "reward": [
            {"product_id": "111", "title": ["Blue Ceramic Mug"], "sku_options": [{"color_family": "blue"}]},
            {"product_id": "112", "title": ["Bamboo Coaster Set"], "service": ["COD"]},
        ],
        "voucher": {
            "voucher_type": "shop",
            "threshold": 150,
            "discount_type": "percentage",
            "face_value": None,
            "discount": 0.2,
            "cap": 60,
            "price_after_voucher": 276.0,
            "budget": 290,
        },
    },
    {
        "query": "A calendar of the year the first moon landing happened?",
        "Knowledge_Attribute": 1969,
        "reward": {
            "product_id": "113",
            "shop_id": "55",
            "brand": "",
            "category": "Stationery > Calendars",
            "title": "Vintage 1969 Wall Calendar",
            "description": "Retro print",
            "price": 99.0,
            "sold_count": 3,
            "sku_options": {},
            "attributes": {},
            "service": ["COD"],
        },
    },
]


def _problems(tmp_path: Path) -> list[Problem]:
    extra = tmp_path / "extra_sb.jsonl"
    extra.write_text("\n".join(json.dumps(r) for r in EXTRA_SB) + "\n")
    out = []
    for path in [*SHARED_FILES, extra]:
        loaded, summary = load_suite(path)
        assert summary.quarantined == 0
        out += loaded
    return out


def test_every_planted_gt_solves_and_each_distractor_breaks_one_constraint(tmp_path: Path) -> None:
    problems = _problems(tmp_path)
    result = plant_problems(problems, distractors=3)
    assert result.report.failed == [] and result.report.conflicts == []
    lookup = DictLookup(result.products)
    ids = [p.product_id for p in result.products]
    assert len(ids) == len(set(ids))
    for problem in problems:
        assert gt_reasons(problem, lookup) == [], problem.problem_id
    by_id = {p.problem_id: p for p in problems}
    seen_kinds = set()
    for planted in result.planted:
        if planted.role != "distractor":
            continue
        problem = by_id[planted.problem_id]
        rec = list(problem.gt_ids)
        rec[planted.slot] = planted.product.product_id
        verdict = score_trajectory(
            problem,
            recommend_trajectory(problem, rec),
            lookup,
            scoring_profile="strict",
            similarity=ExactSimilarity(),
        )
        assert not verdict.success
        if problem.knowledge_attribute is not None:
            assert verdict.web_kw == 0.0
            continue
        slot = verdict.slots[planted.slot]
        broken = sum(slot.units[f] - slot.hits.get(f, 0) for f in slot.units)
        broken += int(verdict.shop == 0.0) + int(verdict.budget == 0.0)
        assert broken == 1, (planted.violates, problem.problem_id)
        seen_kinds.add(planted.violates.split(":")[0])
    assert {"price", "service", "sku", "attr", "shop", "budget", "title"} <= seen_kinds


def test_voucher_prices_sum_under_total_and_respect_bounds() -> None:
    voucher = Voucher(
        voucher_type="platform",
        threshold=67,
        discount_type="fixed",
        face_value=27,
        price_after_voucher=212.0,
        budget=212,
    )
    for seed in range(20):
        prices = voucher_prices(voucher, 3, random.Random(seed), [(150.0, None), (0.0, 20.0), (0.0, None)])
        assert sum(prices) == pytest.approx(238.99)
        assert prices[0] >= 150 and prices[1] <= 20
    with pytest.raises(ValueError, match="lower price bounds"):
        voucher_prices(voucher, 2, random.Random(0), [(200.0, None), (100.0, None)])


def test_plant_catalog_streams_input_and_appends(tmp_path: Path) -> None:
    catalog = tmp_path / "in.jsonl"
    synthesize_catalog(SynthConfig(products=300, seed=1), catalog, progress=False)
    extra = tmp_path / "extra_sb.jsonl"
    extra.write_text("\n".join(json.dumps(r) for r in EXTRA_SB) + "\n")
    out = tmp_path / "out.jsonl.gz"
    report = plant_catalog([*SHARED_FILES, extra], catalog, out, distractors=1)
    assert report.failed == []
    before = [raw for _, raw in iter_raw_lines(catalog)]
    after = [raw for _, raw in iter_raw_lines(out)]
    assert after[: len(before)] == before
    assert len(after) == len(before) + report.gt_products + report.distractors
    assert report.catalog_lines == 300
    ids = [json.loads(raw)["id"] for raw in after]
    assert len(ids) == len(set(ids))
