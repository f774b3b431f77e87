"""Corpus diversity: the measures on hand-built trajectories, and the report of a real one-race firehose."""

from __future__ import annotations

import json
import math
from pathlib import Path

from typer.testing import CliRunner

from sandbox_marks import needs_bwrap
from shoparena.cli.main import app
from shoparena.corpus.diversity import (
    DiversityBuilder,
    Features,
    features_from_messages,
    measure,
    near_duplicate_rate,
    price_band,
)


def call(cid: str, name: str, **params) -> dict:
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(params)}}


MESSAGES = [
    {"role": "user", "content": "red running shoes"},
    {"role": "assistant", "tool_calls": [call("a", "find_product", q="red shoes", page=1)]},
    {
        "role": "tool",
        "tool_call_id": "a",
        "content": json.dumps([{"product_id": "1", "shop_id": "s1", "price": 250}]),
    },
    {"role": "assistant", "tool_calls": [call("b", "view_product_information", product_ids="1")]},
    {
        "role": "tool",
        "tool_call_id": "b",
        "content": json.dumps([{"product_id": "1", "attributes": {"color": ["red"]}}]),
    },
    {
        "role": "assistant",
        "tool_calls": [
            call("c", "recommend_product", product_ids="1"),
            call("d", "terminate", status="success"),
        ],
    },
    {"role": "tool", "tool_call_id": "c", "content": "ok"},
]


def test_features_read_calls_products_views_and_the_recommendation() -> None:
    f = features_from_messages(MESSAGES, group="g", query="red running shoes", category="product")
    assert [name for name, _ in f.calls] == [
        "find_product",
        "view_product_information",
        "recommend_product",
        "terminate",
    ]
    assert f.recommended == ["1"] and f.viewed == {"1"}
    assert f.products["1"] == {"shop_id": "s1", "price": 250, "attributes": ["color"]}
    row = measure([f])
    assert (row["shops"], row["price_bands"], row["attributes"], row["categories"]) == (1, 1, 1, 1)
    assert row["search_bigrams"] == 1 and row["search_distinct_2"] == 1.0
    # The same tool texts again (their products remembered by text): equal features, nothing shared.
    again = features_from_messages(MESSAGES, group="g", query="red running shoes", category="product")
    assert (again.calls, again.products, again.viewed, again.recommended) == (
        f.calls,
        f.products,
        f.viewed,
        f.recommended,
    )
    assert again.products["1"]["attributes"] is not f.products["1"]["attributes"]
    # A product listed again overrides what was read before; a view of a listed product marks it viewed.
    later = [*MESSAGES[:5], {**MESSAGES[2], "content": json.dumps([{"product_id": "1", "price": 99}])}]
    g = features_from_messages(later, group="g", query="q", category="product")
    assert g.products["1"] == {"shop_id": "s1", "price": 99, "attributes": ["color"]} and g.viewed == {"1"}


def test_only_recommended_and_viewed_products_are_kept_with_what_every_result_told_of_them() -> None:
    """A product that is listed, but neither viewed nor recommended, is read by no measure: not kept. The
    kept ones carry every result's fields, in order (a result after the recommendation too)."""
    listed = json.dumps(
        [
            {"product_id": "1", "shop_id": "s1", "price": 250},
            {"product_id": "2", "shop_id": "s2", "price": 5000, "attributes": {"size": 1}},
            {"product_id": "3", "shop_id": "s3", "price": 50},
        ]
    )
    viewed = json.dumps([{"product_id": "3", "attributes": {"w": 1}}])
    messages = [
        {"role": "assistant", "tool_calls": [call("a", "find_product", q="shoes")]},
        {"role": "tool", "tool_call_id": "a", "content": listed},
        {"role": "assistant", "tool_calls": [call("b", "view_product_information", product_ids="3")]},
        {"role": "tool", "tool_call_id": "b", "content": viewed},
        {"role": "assistant", "tool_calls": [call("c", "recommend_product", product_ids="1")]},
        {"role": "assistant", "tool_calls": [call("d", "find_product", q="more")]},
        {"role": "tool", "tool_call_id": "d", "content": json.dumps([{"product_id": "1", "price": 120}])},
    ]
    f = features_from_messages(messages, group="g", query="q", category="product")
    assert f.products == {
        "1": {"shop_id": "s1", "price": 120},
        "3": {"shop_id": "s3", "price": 50, "attributes": ["w"]},
    }
    row = measure([f])
    # Shop s1 and the 100-300 band of the recommended product; the viewed product's one attribute name.
    assert (row["shops"], row["price_bands"], row["attributes"]) == (1, 1, 1)


def make(i: int, tools: list[str]) -> Features:
    return Features(
        group="g",
        query=f"query number {i} words",
        category=f"c{i % 2}",
        calls=[(name, {"q": f"search {i} {name}"}) for name in tools],
    )


def test_one_repeated_trajectory_has_zero_entropy_and_all_near_duplicates() -> None:
    same = [make(0, ["find_product", "recommend_product"]) for _ in range(5)]
    row = measure(same)
    assert row["tool_seq_entropy"] == 0.0 and row["near_duplicate_rate"] == 0.8
    assert row["query_distinct_2"] == round(3 / 15, 4)


def test_distinct_trajectories_have_log2_n_entropy_and_no_near_duplicates() -> None:
    tools = ["find_product", "view_product_information", "recommend_product", "terminate"]
    varied = [make(i, tools[: i % 4 + 1] * (1 + i // 4)) for i in range(8)]
    row = measure(varied)
    assert row["tool_seq_entropy"] == round(math.log2(8), 4)
    assert near_duplicate_rate(varied) == 0.0 and row["categories"] == 2


def test_price_bands() -> None:
    assert [price_band(p) for p in (5, 100, 299.9, 1000, 25000, "x", None)] == [
        "<100",
        "100-300",
        "100-300",
        "1000-3000",
        ">=10000",
        None,
        None,
    ]


def test_builder_groups_kept_records_by_kind_and_agent() -> None:
    builder = DiversityBuilder()
    base = {"query": "q", "category": "c", "messages": MESSAGES}
    builder.add(
        {
            **base,
            "miner_kind": "agentic",
            "outcome": "kept",
            "origin": "agentic",
            "provenance": {"agent": "a1"},
        }
    )
    builder.add(
        {**base, "miner_kind": "subtask", "outcome": "low_richness", "origin": "agentic", "provenance": {}}
    )
    builder.add({**base, "miner_kind": "subtask", "outcome": "kept", "origin": "recovered", "provenance": {}})
    rows = builder.build()
    assert set(rows) == {
        "recovered (kept)",
        "all / miner_kind=agentic",
        "all / miner_kind=subtask",
        "kept",
        "kept / agent=a1",
        "kept / miner_kind=agentic",
    }
    assert rows["kept"]["trajectories"] == 1


@needs_bwrap
def test_build_report_card_and_the_single_teacher_comparison(corpus_dir: Path, shop_world, tmp_path) -> None:
    report = json.loads((corpus_dir / "report.json").read_text())
    kept = report["funnel"]["kept"]
    assert report["diversity"]["kept"]["trajectories"] == kept > 0
    assert "## Diversity" in (corpus_dir / "README.md").read_text()
    args = [
        "corpus",
        "report",
        str(corpus_dir),
        "--suite",
        str(shop_world.bank),
        "--index",
        str(shop_world.index),
    ]
    shown = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
    assert shown.exit_code == 0, shown.output
    assert "corpus diversity" in shown.output and "arena vs one teacher" in shown.output
    doc = json.loads((corpus_dir / "diversity.json").read_text())
    arena, teacher = doc["comparison"]["arena (kept)"], doc["comparison"]["single teacher (planner)"]
    assert arena["trajectories"] == teacher["trajectories"] == kept
    assert arena["query_distinct_2"] == teacher["query_distinct_2"]  # the same problems by construction
    half = CliRunner().invoke(app, ["corpus", "report", str(corpus_dir), "--suite", str(shop_world.bank)])
    assert half.exit_code == 2 and "both --suite and --index" in half.output


def _old_words(text: str) -> list[str]:
    return "".join(c.lower() if c.isalnum() else " " for c in text).split()


def test_words_and_signatures_equal_the_per_character_and_per_shingle_definitions() -> None:
    from datasketch import MinHash

    from shoparena.corpus.diversity import _PERMUTATIONS, _shingles, _signature, _words

    for text in ["Red RUNNING shoes_2x/500ml!", "a--b  c9", "", "ΣΟΦΙΑΣ café Ⅻ 10½", "İstanbul"]:
        assert _words(text) == _old_words(text)
    items = [make(i % 5, ["find_product", "view_product_information"][: 1 + i % 2]) for i in range(12)]
    for f in items:  # one MinHash.update per shingle on a fresh seeded MinHash, as datasketch documents
        reference = MinHash(num_perm=_PERMUTATIONS, seed=1)
        for shingle in _shingles(f):
            reference.update(shingle.encode("utf-8"))
        assert (_signature(f).hashvalues == reference.hashvalues).all()
    assert near_duplicate_rate(items) == round(2 / 12, 4)  # items 10 and 11 repeat items 0 and 1


def test_near_duplicate_rate_equals_datasketch_lsh_query_then_insert() -> None:
    """The band sets answer as ``MinHashLSH`` does (query, then insert, in order), near-duplicates and
    unrelated trajectories mixed, at two thresholds."""
    import random

    from datasketch import MinHashLSH

    from shoparena.corpus.diversity import _PERMUTATIONS, _signature

    rng = random.Random(8)
    vocabulary = [f"w{i}" for i in range(60)]
    base = [[rng.choice(vocabulary) for _ in range(30)] for _ in range(8)]
    items = []
    for i in range(300):
        words = list(base[i % 8]) if rng.random() < 0.6 else [rng.choice(vocabulary) for _ in range(30)]
        for _ in range(rng.randint(0, 3)):
            words[rng.randrange(len(words))] = rng.choice(vocabulary)
        calls = [("find_product", {"q": " ".join(words[k : k + 5])}) for k in range(0, 30, 5)]
        items.append(Features(group="g", query="q", category="c", calls=calls))
    for threshold in (0.8, 0.5):
        lsh, expected = MinHashLSH(threshold=threshold, num_perm=_PERMUTATIONS), 0
        for n, item in enumerate(items):
            expected += bool(lsh.query(_signature(item)))
            lsh.insert(str(n), _signature(item))
        assert near_duplicate_rate(items, threshold) == round(expected / len(items), 4)
        assert 0 < expected < len(items) - 20


def test_tool_results_read_as_json_or_none_as_before() -> None:
    """Plain-text results are refused before any parser runs; everything JSON-like reads as orjson, then the
    stdlib, read it (NaN, a leading white space, a lone surrogate)."""
    import math

    from shoparena.corpus.diversity import _loads

    assert _loads("Having recommended the product, I stop.") is None
    assert _loads("") is None and _loads("  \n") is None and _loads("\ufeff[1]") is None
    assert _loads(' \n[{"product_id": "1"}]') == [{"product_id": "1"}]
    assert math.isnan(_loads("NaN")) and _loads("-Infinity") == -math.inf
    assert _loads('"\\ud800"') == "\ud800" and _loads("true") is True and _loads("[1,]") is None
    assert _loads({"already": "parsed"}) == {"already": "parsed"}
