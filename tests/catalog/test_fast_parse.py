"""The index build's fast line parser keeps, cleans and refuses exactly what ``IndexLine`` does."""

from __future__ import annotations

import random
import struct
import sys
from pathlib import Path

import orjson
import pytest
from pydantic_core import to_json

from shoparena.catalog.io import (
    CleanIndexLine,
    CleanProduct,
    LoadSummary,
    iter_index_lines,
    iter_products,
    parse_index_line,
    parse_index_line_fast,
)
from shoparena.records.catalog import IndexLine, Product

sys.path.insert(0, str(Path(__file__).parents[1] / "search"))
from hostile_catalog import DATA, HOSTILE

LINES = (DATA / "lucene_parity_catalog.jsonl").read_bytes().splitlines() + HOSTILE


def test_clean_product_has_products_fields() -> None:
    ours, theirs = CleanProduct.model_fields, Product.model_fields
    assert list(ours) == list(theirs)
    for name, field in theirs.items():
        mine = ours[name]
        assert (mine.annotation, mine.is_required(), mine.metadata) == (
            field.annotation,
            field.is_required(),
            field.metadata,
        ), name
        if not field.is_required():
            assert mine.get_default(call_default_factory=True) == field.get_default(call_default_factory=True)
    assert list(CleanIndexLine.model_fields) == list(IndexLine.model_fields)


@pytest.mark.parametrize("raw", LINES, ids=range(len(LINES)))
def test_fast_parse_equals_the_model(raw: bytes) -> None:
    try:
        slow = parse_index_line(raw)
    except Exception as exc:
        with pytest.raises(type(exc)) as caught:
            parse_index_line_fast(raw)
        assert str(caught.value) == str(exc)
        return
    line, product_json = parse_index_line_fast(raw)
    assert line.model_dump() == slow.model_dump()
    assert product_json == slow.product.model_dump_json().encode()


def test_both_paths_are_taken() -> None:
    kinds = set()
    for raw in LINES:
        try:
            kinds.add(type(parse_index_line_fast(raw).line))
        except ValueError:
            kinds.add(ValueError)
    assert kinds == {CleanIndexLine, IndexLine, ValueError}


def test_iter_index_lines_keeps_and_quarantines_like_iter_products(tmp_path: Path) -> None:
    catalog = tmp_path / "documents.jsonl"
    catalog.write_bytes(b"\n".join(LINES) + b"\n")
    summaries = LoadSummary(path="x"), LoadSummary(path="x")
    held: tuple[list, list] = ([], [])
    slow = [
        line.model_dump() for line in iter_products(catalog, summary=summaries[0], quarantine=held[0].append)
    ]
    fast = [
        line.model_dump()
        for line, _ in iter_index_lines(catalog, summary=summaries[1], quarantine=held[1].append)
    ]
    assert fast == slow
    assert summaries[1] == summaries[0] and summaries[0].quarantined > 10
    assert held[1] == held[0]


def test_orjson_writes_strings_and_floats_as_pydantic_does() -> None:
    # The fast path dumps the parsed product with orjson instead of the model: every character (in one
    # string) and a spread of floats (random bit patterns, prices, powers of ten) must come out the same.
    every_char = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)
    assert orjson.dumps(every_char) == to_json(every_char)
    rng = random.Random(3)
    floats = [0.0, 5e-324, 1e16, 1e21, 1e22, 0.1, 999999999999999.9, 1.7976931348623157e308]
    for _ in range(20_000):
        floats.append(abs(struct.unpack("d", struct.pack("Q", rng.getrandbits(64)))[0]))
        floats.append(round(rng.uniform(0, 1e6), 2))
        floats.append(10 ** rng.uniform(-30, 30))
    floats = [f for f in floats if f == f and f != float("inf")]
    assert orjson.dumps(floats) == to_json(floats)


_BASE = (
    b'{"id":"1","contents":"x","product":{"product_id":"1","shop_id":"2","category":"a","title":"T",'
    b'"price":46,"sold_count":0}}'
)
#: JSON that one parser might read otherwise than the other: the fast path parses with pydantic-core,
#: the reference with orjson; both must keep, refuse or quarantine alike, with the same values.
_EDGE_JSON = [
    _BASE,
    _BASE.replace(b'"title":"T"', b'"title":"T","title":"U"'),  # duplicate key: the last wins
    _BASE.replace(b'"title":"T"', b'"title":"\\ud800"'),  # lone surrogate
    _BASE.replace(b'"title":"T"', b'"title":"\\ud83d\\ude00 \\u00e9\\/\\n"'),
    _BASE.replace(b'"title":"T"', b'"title":"a\tb"'),  # raw control character
    _BASE.replace(b'"title":"T"', b'"title":"\xff"'),  # bad UTF-8
    b"\xef\xbb\xbf" + _BASE,
    _BASE + b" x",
    b" " + _BASE + b" \t",
    _BASE.replace(b'"sold_count":0', b'"sold_count":-0'),
    _BASE.replace(b'"sold_count":0', b'"sold_count":9007199254740992'),
    _BASE.replace(b'"sold_count":0', b'"sold_count":1.0'),
    _BASE.replace(b'"sold_count":0', b'"sold_count":true'),
    _BASE.replace(b'"id":"1"', b'"id":1'),
] + [
    _BASE.replace(b'"price":46', b'"price":' + num)
    for num in (
        b"NaN", b"Infinity", b"-Infinity", b"1e400", b"1.", b".5", b"+1", b"01", b"-0.0", b"0.1e-400",
        b"4.6e1", b"1E+2", b"9223372036854775808", b"18446744073709551616", b"1" + b"0" * 400,
        b"4.60000000000000000000000000001", b"false", b'"46"',
    )
]  # fmt: skip


@pytest.mark.parametrize("raw", _EDGE_JSON, ids=range(len(_EDGE_JSON)))
def test_fast_parse_reads_edge_json_as_orjson_does(raw: bytes) -> None:
    test_fast_parse_equals_the_model(raw)


def test_fast_parse_reads_every_price_as_orjson_does() -> None:
    rng = random.Random(35)
    for _ in range(2_000):
        digits = "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 30))).lstrip("0") or "0"
        if rng.random() < 0.7:
            cut = rng.randint(0, len(digits))
            digits = f"{digits[:cut] or '0'}.{digits[cut:] or '0'}"
        if rng.random() < 0.3:
            digits += f"e{rng.randint(-330, 310)}"
        raw = _BASE.replace(b'"price":46', b'"price":' + digits.encode())
        test_fast_parse_equals_the_model(raw)
