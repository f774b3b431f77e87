"""Bad values in catalog and problem records are rejected with a reason that names the field."""

from __future__ import annotations

import json
import math

import orjson
import pytest
from pydantic import ValidationError

from shoparena.catalog.io import iter_products
from shoparena.records.catalog import MAX_COUNT, Product
from shoparena.records.problem import MAX_PESOS, RewardItem, Voucher
from shoparena.suites.loaders import SuiteLoadSummary, iter_suite

GOOD_PRODUCT = {
    "product_id": "123",
    "shop_id": "9",
    "category": "Shoes > Running",
    "title": "Red running shoes",
    "price": 499.0,
    "sold_count": 12,
}


def _error_fields(exc: ValidationError) -> set[str]:
    return {".".join(str(p) for p in err["loc"]) for err in exc.errors()}


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("price", "inf"),
        ("price", "Infinity"),
        ("price", "-inf"),
        ("price", "NaN"),
        ("price", math.inf),
        ("price", True),
        ("price", False),
        ("sold_count", True),
        ("sold_count", 2**63),
        ("sold_count", MAX_COUNT + 1),
        ("sold_count", -1),
    ],
)
def test_product_rejects_bad_numbers(field: str, value: object) -> None:
    with pytest.raises(ValidationError) as info:
        Product.model_validate({**GOOD_PRODUCT, field: value})
    assert _error_fields(info.value) == {field}


def test_product_keeps_the_largest_count() -> None:
    assert Product.model_validate({**GOOD_PRODUCT, "sold_count": MAX_COUNT}).sold_count == MAX_COUNT


def test_catalog_reader_quarantines_inf_price_and_huge_count(tmp_path) -> None:
    lines = [
        orjson.dumps(GOOD_PRODUCT),
        json.dumps({**GOOD_PRODUCT, "product_id": "2", "price": "Infinity"}).encode(),
        # orjson cannot write inf; the upstream reader would see the bare literal Infinity.
        json.dumps({**GOOD_PRODUCT, "product_id": "3", "price": math.inf}).encode(),
        orjson.dumps({**GOOD_PRODUCT, "product_id": "4", "sold_count": 2**63 - 1}),
        orjson.dumps({**GOOD_PRODUCT, "product_id": "5", "price": True}),
    ]
    path = tmp_path / "documents.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    bad: list = []
    kept = list(iter_products(path, quarantine=bad.append))
    assert [line.id for line in kept] == ["123"]
    assert [q.line_no for q in bad] == [2, 3, 4, 5]
    assert bad[0].reason.startswith("price:")
    assert bad[1].reason.startswith("invalid JSON") and "column 107" in bad[1].reason  # bare Infinity
    assert bad[2].reason.startswith("sold_count:")
    assert bad[3].reason.startswith("price:") and "boolean" in bad[3].reason


@pytest.mark.parametrize("pid", ["", "   "])
def test_reward_item_rejects_empty_product_id(pid: str) -> None:
    with pytest.raises(ValidationError) as info:
        RewardItem(product_id=pid)
    assert _error_fields(info.value) == {"product_id"}


@pytest.mark.parametrize("bound", [-5, MAX_PESOS * 10, math.inf])
def test_reward_item_rejects_absurd_price_bounds(bound: float) -> None:
    with pytest.raises(ValidationError, match="bound"):
        RewardItem(product_id="1", price=[{"between": [0, bound]}])


VOUCHER = {
    "voucher_type": "platform",
    "threshold": 100,
    "discount_type": "fixed",
    "face_value": 20,
    "price_after_voucher": 90.0,
    "budget": 120,
}


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("budget", -1),
        ("budget", 0),
        ("budget", True),
        ("threshold", 1e15),
        ("threshold", -3),
        ("threshold", math.nan),
        ("face_value", -20),
        ("price_after_voucher", math.inf),
    ],
)
def test_voucher_rejects_bad_amounts(field: str, value: object) -> None:
    with pytest.raises(ValidationError) as info:
        Voucher.model_validate({**VOUCHER, field: value})
    assert _error_fields(info.value) == {field}


def test_voucher_rejects_discount_outside_unit_interval() -> None:
    fields = {**VOUCHER, "discount_type": "percentage", "discount": 1.5, "cap": 10}
    with pytest.raises(ValidationError) as info:
        Voucher.model_validate(fields)
    assert _error_fields(info.value) == {"discount"}


def test_suite_loader_quarantines_bad_problems_naming_the_field(tmp_path) -> None:
    base = {
        "query": "red shoes",
        "reward": {"product_id": "1", "title": ["Red shoes"]},
        "category": "Product",
    }
    records = [
        base,
        {**base, "query": "q2", "reward": {"product_id": ""}},
        {**base, "query": "q3", "difficulty": "impossible"},
        {
            "query": "q4",
            "category": "Voucher",
            "reward": [{"product_id": "1"}],
            "voucher": {**VOUCHER, "budget": -10},
        },
        {**base, "query": "q5", "difficulty": "hard"},
    ]
    path = tmp_path / "suite.json"
    path.write_text(json.dumps(records))
    summary = SuiteLoadSummary(path=str(path))
    kept = list(iter_suite(path, summary=summary))
    assert [p.query for p in kept] == ["red shoes", "q5"]
    assert summary.read == summary.kept + summary.quarantined == 5
    fields = [q.field for q in summary.problems_quarantined]
    assert fields == ["reward.product_id", "difficulty", "voucher.budget"]
    assert "unknown difficulty 'impossible'" in summary.problems_quarantined[1].reason


def test_bad_utf8_deep_in_a_line_reports_its_real_column(tmp_path) -> None:
    line = orjson.dumps({**GOOD_PRODUCT, "title": "Red shoes PLACEHOLDER"}).replace(b"PLACEHOLDER", b"\xff")
    path = tmp_path / "documents.jsonl"
    path.write_bytes(line + b"\n")
    bad: list = []
    assert list(iter_products(path, quarantine=bad.append)) == []
    column = line.index(b"\xff") + 1
    assert bad[0].reason.startswith("invalid UTF-8:")
    assert f"(column {column})" in bad[0].reason and column > 50


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("problem_id", 12.5, "must be a non-empty string or an integer, got float 12.5"),
        ("problem_id", "", "got an empty string"),
        ("query", 42, "not a non-empty string: int '42'"),
    ],
)
def test_problem_messages_say_what_they_got(tmp_path, field: str, value: object, expected: str) -> None:
    record = {"query": "red shoes", "reward": {"product_id": "1"}, "category": "Product", field: value}
    path = tmp_path / "suite.json"
    path.write_text(json.dumps([record]))
    summary = SuiteLoadSummary(path=str(path))
    assert list(iter_suite(path, summary=summary)) == []
    bad = summary.problems_quarantined[0]
    assert bad.field == field and expected in bad.reason
