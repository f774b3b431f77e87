"""records.unicode: the one home for lone surrogates (issue 52)."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel

from shoparena.records.unicode import (
    dump_json,
    escape_lone_surrogates,
    first_lone_surrogate,
    has_lone_surrogate,
    json_bytes,
    json_text,
    replace_lone_surrogates,
)

LONE = ["\ud800", "\udcff", "\ud83d", "a\udfffb"]


class Record(BaseModel):
    name: str
    data: dict


@pytest.mark.parametrize("text", LONE)
def test_every_lone_surrogate_is_found_escaped_and_replaced(text) -> None:
    assert has_lone_surrogate(text)
    escaped = escape_lone_surrogates({text: [text, (text,)]})
    key = next(iter(escaped))
    assert not has_lone_surrogate(key) and key.encode("utf-8") and "\\u" in key
    assert escaped[key][0] == key and escaped[key][1] == (key,)
    assert first_lone_surrogate({"a": [1, {"b": text}]})[0] == "a[1].b"
    assert not has_lone_surrogate(replace_lone_surrogates(text))


def test_valid_text_is_left_as_it_is() -> None:
    for text in ["plain", "café 😀 日本", "\\ud800 written as text", ""]:
        assert not has_lone_surrogate(text) and escape_lone_surrogates(text) is text
        assert json_text({"t": text}) == json.dumps({"t": text}, ensure_ascii=False)
        assert json_bytes({"t": text}) == json.dumps({"t": text}, ensure_ascii=False).encode("utf-8")


def test_writers_escape_instead_of_raising() -> None:
    record = Record(name="m\udcff", data={"k\ud800": ["é", "x\ud83d"]})
    with pytest.raises(Exception, match="surrogates not allowed"):
        record.model_dump_json()
    back = json.loads(dump_json(record, indent=2))
    assert back == {"name": "m\\udcff", "data": {"k\\ud800": ["é", "x\\ud83d"]}}
    assert json.loads(json_text({"q": "shoes \ud83d"})) == {"q": "shoes \\ud83d"}
    assert json.loads(json_bytes({"q": "shoes \ud83d"}).decode("utf-8")) == {"q": "shoes \\ud83d"}
    # What ``default`` makes of an object is escaped too (as a JSON escape: still JSON).
    text = json_text({"o": object()}, default=lambda o: "obj\udcff")
    assert text.encode("utf-8") and json.loads(text) == {"o": "obj\udcff"}
    assert dump_json(Record(name="ok", data={})) == Record(name="ok", data={}).model_dump_json()
