"""Lone surrogates: the one home for finding, replacing and escaping them (no I/O).

A lone surrogate (``"\\udcff"``: half of a UTF-16 pair) is a Python ``str`` code point that no UTF-8
writer accepts: ``json.dumps(..., ensure_ascii=False).encode()``, pydantic's ``model_dump_json`` and
``Path.write_text`` all raise. They reach the harness from outside: a command-line argument the shell
could not decode (Python keeps the bytes as ``\\udc80``..``\\udcff``), a model's or miner's JSON escape, a
proxied request body. Two treatments, each used at its boundary:

* :func:`replace_lone_surrogates` (U+FFFD) for a policy's *action*, which the environment refuses as the
  policy's own malformed call (``env.policy_output``);
* :func:`escape_lone_surrogates` (the visible escape ``\\udcff``, six ASCII characters) for *text that is
  recorded*: a model name, a miner's output shown by the viewer or sent to a judge, a proxied request's
  trusted-log line. The text stays readable and distinct, and every writer downstream can encode it.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel
from pydantic_core import PydanticSerializationError, to_json

LONE_SURROGATE = re.compile("[\ud800-\udfff]")
REPLACEMENT = "\ufffd"


def has_lone_surrogate(text: str) -> bool:
    """Whether ``text`` holds a code point no UTF-8 writer accepts."""
    return not text.isascii() and LONE_SURROGATE.search(text) is not None


def first_lone_surrogate(value: Any, where: str = "") -> tuple[str, str] | None:
    """``(dotted path, escaped code point)`` of the first lone surrogate in a JSON-like value, or None."""
    if isinstance(value, str):
        found = LONE_SURROGATE.search(value)
        return (where, f"\\u{ord(found.group()):04x}") if found else None
    if isinstance(value, dict):
        for key, item in value.items():
            hit = first_lone_surrogate(key, where) or first_lone_surrogate(item, f"{where}.{key}".lstrip("."))
            if hit is not None:
                return hit
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            hit = first_lone_surrogate(item, f"{where}[{i}]")
            if hit is not None:
                return hit
    return None


def replace_lone_surrogates(value: Any) -> Any:
    """``value`` with every lone surrogate (in strings, keys included) replaced by U+FFFD."""
    if isinstance(value, str):
        return LONE_SURROGATE.sub(REPLACEMENT, value) if has_lone_surrogate(value) else value
    if isinstance(value, dict):
        return {replace_lone_surrogates(k): replace_lone_surrogates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [replace_lone_surrogates(v) for v in value]
    return value


def escape_lone_surrogates(value: Any) -> Any:
    """``value`` with every lone surrogate (in strings, keys included) written as its escape ``\\udcff``.

    Other text is unchanged (valid non-ASCII text included); a value with no string is returned as is.

    >>> escape_lone_surrogates("m\\udcff é")
    'm\\\\udcff é'
    """
    if isinstance(value, str):
        if not has_lone_surrogate(value):
            return value
        return LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", value)
    if isinstance(value, dict):
        return {escape_lone_surrogates(k): escape_lone_surrogates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [escape_lone_surrogates(v) for v in value]
    if isinstance(value, tuple):
        return tuple(escape_lone_surrogates(v) for v in value)
    if isinstance(value, set | frozenset):
        return {escape_lone_surrogates(v) for v in value}
    return value


def dump_json(record: BaseModel, *, indent: int | None = None) -> str:
    """``record.model_dump_json(indent=indent)``; a record holding a lone surrogate is written with each one
    escaped (:func:`escape_lone_surrogates`) instead of raising (pydantic cannot encode it as UTF-8)."""
    try:
        return record.model_dump_json(indent=indent)
    except PydanticSerializationError:
        value = escape_lone_surrogates(record.model_dump(mode="python"))
        return to_json(value, indent=indent).decode("utf-8")


def json_text(value: Any, **kwargs: Any) -> str:
    """``json.dumps(value, ensure_ascii=False, **kwargs)`` that any UTF-8 writer accepts: every lone
    surrogate in a string is written as its visible escape (:func:`escape_lone_surrogates`), so reading the
    line back gives plain text, not the surrogate again."""
    text = json.dumps(value, ensure_ascii=False, **kwargs)
    if not has_lone_surrogate(text):
        return text
    text = json.dumps(escape_lone_surrogates(value), ensure_ascii=False, **kwargs)
    # What ``default`` made of an object may still hold one: as a JSON escape, the text is then still JSON.
    return escape_lone_surrogates(text)


def json_bytes(value: Any, **kwargs: Any) -> bytes:
    """:func:`json_text` as UTF-8 (the common case, text with no lone surrogate, encoded once)."""
    text = json.dumps(value, ensure_ascii=False, **kwargs)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return json_text(value, **kwargs).encode("utf-8")


__all__ = [
    "LONE_SURROGATE",
    "REPLACEMENT",
    "dump_json",
    "escape_lone_surrogates",
    "first_lone_surrogate",
    "has_lone_surrogate",
    "json_bytes",
    "json_text",
    "replace_lone_surrogates",
]
