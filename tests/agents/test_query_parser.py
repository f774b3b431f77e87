"""Query parsing: template lines, every phrasing the query writer uses, upstream-style free text, item
splitting, the voucher appendix, and value mentions."""

from __future__ import annotations

import json
import random

import pytest

from shoparena.agents.query_parser import (
    head_phrase,
    mentioned_values,
    parse_item,
    parse_query,
    parse_voucher,
)
from shoparena.formats.profiles import listed_items, listed_lines, request_items
from shoparena.records.problem import RewardItem, Voucher
from shoparena.suites.options import SynthOptions
from shoparena.suites.queries import (
    pair_phrase,
    price_phrase,
    requirement_lines,
    service_phrase,
    voucher_appendix,
)
from shoparena.suites.synth import synthesize_problems
from world import SHARED_DATA

ORO_SUITE = SHARED_DATA / "oro" / "problem_suite_v1.json"


def test_template_lines_round_trip() -> None:
    item = RewardItem(
        product_id="1",
        title=["Cod Mouse Pad"],
        sku_options=[{"color_family": "peach", "type": "set b"}],
        attributes=[{"brand": ["oem"]}],
        service=["freeShipping", "COD"],
        price=[{"between": [100, 350]}],
    )
    text = "I want keyboards: mouse pad.\n" + "\n".join(requirement_lines(item))
    spec = parse_item(text)
    assert spec.title == "Cod Mouse Pad"
    assert spec.pairs == [("color_family", "peach"), ("type", "set b"), ("brand", "oem")]
    assert (spec.price_lo, spec.price_hi) == (100, 350) and spec.price_filter() == "100-350"
    assert spec.services == ["freeShipping", "COD"] and spec.service_filter() == "freeShipping,COD"


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
        ("pillows costing 15 PHP or more that ships for free", 15, None, ["freeShipping"]),
        ("a lamp priced from PHP 30 upwards that I can pay for on delivery (COD)", 30, None, ["COD"]),
        ("sheets with a price of no less than 244 Philippine Peso and model m8 max", 244, None, []),
        ("a bag in the 12-255 PHP price range, sold by an official store", 12, 255, ["official"]),
        ("a toy that costs 32 to 100 Philippine Peso, on a LazFlash deal", 32, 100, ["flashsale"]),
        ("a romper in size 0-3 months for ages 12 years and up", None, None, []),
        ('a 10" soundbar, in the 55" size, that ships for free', None, None, ["freeShipping"]),
        ("a fuel injector that comes with complimentary shipping", None, None, ["freeShipping"]),
        ("a charger that costs more than 102 PHP, from a LazMall official shop", 102, None, ["official"]),
        ("a tray with a price up to 500 Philippine Peso", None, 500, []),
    ],
)
def test_free_text_prices_and_services(text, lo, hi, services) -> None:
    spec = parse_item(text)
    assert (spec.price_lo, spec.price_hi) == (lo, hi)
    assert spec.services == services


@pytest.mark.parametrize("op", ["between", "greater than", "less than"])
def test_every_price_phrasing_of_the_writer(op) -> None:
    for seed in range(40):
        rng = random.Random(seed)
        lo, hi = rng.randint(1, 900), rng.randint(1000, 9000)
        bounds = [0, hi] if op == "less than" else [lo, None] if op == "greater than" else [lo, hi]
        phrase = price_phrase(op, bounds, rng)
        spec = parse_item(f"some rubber mats {phrase} and in the color blue")
        want = (None, hi) if op == "less than" else (lo, None) if op == "greater than" else (lo, hi)
        assert (spec.price_lo, spec.price_hi) == want, phrase
        assert str(lo) not in spec.search_text or op == "less than", spec.search_text


@pytest.mark.parametrize("service", ["freeShipping", "COD", "official", "flashsale"])
def test_every_service_phrasing_of_the_writer(service) -> None:
    for seed in range(20):
        phrase = service_phrase(service, random.Random(seed))
        spec = parse_item(f"a steel water bottle {phrase}, priced above 10 pesos")
        assert spec.services == [service], phrase
        assert spec.price_lo == 10


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("brand", "kavael"),
        ("color_family", "wine red"),
        ("size", "int:xs"),
        ("shoe_size", "eu: 43"),
        ("clothing_material", "cotton blend"),
        ("fa_pattern", "stripe"),
        ("induction_compatible", "no"),
        ("size", "l"),
        ("country_origin_hb", "hong kong"),
    ],
)
def test_every_pair_phrasing_states_the_value(key, value) -> None:
    decoys = [("color_family", "red"), ("brand", "oem"), ("assembly_required", "yes"), ("size", "s")]
    for seed in range(12):
        phrase = pair_phrase(key, value, random.Random(seed))
        spec = parse_item(f"I need some stretchable cotton leggings {phrase}, priced above 20 pesos.")
        found = mentioned_values(spec.value_text, [(key, value), *decoys])
        assert found == {value}, (phrase, found)


def test_value_mentions_prefer_longer_values_and_need_keys_for_fillers() -> None:
    pairs = [("color", "red"), ("color", "wine red"), ("assembly_required", "no"), ("size", "m")]
    assert mentioned_values("a hanger in wine red", pairs) == {"wine red"}
    assert mentioned_values("a hanger in wine red with red straps", pairs) == {"wine red", "red"}
    assert mentioned_values("priced no less than 20", pairs) == set()
    assert mentioned_values("where the assembly required is no, in size m", pairs) == {"no", "m"}
    assert mentioned_values("i'm a mom", pairs) == set()


def test_head_phrase() -> None:
    assert head_phrase("Some wallets (minimalist red) with closure type button") == "minimalist red wallets"
    assert head_phrase("some comforters, quilts & duvets with free delivery") == "comforters, quilts & duvets"
    assert head_phrase("I'm looking for a grey unisex racing t-shirt in extra small") == (
        "grey unisex racing t-shirt"
    )
    assert head_phrase("some buy high black skirts size waist:36, priced") == "buy high black skirts"


def test_written_banks_parse_back(synth) -> None:
    """Every slot of a synthesised bank: right item count, price bounds, services and stated values."""
    problems = synthesize_problems(
        list(synth.index.iter_products()),
        SynthOptions(n=90, seed=5, intents=("product", "shop", "voucher"), discriminative=False),  # type: ignore[arg-type]
    ).problems
    slots = good = 0
    for p in problems:
        spec = parse_query(p.query, p.category_label)
        assert len(spec.items) == len(p.reward), p.query
        assert (spec.voucher is not None) == (p.voucher is not None)
        for item, reward in zip(spec.items, p.reward, strict=True):
            slots += 1
            bounds: tuple[float | None, float | None] = (None, None)
            for entry in reward.price:
                for op, (lo, hi) in entry.items():
                    bounds = (
                        (lo, hi) if op == "between" else (lo, None) if op == "greater than" else (None, hi)
                    )
            pairs = [(k, v) for o in reward.sku_options for k, v in o.items()]
            pairs += [(k, v) for a in reward.attributes for k, vs in a.items() for v in vs]
            good += (
                (item.price_lo, item.price_hi) == bounds
                and sorted(item.services) == sorted(reward.service)
                and mentioned_values(item.value_text, pairs) >= {v for _, v in pairs}
            )
    assert slots > 150 and good / slots >= 0.95, (good, slots)


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
    assert spec is not None
    assert spec.discount == pytest.approx(0.34) and spec.cap == 28 and spec.voucher_type == "shop"
    assert spec.total_ok(102, 1) and not spec.total_ok(115, 1) and not spec.total_ok(102, 2)
    assert spec.total_ok(80, 2)  # under budget: no voucher needed, shops irrelevant


@pytest.mark.parametrize(
    ("query", "label", "n"),
    [
        (
            "Find one shop that sells:\n## Product 1\nI want a: x.\n1. The `size` is `m`.\n"
            "## Product 2\nb: y.",
            "Shop",
            2,
        ),
        (
            "Find a shop offering: (1) a belt bag, priced from 12 to 255 PHP; (2) a green wallet "
            "with free shipping. All from the same seller.",
            None,
            2,
        ),
        (
            "Which shop carries all of the following? First, some headlights (tuliko) with type c. "
            "Second, an engine oil priced between 114 and 362 pesos. Lastly, some floor mats. "
            "Everything should be from one store.",
            "Shop",
            3,
        ),
        (
            "I want to buy these products:\n- Some jeans (drawstring)\n- A pocket wifi\n- Some heels",
            "Voucher",
            3,
        ),
        (
            "Find shops offering a swimming pool balloon, a writing notebook with 80 pages priced above "
            "16 PHP, and a set of baby socks with free shipping.",
            "Shop",
            3,
        ),
        (
            "Show me a wheelchair that supports payment on delivery, and also a ping pong paddle "
            "with LazMall.",
            "Voucher",
            2,
        ),
        (
            "Find a sprayer with 1 piece and free delivery. Also, look for a men's watch in brown. "
            "Next, search for a bike light in white. Lastly, get Miniso building blocks.",
            "Voucher",
            4,
        ),
        ("a red shoe and also a blue sock (1) (2)", "Product", 1),
    ],
)
def test_item_splitting(query, label, n) -> None:
    spec = parse_query(query, label)
    assert len(spec.items) == n, [i.text for i in spec.items]


# (request, the items it lists): one of each list shape the shared line walk reads.
LISTED_REQUESTS = [
    (
        "Find one shop that sells all of these:\n- running socks ankle\n- running shoes breathable",
        ["running socks ankle", "running shoes breathable"],
    ),
    (
        "I need these from one store:\n1. a steel water bottle\n2) a canvas tote bag\n3. a bamboo spoon",
        ["a steel water bottle", "a canvas tote bag", "a bamboo spoon"],
    ),
    (
        "Find one shop with these: (1) running socks ankle; (2) nike shoes. They must share a shop.",
        ["running socks ankle", "nike shoes."],
    ),
    (
        "I'm looking for a shop that sells several items. First, I want a pink spiral notebook. Second, I "
        "need a padded delivery receipt. Lastly, a spiral notebook with LazMall. Please show me shops.",
        [
            "I want a pink spiral notebook",
            "I need a padded delivery receipt",
            "a spiral notebook with LazMall.",
        ],
    ),
    (
        "Find a sprayer with 1 piece and free delivery. Also, look for a men's watch in brown. Next, search "
        "for a bike light in white. Lastly, get Miniso building blocks.",
        [
            "Find a sprayer with 1 piece and free delivery.",
            "look for a men's watch in brown",
            "search for a bike light in white",
            "get Miniso building blocks",
        ],
    ),
]


@pytest.mark.parametrize(("request_text", "listed"), LISTED_REQUESTS)
def test_planner_items_are_the_listed_items_of_the_compact_profile(request_text, listed) -> None:
    """One home for request-item splitting: the planner's items are ``formats.profiles.listed_items``, the
    values behind the compact profile's listed ``U`` handles, whatever the list shape."""
    assert listed_items(request_text) == listed
    items = [item.text for item in parse_query(request_text, "Shop").items]
    assert items == listed
    values = {f"U{n}": value for n, (_, value) in enumerate(request_items(request_text), start=1)}
    assert [values[handle] for handle in listed_lines(request_text)] == items


def test_numbered_lines_with_backticks_are_not_listed_items() -> None:
    template = "Find a mug.\n1. The `color` is `red`.\n2. The `price` is less than `50`."
    assert listed_items(template) == [] and listed_lines(template) == ["U1"]
    assert listed_items("Two things:\n1. a mug\nand then\n2. a plate") == []  # not a run of two


def test_split_items_keep_their_own_requirements() -> None:
    q = parse_query(
        "I'm looking for a shop that offers both a maroon blouse and a royal blue crop top. For the blouse, "
        "it should be cotton and priced between 25 and 212 pesos. For the crop top, the price should be "
        "above 47 pesos.",
        "Shop",
    )
    assert q.same_shop and len(q.items) == 2
    assert (q.items[0].price_lo, q.items[0].price_hi) == (25, 212)
    assert (q.items[1].price_lo, q.items[1].price_hi) == (47, None)
    assert "cotton" in q.items[0].value_text and "cotton" not in q.items[1].value_text


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
