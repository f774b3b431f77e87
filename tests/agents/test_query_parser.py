"""Query parsing: template lines, free-text price/service phrases, item splitting, the voucher appendix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shoparena.agents.query_parser import parse_item, parse_query, parse_voucher
from shoparena.env.synthetic_suite import requirement_lines, voucher_appendix
from shoparena.records.problem import RewardItem, Voucher

ORO_SUITE = Path("/work/shared/data/oro/problem_suite_v1.json")


def test_template_lines_round_trip() -> None:
    item = RewardItem(
        product_id="1",
        title=["Cod Mouse Pad"],
        sku_options=[{"color_family": "peach", "type": "set b"}],
        attributes=[{"brand": ["oem"]}],
        service=["freeShipping", "COD"],
        price=[{"between": [100, 350]}],
    )
    text = "I want keyboards: mouse pad.\n" + "\n".join(requirement_lines(item, title_mode="full"))
    spec = parse_item(text)
    assert spec.title == "Cod Mouse Pad"
    assert spec.pairs == [("color_family", "peach"), ("type", "set b"), ("brand", "oem")]
    assert (spec.price_lo, spec.price_hi) == (100, 350) and spec.price_filter() == "100-350"
    assert spec.services == ["freeShipping", "COD"] and spec.service_filter() == "freeShipping,COD"
    assert spec.name == "keyboards  mouse pad"


def test_words_inside_titles_are_not_services() -> None:
    spec = parse_item(
        "I want boxes: pcs free shipping.\n1. The `title` is `Box COD Free Shipping`.\n"
        "2. The `price` is greater than `5` Philippine Peso."
    )
    assert spec.services == [] and spec.price_filter() == "5-"


@pytest.mark.parametrize(
    ("text", "lo", "hi", "services"),
    [
        ("a grey t-shirt priced from 324 to 623 pesos", 324, 623, []),
        ("chili powder priced above 375 pesos with free delivery", 375, None, ["freeShipping"]),
        ("a bag between PHP 1,200 and 2,000, cash on delivery", 1200, 2000, ["COD"]),
        ("a mug under 99 PHP from LazMall on flash sale", None, 99, ["official", "flashsale"]),
        ("a case that costs at least 68 pesos", 68, None, []),
    ],
)
def test_free_text_prices_and_services(text, lo, hi, services) -> None:
    spec = parse_item(text)
    assert (spec.price_lo, spec.price_hi) == (lo, hi)
    assert spec.services == services


def test_voucher_appendix_parses_exactly() -> None:
    fixed = Voucher(
        voucher_type="platform",
        threshold=139,
        discount_type="fixed",
        face_value=53,
        price_after_voucher=97,
        budget=104,
    )
    body, spec = parse_voucher("Two things." + voucher_appendix(fixed))
    assert body == "Two things." and spec is not None
    assert (spec.budget, spec.voucher_type, spec.threshold, spec.face_value) == (104, "platform", 139, 53)
    # §8.7 examples 6 and 7.
    assert spec.total_ok(150, 2) and not spec.total_ok(130, 2)
    pct = Voucher(
        voucher_type="shop",
        threshold=63,
        discount_type="percentage",
        discount=0.34,
        cap=28,
        price_after_voucher=74,
        budget=82,
    )
    _, spec = parse_voucher("x" + voucher_appendix(pct))
    assert spec.discount == pytest.approx(0.34) and spec.cap == 28 and spec.voucher_type == "shop"
    assert spec.total_ok(102, 1) and not spec.total_ok(115, 1) and not spec.total_ok(102, 2)
    assert spec.total_ok(80, 2)  # under budget: no voucher needed, shops irrelevant


def test_multi_item_splitting() -> None:
    q = parse_query(
        "Find one shop that sells:\n## Product 1\nI want a: x.\n1. The `size` is `m`.\n"
        "## Product 2\nI want b: y.",
        "Shop",
    )
    assert len(q.items) == 2 and q.same_shop and q.items[0].pairs == [("size", "m")]
    q = parse_query(
        "Find a shop offering: (1) a belt bag, priced from 12 to 255 PHP; (2) a green wallet "
        "with free shipping. All from the same seller.",
        None,
    )
    assert len(q.items) == 2 and q.same_shop and q.items[1].services == ["freeShipping"]
    assert parse_query("a red shoe and also a blue sock (1) (2)", "Product").items[0].text.startswith("a red")


@pytest.mark.skipif(not ORO_SUITE.exists(), reason="shared ORO data not present")
def test_real_oro_vouchers_all_parse() -> None:
    records = json.loads(ORO_SUITE.read_text())
    vouchers = [r for r in records if r["category"] == "Voucher"]
    for r in vouchers:
        _, spec = parse_voucher(r["query"])
        assert spec is not None and spec.budget == r["voucher"]["budget"]
        assert (
            spec.threshold == r["voucher"]["threshold"]
            and spec.discount_type == r["voucher"]["discount_type"]
        )
