"""Statistical texture of the synthetic catalog: invariants the environment and problem synthesis rely on."""

from __future__ import annotations

import statistics
from collections import Counter
from pathlib import Path

import pytest

from shoparena.catalog import vocab
from shoparena.catalog.synth import (
    SynthConfig,
    iter_synth_products,
    near_miss_share,
    product_stats,
    render_stats_markdown,
    synth_stats,
    synthesize_catalog,
)
from shoparena.records.catalog import SERVICES, Product

CONFIG = SynthConfig(products=2000, seed=3, chunk_size=500)


@pytest.fixture(scope="module")
def products() -> list[Product]:
    return list(iter_synth_products(CONFIG))


def test_variants_are_consecutive_and_lower_case(products: list[Product]) -> None:
    counts = Counter(len(p.sku_options) for p in products)
    assert set(counts) <= set(range(10))
    assert len(counts) >= 8  # the whole 0-9 range is used, not a constant
    assert 0.2 < counts[0] / len(products) < 0.7
    for p in products:
        assert list(p.sku_options) == [str(i) for i in range(1, len(p.sku_options) + 1)]
        for opts in p.sku_options.values():
            assert opts
            assert all(k == k.lower() and v == v.lower() and v for k, v in opts.items())
    keys = Counter(k for p in products for opts in p.sku_options.values() for k in opts)
    assert {"color_family", "size", "variation"} <= set(keys)
    assert any(" " in k for k in keys)  # e.g. "color family", as upstream
    assert any(v.startswith("int:") for p in products for v in p.sku_values())


def test_attributes_long_tail_lower_case(products: list[Product]) -> None:
    keys = Counter(k for p in products for k in p.attributes)
    assert len(keys) >= 150
    assert keys.most_common(1)[0][0] == "brand"
    assert {"material", "fa_pattern", "model", "clothing_material", "units_hb", "warranty_type"} <= set(keys)
    for p in products:
        for k, vals in p.attributes.items():
            assert k == k.lower() and vals
            assert all(v == v.lower() and v for v in vals)


def test_services_subset_with_realistic_rates(products: list[Product]) -> None:
    rates = Counter(s for p in products for s in p.service)
    for p in products:
        assert p.service == [s for s in SERVICES if s in p.service]  # subset, canonical order, no duplicates
    for name in SERVICES:
        assert 0.03 < rates[name] / len(products) < 0.6, name
    assert 0.1 < sum(1 for p in products if not p.service) / len(products) < 0.7


def test_category_levels(products: list[Product]) -> None:
    depths = Counter(len(p.category.split(" > ")) for p in products)
    assert set(depths) <= {2, 3, 4, 5, 6}
    assert len(depths) >= 4
    assert len({p.category for p in products}) >= 100
    for path, kind in vocab.LEAVES:
        assert 2 <= len(path.split(" > ")) <= 6, path
        assert kind in vocab.KINDS


def test_shops_hold_several_products(products: list[Product]) -> None:
    sizes = Counter(p.shop_id for p in products)
    share = sum(1 for n in sizes.values() if n >= 4) / len(sizes)
    assert share >= 0.5
    assert max(sizes.values()) >= 20  # Zipf head
    assert min(sizes.values()) < 4  # and a tail


def test_brands_some_empty(products: list[Product]) -> None:
    empty = sum(1 for p in products if p.brand == "") / len(products)
    assert 0.1 < empty < 0.6
    assert len({p.brand for p in products}) > 100
    assert not any(p.brand.lower() in {"nobrand", "no brand", "oem", "n/a"} for p in products)
    # Brandless products may still carry a junk *attribute* value, as upstream does.
    assert any(p.brand == "" and p.attributes.get("brand") for p in products)


def test_prices_long_tailed_and_marketplace_rounded(products: list[Product]) -> None:
    prices = sorted(p.price for p in products)
    assert all(x > 0 and (x * 2).is_integer() for x in prices)
    assert any(not x.is_integer() for x in prices)  # some 349.5
    assert sum(1 for x in prices if x % 10 == 9) / len(prices) > 0.2  # charm prices 199, 1299
    median = statistics.median(prices)
    assert prices[int(0.99 * len(prices))] / median > 10


def test_sold_count_long_tailed(products: list[Product]) -> None:
    sold = sorted(p.sold_count for p in products)
    assert sold[0] == 0
    assert 0.15 < sold.count(0) / len(sold) < 0.6
    assert sold[-1] > 50 * max(statistics.median(sold), 1)


def test_titles_are_noisy(products: list[Product]) -> None:
    titles = [p.title for p in products]
    tags = vocab.TITLE_PREFIXES + vocab.TITLE_SUFFIXES
    assert sum(1 for t in titles if any(tag in t for tag in tags)) / len(titles) > 0.3
    assert any(t.isupper() for t in titles)
    assert any(("|" in t or " - " in t or " / " in t) for t in titles)
    assert all(t == t.strip() and 0 < len(t) <= 2000 for t in titles)
    assert len(set(titles)) > 0.8 * len(titles)


def test_text_fields(products: list[Product]) -> None:
    for field in ("short_description", "description", "specification"):
        empty = sum(1 for p in products if getattr(p, field) == "") / len(products)
        assert 0.2 < empty < 0.8, field
    specs = [p.specification for p in products if p.specification]
    assert all(all(":" in pair for pair in s.split(";")) for s in specs)


def test_near_miss_siblings_exist(products: list[Product]) -> None:
    assert near_miss_share(products) > 0.4
    # Concretely: same category, same title apart from the brand, different brands.
    by_key: dict[tuple[str, str], set[str]] = {}
    for p in products:
        stripped = p.title.lower().replace(p.brand.lower(), "") if p.brand else p.title.lower()
        by_key.setdefault((p.category, " ".join(stripped.split())), set()).add(p.brand)
    assert sum(1 for brands in by_key.values() if len(brands) > 1) >= 10


def test_near_miss_share_is_zero_for_unrelated_products() -> None:
    base = next(iter(iter_synth_products(SynthConfig(products=1, seed=1))))
    a = base.model_copy(update={"title": "alpha beta gamma", "product_id": "1"})
    b = base.model_copy(update={"title": "delta epsilon zeta", "product_id": "2", "price": base.price + 1})
    c = base.model_copy(update={"title": "alpha beta gamma", "product_id": "3", "price": base.price + 2})
    assert near_miss_share([a, b]) == 0.0
    assert near_miss_share([a, b, c]) == pytest.approx(2 / 3)


def test_knobs() -> None:
    few = list(iter_synth_products(SynthConfig(products=400, seed=1, categories=5)))
    assert len({p.category for p in few}) <= 5
    branded = list(iter_synth_products(SynthConfig(products=400, seed=1, empty_brand_share=0.0)))
    assert all(p.brand for p in branded)
    shops = list(iter_synth_products(SynthConfig(products=400, seed=1, shops=10)))
    assert len({p.shop_id for p in shops}) <= 10


def test_stats_file_equals_in_memory(tmp_path: Path, products: list[Product]) -> None:
    path = tmp_path / "c.jsonl.gz"
    synthesize_catalog(CONFIG, path, progress=False)
    stats = synth_stats(path)
    assert stats == product_stats(products)
    sizes = Counter(p.shop_id for p in products)
    assert stats.shops == len(sizes)
    assert stats.shops_with_4_plus_share == round(sum(1 for n in sizes.values() if n >= 4) / len(sizes), 4)
    assert sum(stats.variants_histogram.values()) == len(products)
    assert stats.empty_brand_share == round(sum(1 for p in products if not p.brand) / len(products), 4)
    assert list(stats.price_quantiles.values()) == sorted(stats.price_quantiles.values())
    table = render_stats_markdown(stats)
    assert table.startswith("| statistic | value |") and "shops with >= 4 products" in table


def test_vocabulary_is_consistent() -> None:
    assert len(vocab.ATTRIBUTES) >= 250
    for name, kind in vocab.KINDS.items():
        assert kind.dept in vocab.DEPARTMENTS, name
        assert all(k in vocab.ATTRIBUTES for k in kind.attrs), name
        assert all(s in vocab.SKU_SCHEMES for s in kind.sku) and len(kind.sku) <= 2, name
        assert all(m in vocab.MEASURES for m in kind.measures), name
    for dept in vocab.DEPARTMENTS.values():
        assert all(k in vocab.ATTRIBUTES for k in dept.tail)
    for pool in vocab.POOLS.values():
        assert all(v == v.lower() and v.strip() == v for v in pool)
    for key, values in vocab.ATTRIBUTES.items():
        assert key == key.lower()
        assert all(v == v.lower() for v in values), key
