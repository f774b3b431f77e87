"""Suite loaders: shared data, upstream shapes not in shared data, quarantine accounting, writers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shoparena.records.problem import Intent, problem_id_for_query
from shoparena.suites import SuiteLoadError, load_suite, write_oro_suite, write_sb_jsonl
from world import SHARED_DATA

SHARED = SHARED_DATA
SB_FILES = sorted(SHARED.glob("shoppingbench/*.jsonl"))
ORO_FILES = sorted(SHARED.glob("oro/problem_suite_*.json"))
EXPECTED = {
    "synthesize_product_test.jsonl": (250, 250),
    "synthesize_shop_test.jsonl": (250, 736),
    "problem_suite_v1.json": (30, 67),
    "problem_suite_v3.json": (30, 53),
}

VOUCHER_LINE = {
    "query": "Two mugs\n\nMy budget is only `212`, but I have a voucher with the following rules:\n1. x",
    "reward": [
        {"product_id": "11", "title": ["Mug A"], "attributes": [{"brand": ["acme"]}]},
        {"product_id": "12", "title": ["Mug B"], "sku_options": [{"color_family": "red"}]},
    ],
    "voucher": {
        "voucher_type": "shop",
        "threshold": 67,
        "discount_type": "percentage",
        "face_value": None,
        "discount": 0.2,
        "cap": 30,
        "price_after_voucher": 200.0,
        "budget": 212,
    },
}
WEB_LINE = {
    "query": "Which year\u0085 did it happen? I want a coin from then.",
    "Knowledge_Attribute": 1969,
    "reward": {
        "product_id": "77",
        "shop_id": "5",
        "brand": "❤️NoBrand",
        "category": "A > B",
        "title": "1969 coin",
        "description": "old",
        "price": 5.0,
        "sold_count": 1,
        "sku_options": {"1": {"1969 2p": "1969"}},
        "attributes": {},
        "service": [],
    },
}


def _write_lines(path: Path, records: list[object | str]) -> Path:
    with open(path, "wb") as fh:
        for rec in records:
            text = rec if isinstance(rec, str) else json.dumps(rec, ensure_ascii=False)
            fh.write(text.encode("utf-8") + b"\n")
    return path


@pytest.mark.parametrize("path", SB_FILES + ORO_FILES, ids=lambda p: p.name)
def test_shared_files_load_without_errors(path: Path) -> None:
    problems, summary = load_suite(path, strict=True)
    assert summary.quarantined == 0 and summary.read == summary.kept == len(problems)
    n_problems, n_items = EXPECTED[path.name]
    assert len(problems) == n_problems and sum(len(p.reward) for p in problems) == n_items
    assert len({p.problem_id for p in problems}) == len(problems)


def test_oro_fields_and_ids() -> None:
    problems, summary = load_suite(SHARED / "oro/problem_suite_v3.json")
    assert summary.format == "oro_json" and summary.by_category == {"Product": 10, "Shop": 10, "Voucher": 10}
    p = problems[0]
    assert p.problem_id == problem_id_for_query(p.query) and not p.source.problem_id_given
    assert p.source.index == 0 and p.source.reward_shape == "dict"
    assert p.reward_title_embeddings and set(p.reward_title_embeddings) >= {
        t for i in p.reward for t in i.title
    }
    voucher = [q for q in problems if q.intent is Intent.VOUCHER]
    assert len(voucher) == 10 and all(q.voucher is not None for q in voucher)
    view = p.public_view()
    assert set(view) == {"problem_id", "query", "category", "difficulty", "title"}


@pytest.mark.parametrize("path", SB_FILES, ids=lambda p: p.name)
def test_sb_round_trip_is_byte_exact(path: Path, tmp_path: Path) -> None:
    problems, _ = load_suite(path)
    out = tmp_path / "out.jsonl"
    assert write_sb_jsonl(problems, out) == len(problems)
    assert out.read_bytes() == path.read_bytes()


@pytest.mark.parametrize("path", ORO_FILES, ids=lambda p: p.name)
def test_oro_round_trip_and_public_variant(path: Path, tmp_path: Path) -> None:
    problems, _ = load_suite(path)
    out = tmp_path / "suite.json"
    write_oro_suite(problems, out)
    assert json.loads(out.read_text()) == json.loads(path.read_text())
    again, _ = load_suite(out)
    assert [p.content_hash for p in again] == [p.content_hash for p in problems]
    public = tmp_path / "public.json"
    write_oro_suite(problems, public, public=True)
    records = json.loads(public.read_text())
    assert all(not {"reward", "voucher", "reward_title_embeddings"} & set(r) for r in records)
    assert [r["problem_id"] for r in records] == [p.problem_id for p in problems]


def test_upstream_voucher_and_web_shapes(tmp_path: Path) -> None:
    path = _write_lines(tmp_path / "mixed.jsonl", [VOUCHER_LINE, WEB_LINE])
    problems, _ = load_suite(path, strict=True)
    voucher, web = problems
    assert voucher.intent is Intent.VOUCHER and voucher.voucher.cap == 30 and len(voucher.reward) == 2
    assert web.intent is Intent.WEB and web.knowledge_attribute == 1969
    assert web.reward[0].title == ["1969 coin"] and web.web_product["brand"] == "❤️NoBrand"
    assert "\u0085" in web.query  # U+0085 did not split the record
    out = tmp_path / "out.jsonl"
    write_sb_jsonl(problems, out)
    assert out.read_bytes() == path.read_bytes()


def test_unknown_price_op_is_kept() -> None:
    from shoparena.records.problem import ProblemSource
    from shoparena.suites.loaders import parse_problem

    rec = {"query": "q", "reward": {"product_id": "1", "title": ["t"], "price": [{"around": [5, 9]}]}}
    problem = parse_problem(rec, ProblemSource())
    assert problem.reward[0].price == [{"around": [5, 9]}] and problem.intent is Intent.PRODUCT


BAD = [
    ("{not json", "", "invalid JSON"),
    ({"reward": {"product_id": "1", "title": ["t"]}}, "query", "missing"),
    ({"query": "q1", "reward": {"product_id": "1", "title": ["t"]}, "extra": 1}, "extra", "unknown key"),
    (
        {"query": "q2", "reward": [{"product_id": "1", "title": ["t"], "price": [{"between": [5]}]}]},
        "reward.0.price",
        "needs [lo, hi]",
    ),
    (
        {**VOUCHER_LINE, "query": "q3", "voucher": {**VOUCHER_LINE["voucher"], "discount_type": "bogo"}},
        "voucher.discount_type",
        "fixed",
    ),
    ({"query": "q4", "reward": []}, "reward", "empty"),
    ({"query": "q5", "reward": {"product_id": "1", "title": "not a list"}}, "reward.title", "valid list"),
    (
        {"query": "q6", "Knowledge_Attribute": "x", "reward": {"product_id": "1", "title": ["t"]}},
        "reward.title",
        "must be a string",
    ),
]


def test_bad_records_are_quarantined_with_record_and_field(tmp_path: Path) -> None:
    good = {"query": "fine", "reward": {"product_id": "1", "title": ["t"]}}
    records = [good] + [rec for rec, _, _ in BAD] + [good]  # the last is a duplicate query
    path = _write_lines(tmp_path / "bad.jsonl", records)
    problems, summary = load_suite(path)
    assert len(problems) == 1 and summary.read == len(records)
    assert summary.read == summary.kept + summary.quarantined and summary.quarantined == len(BAD) + 1
    by_line = {q.line: q for q in summary.problems_quarantined}
    for offset, (rec, field, reason) in enumerate(BAD, start=2):
        bad = by_line[offset]
        assert bad.field == field and reason in bad.reason, bad.describe()
        assert f"bad.jsonl:line {offset}" in bad.describe()
        if isinstance(rec, dict) and "query" in rec:
            assert bad.query_prefix == rec["query"][:60]
    dup = by_line[len(records)]
    assert dup.field == "query" and "duplicate" in dup.reason
    with pytest.raises(SuiteLoadError, match="line 2"):
        load_suite(path, strict=True)


def test_oro_unknown_category_is_a_product_and_index_is_named(tmp_path: Path) -> None:
    recs = [
        {
            "query": "a",
            "reward": {"product_id": "1", "title": ["t"]},
            "category": "Gadget",
            "difficulty": "easy",
            "title": "X 1",
            "problem_id": "p-1",
        },
        {"query": "b", "reward": [{"product_id": "1", "title": ["t"]}], "category": "Voucher"},
    ]
    path = tmp_path / "suite.json"
    path.write_text(json.dumps(recs))
    problems, summary = load_suite(path)
    assert problems[0].intent is Intent.PRODUCT and problems[0].problem_id == "p-1"
    assert problems[0].category_label == "Gadget"
    bad = summary.problems_quarantined[0]
    assert bad.index == 1 and bad.field == "voucher" and "index 1" in bad.describe()
