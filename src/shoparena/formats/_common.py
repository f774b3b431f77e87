"""Shared helpers of the format adapters: errors, JSON dialects and order-preserving object emission.

Lossless round trips rest on two conventions of the records in :mod:`shoparena.records.trajectory`:
``key_order`` remembers the key order of the object a record was read from, and ``unknown_keys`` keeps raw
values of keys the record does not model (or whose value did not fit a typed field). :func:`emit` rebuilds an
object from both.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

import orjson

from shoparena.records.trajectory import Step, ToolCall


class FormatError(ValueError):
    """A record does not have the shape its format requires.

    Attributes:
        path: Dotted field path inside the record (``dialogue[2].completion``), "" for the record itself.
        line_no: 1-based line number in the source file, when known.
        detail: The problem, without location.
    """

    def __init__(self, path: str, detail: str, *, line_no: int | None = None) -> None:
        self.path = path
        self.detail = detail
        self.line_no = line_no
        where = path or "<record>"
        prefix = f"line {line_no}: " if line_no is not None else ""
        super().__init__(f"{prefix}{where}: {detail}")

    def at_line(self, line_no: int) -> FormatError:
        """The same error located at ``line_no``."""
        return FormatError(self.path, self.detail, line_no=line_no)


class _Missing:
    """Sentinel: the field has no value to write."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


def type_name(value: Any) -> str:
    """JSON-ish type name for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def is_number(value: Any) -> bool:
    """True for JSON numbers (int or float, never bool)."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def ujson_dumps(obj: Any) -> str:
    """Serialise like ``ujson.dumps`` with its defaults: compact, ASCII-escaped, ``/`` written as ``\\/``.

    ShoppingBench writes prompts, history and rollout lines with ujson. A ``/`` can only occur inside JSON
    strings, so escaping it after a compact ASCII dump is exact.

    >>> ujson_dumps({"url": "a/b", "t": "café"})
    '{"url":"a\\\\/b","t":"caf\\\\u00e9"}'
    """
    return _UJSON_ENCODER.encode(obj).replace("/", "\\/")


# What json.dumps(ensure_ascii=True, separators=(",", ":")) builds on every call, built once.
_UJSON_ENCODER = json.JSONEncoder(ensure_ascii=True, separators=(",", ":"))


def oro_dumps(obj: Any) -> str:
    """Serialise like ORO's Python side (``json.dumps`` defaults: ``", "``/``": "`` separators, ASCII)."""
    return json.dumps(obj)


def chat_dumps(obj: Any) -> str:
    """Serialise tool arguments and tool results the way OpenAI-style clients do (UTF-8 kept):
    ``json.dumps(obj, ensure_ascii=False)``.

    Texts are remembered by orjson's dump of the value (a firehose repeats most tool results: the miners of a
    race search alike), so a repeated value costs an orjson dump instead of the stdlib encoder's. Values that
    orjson writes otherwise than ``json`` skip the memo: NaN and infinities (orjson's ``null``), integers
    beyond 64 bits, subclasses of ``str``/``int``/``list``/``dict``, dataclasses and dates (orjson refuses
    those here). A value ``json`` cannot write at all but orjson can (an ``Enum``, a ``UUID``) is written as
    its JSON value.
    """
    try:
        key = orjson.dumps(obj, option=_CHAT_KEY_OPTIONS)
    except TypeError:
        return json.dumps(obj, ensure_ascii=False)
    if b"null" in key:  # None or a NaN / infinity: json writes the latter as NaN / Infinity
        return json.dumps(obj, ensure_ascii=False)
    text = _CHAT_TEXTS.get(key)
    if text is None:
        try:  # the value itself: orjson reads its dump back as the same value, so the text is the same
            text = json.dumps(obj, ensure_ascii=False)
        except TypeError:  # an Enum, a UUID: json writes their JSON value, read back from the dump
            text = json.dumps(orjson.loads(key), ensure_ascii=False)
        if len(_CHAT_TEXTS) >= _CHAT_TEXTS_SIZE:
            _CHAT_TEXTS.clear()
        _CHAT_TEXTS[key] = text
    return text


_CHAT_KEY_OPTIONS = (
    orjson.OPT_PASSTHROUGH_SUBCLASS | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME
)
#: Texts by orjson's dump, at most this many (then the memo starts over): a race's repeats are near each
#: other (64 % of three races' results hit with 1,024 least recently used, the same with this).
_CHAT_TEXTS_SIZE = 4096
_CHAT_TEXTS: dict[bytes, str] = {}


def emit(order: list[str] | None, fields: Iterable[tuple[str, Any, bool, bool]]) -> dict[str, Any]:
    """Build an object from ``(key, value, canonical, force)`` fields, honouring a recorded key order.

    With no recorded order (records built in memory) the keys flagged ``canonical`` are written in field
    order. With one (records read from a file) the recorded keys come first, in their order, followed by keys
    flagged ``force`` (values that would otherwise be lost, e.g. added after reading). A value of
    :data:`MISSING` is never written.
    """
    items = [(k, v, c, f) for k, v, c, f in fields if v is not MISSING]
    if not order:
        return {k: v for k, v, canonical, _ in items if canonical}
    available = {k: v for k, v, _, _ in items}
    out = {k: available[k] for k in order if k in available}
    for k, v, _, force in items:
        if force and k not in out:
            out[k] = v
    return out


def unknown_fields(raw: dict[str, Any]) -> list[tuple[str, Any, bool, bool]]:
    """Fields for raw ``unknown_keys`` entries: always written."""
    return [(k, v, True, True) for k, v in raw.items()]


def known(
    raw: dict[str, Any], key: str, value: Any, *, canonical: bool, force: bool
) -> tuple[str, Any, bool, bool]:
    """A modelled field whose raw override (in ``raw``) wins when present."""
    if key in raw:
        return (key, raw[key], True, True)
    return (key, value, canonical, force)


def tool_call_dict(call: ToolCall, *, with_result: bool, with_id: bool = True) -> dict[str, Any]:
    """The ``{name, parameters, tool_call_id[, result]}`` object of one call, as upstream stores it."""
    raw = call.unknown_keys
    if not raw and not call.key_order:
        # Fast path (records built in memory): what emit() yields for canonical fields, built directly.
        out: dict[str, Any] = {"name": call.name, "parameters": call.parameters}
        if with_id and call.tool_call_id:
            out["tool_call_id"] = call.tool_call_id
        if with_result and call.has_result:
            out["result"] = call.result
        return out
    fields = [
        known(raw, "name", call.name, canonical=True, force=False),
        known(raw, "parameters", call.parameters, canonical=True, force=False),
        (
            known(
                raw,
                "tool_call_id",
                call.tool_call_id,
                canonical=bool(call.tool_call_id),
                force=bool(call.tool_call_id),
            )
            if with_id
            else ("tool_call_id", MISSING, False, False)
        ),
        (
            "result",
            call.result if (with_result and call.has_result) else MISSING,
            True,
            True,
        ),
    ]
    fields += unknown_fields(
        {k: v for k, v in raw.items() if k not in {"name", "parameters", "tool_call_id"}}
    )
    return emit(call.key_order, fields)


def obs_entries(step: Step) -> list[dict[str, Any]]:
    """ShoppingBench ``obs`` list: ``{tool_call_id, results}`` for each call that ran, in call order."""
    return [{"tool_call_id": c.tool_call_id, "results": c.result} for c in step.tool_calls if c.has_result]


def message_dict(step: Step, *, with_results: bool, with_obs: bool) -> dict[str, Any]:
    """The step's ``completion.message`` object: ORO (results inline) or ShoppingBench (``obs`` list) flavour.

    Roles are present only when non-empty (or when the source object had them); raw values kept in
    ``step.unknown_keys["message"]`` win over the parsed ones.
    """
    raw = step.unknown_keys.get("message", {})
    order = step.key_order.get("message")
    calls = [tool_call_dict(c, with_result=with_results) for c in step.tool_calls]
    obs = obs_entries(step) if with_obs else []
    if not raw and not order:
        # Fast path: emit() with no recorded order keeps exactly the non-empty roles, in this order.
        out: dict[str, Any] = {}
        if step.think:
            out["think"] = step.think
        if calls:
            out["tool_call"] = calls
        if obs:
            out["obs"] = obs
        if step.response:
            out["response"] = step.response
        return out
    fields = [
        known(raw, "think", step.think, canonical=bool(step.think), force=bool(step.think)),
        known(raw, "tool_call", calls, canonical=bool(calls), force=bool(calls)),
        known(raw, "obs", obs if with_obs else MISSING, canonical=bool(obs), force=bool(obs)),
        known(raw, "response", step.response, canonical=bool(step.response), force=bool(step.response)),
    ]
    fields += unknown_fields(
        {k: v for k, v in raw.items() if k not in {"think", "tool_call", "obs", "response"}}
    )
    return emit(order, fields)


_INDEX_RE = re.compile(r"\[\d+\]")


def reason_kind(path: str) -> str:
    """Group key for quarantine statistics: the field path with list indices erased."""
    return _INDEX_RE.sub("[]", path) or "<record>"


__all__ = [
    "MISSING",
    "FormatError",
    "chat_dumps",
    "emit",
    "is_number",
    "known",
    "message_dict",
    "obs_entries",
    "oro_dumps",
    "reason_kind",
    "tool_call_dict",
    "type_name",
    "ujson_dumps",
    "unknown_fields",
]
