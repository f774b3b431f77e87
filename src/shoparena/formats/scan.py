"""Linear readers of untrusted text: tag blocks, JSON nesting depth, and the caps every door applies.

A policy's completion, a miner's message and a proxied request body are untrusted. A backtracking pattern
such as ``<role>(.+?)</role>`` takes time quadratic in the text on unclosed tags (each opening tag scans to
the end), and ``json.loads`` raises ``RecursionError`` on a value nested a few thousand deep. The helpers
here find the same blocks with ``str.find`` (each character looked at a bounded number of times) and
refuse a nesting deeper than :data:`MAX_JSON_DEPTH` before any recursive decoder sees it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

#: Longest action (characters) any door parses: one completion. A longer one is refused unparsed, as the
#: policy's failure (a parse issue on its step), by every door alike.
MAX_ACTION_CHARS = 32_768
#: Tool calls run per step at every door (env server, ``eval run``); calls past it are dropped, noted on the
#: step, so one action is bounded in time, memory and response size.
MAX_CALLS_PER_STEP = 32
#: Deepest JSON nesting (arrays and objects) read from untrusted text; a tool call's parameters need 3.
MAX_JSON_DEPTH = 64

# Fixed-width tokens only (an escape, a quote, a bracket): no backtracking, whatever the text.
_JSON_TOKEN = re.compile(r'\\.|["\[\]{}]', re.DOTALL)


class JsonDepthError(ValueError):
    """A JSON text or value nested deeper than the cap (a parse issue of the policy, never a crash)."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"nested deeper than {limit} levels (arrays and objects)")
        self.limit = limit


def tag_spans(
    text: str, tag: str, *, min_body: int = 0, tail: bool = False
) -> Iterator[tuple[int, int, int, int]]:
    """``(start, body_start, body_end, end)`` of each ``<tag>…</tag>`` block, leftmost first, not overlapping.

    The same blocks as ``re.finditer(f"<{tag}>(.{{min_body,}}?)</{tag}>", text, re.DOTALL)`` (with ``tail``:
    a last block whose closing tag never came runs to the end of the text, before a final newline, as the
    pattern's ``(?:</{tag}>|$)`` does), found in linear time.
    """
    opening, closing = f"<{tag}>", f"</{tag}>"
    position = 0
    while True:
        start = text.find(opening, position)
        if start < 0:
            return
        body_start = start + len(opening)
        body_end = text.find(closing, body_start + min_body)
        if body_end < 0:
            # No later opening tag can close either (any closing tag after it would have closed this one).
            if tail:
                stop = len(text) - 1 if text.endswith("\n") and len(text) - 1 >= body_start else len(text)
                yield start, body_start, stop, stop
            return
        end = body_end + len(closing)
        yield start, body_start, body_end, end
        position = end


def first_tag_body(text: str, tag: str, *, min_body: int = 1) -> str | None:
    """The body of the first ``<tag>…</tag>`` block (``re.search(f"<{tag}>(.+?)</{tag}>")``), or None."""
    for _, body_start, body_end, _ in tag_spans(text, tag, min_body=min_body):
        return text[body_start:body_end]
    return None


def tag_bodies(text: str, tag: str) -> list[str]:
    """Every ``<tag>…</tag>`` body, as ``re.findall(f"<{tag}>(.*?)</{tag}>")`` finds them."""
    return [text[b:e] for _, b, e, _ in tag_spans(text, tag)]


def tagged_entries(text: str, roles: tuple[str, ...]) -> list[tuple[str, str]]:
    """``(role, body)`` of each block of any of ``roles``, as
    ``re.findall(f"<({'|'.join(roles)})>(.*?)</\\1>", text, re.DOTALL)`` finds them, in linear time (each
    role's next opening tag is cached; a role whose tag never closes is dropped, as no later one can)."""
    openings = {role: text.find(f"<{role}>") for role in roles}
    out: list[tuple[str, str]] = []
    while True:
        live = [(at, role) for role, at in openings.items() if at >= 0]
        if not live:
            return out
        start, role = min(live)
        body_start = start + len(role) + 2
        body_end = text.find(f"</{role}>", body_start)
        if body_end < 0:
            openings[role] = -1
            continue
        out.append((role, text[body_start:body_end]))
        position = body_end + len(role) + 3
        for other, at in openings.items():
            if 0 <= at < position:
                openings[other] = text.find(f"<{other}>", position)


def json_text_depth(text: str, limit: int = MAX_JSON_DEPTH) -> int:
    """The nesting depth of a JSON text's arrays and objects, counted up to ``limit + 1`` (linear; brackets
    inside strings do not count); 0 when the text has no more than ``limit`` opening brackets at all."""
    if text.count("[") + text.count("{") <= limit:
        return 0
    depth = deepest = 0
    in_string = False
    for match in _JSON_TOKEN.finditer(text):
        token = match.group()
        if token == '"':
            in_string = not in_string
        elif in_string or len(token) > 1:
            continue
        elif token in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    return deepest
        elif token in "]}":
            depth = max(depth - 1, 0)
    return deepest


def value_depth(value: Any, limit: int = MAX_JSON_DEPTH) -> int:
    """The nesting depth of a JSON-like value's lists and dicts, up to ``limit + 1`` (no recursion)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list | tuple):
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    return deepest
            stack.extend((v, depth) for v in (item.values() if isinstance(item, dict) else item))
    return deepest


def loads_bounded(text: str | bytes, limit: int = MAX_JSON_DEPTH) -> Any:
    """``json.loads`` that refuses a nesting deeper than ``limit`` (:class:`JsonDepthError`) first."""
    if isinstance(text, bytes | bytearray):
        text = bytes(text).decode("utf-8", "surrogatepass")
    if json_text_depth(text, limit) > limit:
        raise JsonDepthError(limit)
    try:
        return json.loads(text)
    except RecursionError:  # a limit above the interpreter's own: still the text's fault
        raise JsonDepthError(limit) from None


__all__ = [
    "MAX_ACTION_CHARS",
    "MAX_CALLS_PER_STEP",
    "MAX_JSON_DEPTH",
    "JsonDepthError",
    "first_tag_body",
    "json_text_depth",
    "loads_bounded",
    "tag_bodies",
    "tag_spans",
    "tagged_entries",
    "value_depth",
]
