"""``chat_dumps`` is ``json.dumps(value, ensure_ascii=False)``, first call or remembered."""

from __future__ import annotations

import datetime
import enum
import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shoparena.formats import _common
from shoparena.formats._common import chat_dumps

_LEAVES = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text()
    | st.sampled_from(["<think>", 'a "quote"', "back\\slash", "\x00\x1f\x7f", "é中\u2028", "\ud800", "null"])
)
_VALUES = st.recursive(
    _LEAVES,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=400, deadline=None)
@given(_VALUES)
def test_the_text_is_json_dumps_first_and_second_time(value):
    expected = json.dumps(value, ensure_ascii=False)
    assert chat_dumps(value) == expected
    assert chat_dumps(value) == expected  # remembered, when the memo may hold it


@pytest.mark.parametrize(
    "value",
    [
        [1e16, 1e-5, 0.00001234, 1.5e300, -0.0, 5e-324, 123456789.0],  # orjson writes some of these otherwise
        {"a": 1, "b": [True, False], "c": {"d": "x"}},  # key order kept
        [{"z": 1, "a": 2}],
        [2**64, -(2**63) - 1],  # beyond orjson's integers
        [float("nan"), float("inf"), None],
    ],
)
def test_values_orjson_writes_otherwise(value):
    assert chat_dumps(value) == json.dumps(value, ensure_ascii=False)
    assert chat_dumps(value) == json.dumps(value, ensure_ascii=False)


def test_a_repeated_value_is_remembered_and_look_alikes_are_not_confused(monkeypatch):
    monkeypatch.setattr(_common, "_CHAT_TEXTS", {})
    products = [{"product_id": "p1", "price": 12.5, "title": "Lamp"}]
    first = chat_dumps(products)
    _common._CHAT_TEXTS[next(iter(_common._CHAT_TEXTS))] = "remembered"  # a hit returns the entry
    assert chat_dumps([dict(p) for p in products]) == "remembered" and len(_common._CHAT_TEXTS) == 1
    assert first == json.dumps(products, ensure_ascii=False)
    # None and NaN are both orjson's null: never served from one another's entry.
    assert chat_dumps([None]) == "[null]" and chat_dumps([math.nan]) == "[NaN]"
    assert chat_dumps([1]) == "[1]" and chat_dumps([1.0]) == "[1.0]" and chat_dumps([True]) == "[true]"


def test_the_memo_starts_over_when_full(monkeypatch):
    monkeypatch.setattr(_common, "_CHAT_TEXTS", {})
    monkeypatch.setattr(_common, "_CHAT_TEXTS_SIZE", 3)
    texts = [chat_dumps({"i": i}) for i in range(7)]
    assert texts == [json.dumps({"i": i}) for i in range(7)] and len(_common._CHAT_TEXTS) == 1


def test_a_value_only_orjson_writes_is_its_json_value():
    class Colour(enum.Enum):
        RED = "red"

    import uuid

    value = {"c": Colour.RED, "u": uuid.UUID(int=1)}
    assert chat_dumps(value) == '{"c": "red", "u": "00000000-0000-0000-0000-000000000001"}'
    assert chat_dumps(value) == '{"c": "red", "u": "00000000-0000-0000-0000-000000000001"}'


def test_subclasses_are_written_by_json():
    class Level(enum.IntEnum):
        HIGH = 3

    class Tag(str):
        pass

    assert chat_dumps({"level": Level.HIGH, "tag": Tag("x")}) == '{"level": 3, "tag": "x"}'
    for unwritable in ({1, 2}, [datetime.date(2026, 12, 4)]):
        with pytest.raises(TypeError):
            chat_dumps(unwritable)  # what json cannot write still raises (orjson would write a date)
