"""find_product / view / raw semantics of spec §3.2-3.3 on small hand-built catalogs."""

from __future__ import annotations

import json
import shutil
import threading
from pathlib import Path

import numpy as np
import orjson
import pytest

from conftest import TINY, Built, make_product, write_catalog
from shoparena.records.catalog import Product, ProductHit, ProductView
from shoparena.search import SearchEngine, SearchIndex, build_index
from shoparena.search.engine import HIT_FIELDS, VIEW_FIELDS, parse_page, parse_price, parse_service


def ids(hits: list[ProductHit]) -> list[str]:
    return [h.product_id for h in hits]


# --- a catalog whose relevance order is known: 80 equally relevant lamps, ties in index order ------------

N_LAMPS = 80
CHEAP = 59  # ranks 60th for "lamp", and is the cheapest product of all


@pytest.fixture(scope="module")
def lamps(tmp_path_factory: pytest.TempPathFactory) -> SearchIndex:
    root = tmp_path_factory.mktemp("lamps")
    products = [
        make_product(
            str(2000 + i),
            str(700 + i % 3),
            f"Desk Lamp model{i}",
            1.0 if i == CHEAP else 1000.0 - i,
            sold=(i * 37) % 101,
            service=("COD",) if i % 2 else ("COD", "official"),
        )
        for i in range(N_LAMPS)
    ]
    # Two more lamps mentioning "lamp" twice rank above all the others.
    products.append(make_product("2900", "700", "Lamp Lamp Shade", 500.0))
    products.append(make_product("2901", "701", "Lamp Lamp Bulb", 400.0))
    write_catalog(root / "lamps.jsonl", products)
    build_index(root / "lamps.jsonl", root / "index", progress=False)
    return SearchIndex.open(root / "index")


def test_relevance_order_score_then_index(lamps: SearchIndex) -> None:
    window = [lamps.product_dict(int(i))["product_id"] for i in lamps.find_window("lamp")]
    assert len(window) == 50
    assert window[:2] == ["2900", "2901"]
    assert window[2:] == [str(2000 + i) for i in range(48)]


def test_sort_only_reranks_the_window(lamps: SearchIndex) -> None:
    hits = lamps.find_product("lamp", page=1, sort="priceasc")
    assert str(2000 + CHEAP) not in ids(hits)  # the cheapest product ranks 60th: outside the window
    all_pages = [h for p in range(1, 6) for h in lamps.find_product("lamp", page=p, sort="priceasc")]
    assert len(all_pages) == 50
    assert str(2000 + CHEAP) not in ids(all_pages)
    prices = [h.price for h in all_pages]
    assert prices == sorted(prices)
    assert prices[0] == 400.0  # "Lamp Lamp Bulb", inside the window
    desc = [h.price for p in range(1, 6) for h in lamps.find_product("lamp", page=p, sort="pricedesc")]
    assert desc == sorted(prices, reverse=True)
    order = [h for p in range(1, 6) for h in lamps.find_product("lamp", page=p, sort="order")]
    assert [h.sold_count for h in order] == sorted((h.sold_count for h in order), reverse=True)
    assert set(ids(order)) == set(ids(all_pages))


def test_sort_is_stable_among_equal_keys(lamps: SearchIndex) -> None:
    window = lamps.find_window("lamp", sort="order")
    relevance = list(lamps.find_window("lamp"))
    sold = lamps.sold_count[window]
    for value in np.unique(sold):
        same = [int(d) for d, s in zip(window, sold, strict=True) if s == value]
        assert same == sorted(same, key=relevance.index)


def test_unknown_sort_keeps_relevance(lamps: SearchIndex) -> None:
    assert lamps.find_product("lamp", sort="default") == lamps.find_product("lamp")
    assert lamps.find_product("lamp", sort="PRICEASC") == lamps.find_product("lamp")


def test_filters_walk_relevance_order_and_fill_the_window(lamps: SearchIndex) -> None:
    window = [lamps.product_dict(int(i))["product_id"] for i in lamps.find_window("lamp", service="official")]
    # Lamps with "official" are the even ones; the window takes the first 50 of them in relevance order,
    # reaching past rank 50 of the unfiltered list.
    assert window == [str(2000 + i) for i in range(0, N_LAMPS, 2)]
    assert len(window) == 40
    filtered = [lamps.product_dict(int(i))["product_id"] for i in lamps.find_window("lamp", price="0-10")]
    assert filtered == [str(2000 + CHEAP)]


def test_retrieve_k_caps_hits_before_filtering(lamps: SearchIndex) -> None:
    capped = SearchIndex.open(lamps.index_dir, retrieve_k=50)
    assert capped.find_product("lamp", price="0-10") == []  # the cheap lamp ranks 60th > 50
    assert ids(lamps.find_product("lamp", price="0-10")) == [str(2000 + CHEAP)]
    # Without filters the cap never bites (the window is the top 50).
    assert capped.find_product("lamp", page=5) == lamps.find_product("lamp", page=5)
    small = SearchIndex.open(lamps.index_dir, retrieve_k=5)
    assert len(small.find_window("lamp")) == 5
    with pytest.raises(ValueError, match="retrieve_k"):
        SearchIndex.open(lamps.index_dir, retrieve_k=0)


@pytest.mark.parametrize(("page", "ok"), [(1, True), ("1", True), ("01", True), ("5", True), (5, True),
                                          (0, False), ("0", False), (6, False), ("6", False), ("x", False),
                                          ("", False), (None, False), ("1.0", False), (" 1", False),
                                          (True, False), (-1, False), ("²", False)])  # fmt: skip
def test_page_rule(lamps: SearchIndex, page: object, ok: bool) -> None:
    assert (parse_page(page) is not None) is ok  # type: ignore[arg-type]
    hits = lamps.find_product("lamp", page=page)  # type: ignore[arg-type]
    assert (len(hits) > 0) is ok


def test_pages_slice_the_window(lamps: SearchIndex) -> None:
    window = [lamps.product_dict(int(i))["product_id"] for i in lamps.find_window("lamp")]
    for p in range(1, 6):
        assert ids(lamps.find_product("lamp", page=p)) == window[(p - 1) * 10 : p * 10]
    assert lamps.find_product("lamp", page="01") == lamps.find_product("lamp", page=1)
    # Lamps 40..55 cost 960..945: 16 survivors, so page 2 holds 6 and page 3 is past the end.
    few = lamps.find_window("lamp", price="945-960")
    assert len(few) == 16
    assert len(lamps.find_product("lamp", page=2, price="945-960")) == 6
    assert lamps.find_product("lamp", page=3, price="945-960") == []


# --- the tiny catalog ------------------------------------------------------------------------------------


def test_build_stats_and_quarantine(tiny: Built) -> None:
    stats = tiny.stats
    assert (stats.read, stats.docs, stats.duplicates, stats.quarantined) == (27, 25, 1, 2)
    lines = [orjson.loads(x) for x in (tiny.index_dir / "quarantine.jsonl").read_bytes().splitlines()]
    assert len(lines) == 2
    assert any("duplicate product_id" in q["reason"] and "Umbrella" in q["raw"] for q in lines)
    assert any(q["reason"].startswith("invalid JSON") for q in lines)
    manifest = orjson.loads((tiny.index_dir / "manifest.json").read_bytes())
    assert manifest["params"]["k1"] == 0.9 and manifest["params"]["b"] == 0.4
    assert manifest["catalog"]["size"] == tiny.catalog.stat().st_size
    assert len(manifest["catalog"]["sha256"]) == 64
    assert manifest["stats"]["docs"] == 25


def test_duplicate_keeps_first(tiny: Built) -> None:
    assert len(tiny.index) == 25
    assert tiny.index.get_product("1001").title.startswith("Men's Running")
    assert tiny.index.find_product("umbrella") == []
    assert [p.product_id for p in tiny.index.iter_products()] == [p.product_id for p in TINY]


def test_engine_satisfies_protocol(tiny: Built) -> None:
    assert isinstance(tiny.index, SearchEngine)


def test_stemming_and_stop_words(tiny: Built) -> None:
    found = set(ids(tiny.index.find_product("shoes")))
    assert {"1002", "1006", "1022"} <= found  # titles say "Shoe"
    assert set(ids(tiny.index.find_product("shoe"))) == found
    assert tiny.index.find_product("the") == []
    assert tiny.index.find_product("the of and") == []
    assert ids(tiny.index.find_product("the notebook")) == ["1023"]


def test_query_sanitising(tiny: Built) -> None:
    assert tiny.index.find_product('+-&|!(){}[]^"~*?:\\/') == []
    assert tiny.index.find_product("   ") == []
    assert tiny.index.find_product("") == []
    assert tiny.index.find_product("(kettle)") == tiny.index.find_product("kettle")
    assert ids(tiny.index.find_product('"rice"+cooker')) == ["1015"]


def test_or_semantics_and_ranking(tiny: Built) -> None:
    hits = ids(tiny.index.find_product("bluetooth kettle"))
    assert set(hits) == {"1009", "1010", "1016"}
    top = ids(tiny.index.find_product("running shoes"))
    # Both terms beat one term: the two running shoes come first.
    assert set(top[:2]) == {"1001", "1002"}
    assert "1021" in top  # "Running Socks" matches one term


def test_hit_projection_and_order(tiny: Built) -> None:
    hit = tiny.index.find_product_dicts("breathable")[0]
    assert tuple(hit) == HIT_FIELDS
    assert hit == {
        "product_id": "1001",
        "shop_id": "501",
        "title": "Men's Running Shoes Lightweight Breathable",
        "price": 1299.0,
        "service": ["official", "freeShipping"],
        "sold_count": 500,
    }
    assert isinstance(tiny.index.find_product("breathable")[0], ProductHit)


def test_sku_and_attribute_values_are_searchable(tiny: Built) -> None:
    assert ids(tiny.index.find_product("nike")) == ["1001"]
    assert ids(tiny.index.find_product("mesh")) == ["1001"]


@pytest.mark.parametrize(
    ("price", "expected"),
    [
        ("300-1300", (300.0, 1300.0)),
        ("1000-", (1000.0, None)),
        ("-400", (None, 400.0)),
        ("abc-100", (None, 100.0)),
        ("1e3-2e3", (1000.0, 2000.0)),
        ("1-2-3", None),
        ("100", None),
        ("-", None),
        ("abc-def", None),
        ("", None),
        (None, None),
        ("nan-100", (None, 100.0)),
    ],
)
def test_price_grammar(price: str | None, expected: tuple | None) -> None:
    assert parse_price(price) == expected


def test_price_filter(tiny: Built) -> None:
    index = tiny.index
    everything = set(ids(index.find_product("shoes")))
    band = {h.product_id: h.price for h in index.find_product("shoes", price="350-1299")}
    assert set(band) == {p.product_id for p in TINY if p.product_id in everything and 350 <= p.price <= 1299}
    assert {"1003", "1001"} <= set(band)  # both bounds inclusive (350.0 and 1299.0)
    assert all(h.price >= 1000 for h in index.find_product("shoes", price="1000-"))
    assert all(h.price <= 400 for h in index.find_product("shoes", price="-400"))
    assert all(h.price <= 400 for h in index.find_product("shoes", price="abc-400"))
    for no_filter in ("1-2-3", "100", "abc-def", ""):
        assert set(ids(index.find_product("shoes", price=no_filter))) == everything


def test_service_filter(tiny: Built) -> None:
    index = tiny.index
    assert parse_service("official,bogus,official") == parse_service("official")
    both = set(ids(index.find_product("shoes", service="official,freeShipping")))
    assert both == {"1001", "1025"}
    assert set(ids(index.find_product("shoes", service="official,nope"))) == {"1001", "1005", "1025"}
    assert index.find_product("shoes", service="COD,COD") == index.find_product("shoes", service="COD")
    unfiltered = index.find_product("shoes")
    # Tokens are exact: case and spaces matter, so these are unknown and ignored.
    assert index.find_product("shoes", service=" COD") == unfiltered
    assert index.find_product("shoes", service="cod") == unfiltered
    assert index.find_product("shoes", service="default") == unfiltered
    assert index.find_product("shoes", service="") == unfiltered
    all4 = ids(index.find_product("shoes", service="official,freeShipping,COD,flashsale"))
    assert all4 == ["1025"]


def test_shop_filter(tiny: Built) -> None:
    index = tiny.index
    assert set(ids(index.find_product("shoes", shop_id="502"))) == {"1003", "1004", "1022"}
    assert index.find_product("shoes", shop_id="99999") == []
    assert index.find_product("shoes", shop_id="50") == []  # exact, not prefix
    assert index.find_product("shoes", shop_id="") == index.find_product("shoes")
    combined = ids(index.find_product("shoes", shop_id="502", price="-400", sort="priceasc"))
    assert combined == ["1022", "1003"]


def test_view_product_information(tiny: Built) -> None:
    index = tiny.index
    views = index.view_product_information("1001,1001,nope,1014,1001")
    assert [v.product_id for v in views] == ["1001", "1014"]  # repeats answered once
    assert all(isinstance(v, ProductView) for v in views)
    assert [v.product_id for v in index.view_product_information("1001, 1002")] == ["1001"]
    assert index.view_product_information("") == []
    item = index.view_dicts("1001")[0]
    assert tuple(item) == VIEW_FIELDS
    assert item["sku_options"]["2"] == {"size": "43", "color_family": "white"}
    assert "title" not in item and "price" not in item


def test_get_product_raw_and_get_product(tiny: Built) -> None:
    index = tiny.index
    raw = index.get_product_raw("1002,1002,x, 1003")
    assert [p.product_id for p in raw] == ["1002", "1002"]
    assert raw[0] == TINY[1]
    assert isinstance(raw[0], Product)
    assert index.get_product("1025") == TINY[-1]
    for missing in ("", "1001 ", "x", "10011", "100"):
        assert index.get_product(missing) is None


def test_concurrent_callers_agree(tiny: Built) -> None:
    queries = ["shoes", "running shoes", "bluetooth kettle", "water bottle kids", "shoe rack cleaner"]
    expected = {q: tiny.index.find_product(q) for q in queries}
    errors: list[str] = []

    def worker() -> None:
        for _ in range(30):
            for q in queries:
                if tiny.index.find_product(q) != expected[q]:
                    errors.append(q)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_empty_catalog_builds(tmp_path: Path) -> None:
    catalog = write_catalog(tmp_path / "empty.jsonl", [])
    stats = build_index(catalog, tmp_path / "ix", progress=False)
    assert stats.docs == 0
    index = SearchIndex.open(tmp_path / "ix")
    assert len(index) == 0
    assert index.find_product("anything") == []
    assert index.view_product_information("1") == []


def test_index_of_an_older_format_is_refused(tiny: Built, tmp_path: Path) -> None:
    old = tmp_path / "old_index"
    shutil.copytree(tiny.index_dir, old)
    manifest = json.loads((old / "manifest.json").read_text())
    manifest["format_version"] = 1
    (old / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(ValueError, match="rebuild it"):
        SearchIndex.open(old)
