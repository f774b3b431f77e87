"""Linear readers of untrusted text (issue 52): the same blocks as the backtracking patterns they replace,
no quadratic time on unclosed tags, and a nesting cap before any recursive decoder."""

from __future__ import annotations

import json
import random
import re

import pytest

from hang_guard import no_hang
from shoparena.formats.scan import (
    MAX_JSON_DEPTH,
    JsonDepthError,
    first_tag_body,
    json_text_depth,
    loads_bounded,
    tag_bodies,
    tag_spans,
    tagged_entries,
    value_depth,
)

_ALPHABET = ["<t>", "</t>", "a", "\n", "<", "t", ">", "/"]


def test_blocks_equal_the_patterns_they_replace() -> None:
    first = re.compile(r"<t>(.+?)</t>", re.DOTALL)
    every = re.compile(r"<t>(.*?)</t>", re.DOTALL)
    tail = re.compile(r"<t>(.*?)(?:</t>|$)", re.DOTALL)
    rng = random.Random(52)
    for _ in range(20_000):
        text = "".join(rng.choice(_ALPHABET) for _ in range(rng.randint(0, 12)))
        match = first.search(text)
        assert first_tag_body(text, "t") == (match.group(1) if match else None), text
        assert tag_bodies(text, "t") == every.findall(text), text
        spans = [(m.start(), m.start(1), m.end(1), m.end()) for m in tail.finditer(text)]
        assert list(tag_spans(text, "t", tail=True)) == spans, text


def test_history_entries_equal_the_pattern_they_replace() -> None:
    entry = re.compile(r"<(user|think|obs)>(.*?)</\1>", re.DOTALL)
    alphabet = ["<user>", "</user>", "<think>", "</think>", "<obs>", "</obs>", "a", "<", ">"]
    rng = random.Random(7)
    for _ in range(20_000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        assert tagged_entries(text, ("user", "think", "obs")) == entry.findall(text), text


def test_unclosed_tags_are_linear() -> None:
    # 70k unclosed tags (the finding that hung the env server past SIGTERM) and one long unclosed block
    many = "<tool_call>" * 70_000
    long = "<think>" + "x" * 2_000_000
    with no_hang():
        assert first_tag_body(many, "tool_call") is None
        assert tag_bodies(many + "</tool_call>", "tool_call")[0].startswith("<tool_call>")
        assert first_tag_body(long, "think") is None
        entries = tagged_entries("<obs>" * 50_000 + "<think>a</think>" * 20_000, ("think", "obs"))
        assert entries[-1] == ("think", "a")
        assert json_text_depth('"' + '\\"[' * 500_000) == 0  # every bracket inside one unclosed string


@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH + 1, 3_000, 100_000])
def test_deep_json_is_refused_before_decoding(depth: int) -> None:
    text = "[" * depth + "]" * depth
    with pytest.raises(RecursionError) if depth >= 3_000 else _nothing():
        json.loads(text)  # what the parsers used to call: RecursionError, not a JSON error
    with pytest.raises(JsonDepthError, match=f"deeper than {MAX_JSON_DEPTH}"):
        loads_bounded(text)
    assert isinstance(JsonDepthError(1), ValueError)


def test_depth_counts_structure_not_strings() -> None:
    inside_strings = json.dumps({"q": "[" * 500, "k": ["{" * 500]})
    assert json_text_depth(inside_strings) == 2  # the object and the list
    assert loads_bounded(inside_strings)["q"] == "[" * 500
    assert json_text_depth("[" * 70 + '"\\"]"' + "]" * 70) == MAX_JSON_DEPTH + 1
    nested: list = []
    for _ in range(5_000):
        nested = [nested]
    assert value_depth(nested) == MAX_JSON_DEPTH + 1  # stops counting past the cap, no recursion
    assert value_depth({"a": [1, {"b": 2}]}) == 3


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
