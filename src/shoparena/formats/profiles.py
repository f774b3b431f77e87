"""Render profiles: the one home of the text a chat policy sees (system turn, tool schemas, tool results).

A profile maps the canonical OpenAI chat of an episode (``trajectory_to_chat``: system, user query, assistant
turns with ``tool_calls``, one ``tool`` turn per result, results as JSON text) to the messages and tool list
given to a chat template. Every consumer renders through :func:`render_chat`: the corpus views, ``eval run``,
online GRPO in ``ShopEnv`` and the arena's agentic miner, so a student sees at evaluation exactly the text of
the rows it was trained on (same state, same text).

- ``upstream``: the messages as they are (ShoppingBench's tools, full JSON results). The GPU presets and the
  paper configuration use it.
- ``compact``: for small students. A fixed terse system turn that names the tools (no JSON schemas); search
  results as one line per product, top :data:`COMPACT_TOP` only; view results as options and attributes only;
  short acknowledgements for actions. Products and shops are per-episode handles that the environment maps
  back to ids (:func:`resolve_arguments`), so a student copies a handle instead of a ten-digit id: a product
  is named by where it was listed (``P2.1``: first line of the episode's second search; a product listed twice
  has two handles, both valid), so the top hit of every search has the same shape whatever came before it;
  shops are ``S1``, ``S2`` by first appearance (the same shop keeps its handle across lists). The request's
  items are handles too (``U1``, ``U2``, shown in front of each line of the user turn, where an inline list
  "(1) ... (2) ..." or "First, ... Next, ... Lastly, ..." is laid out one item per line): a search whose ``q``
  is such an item as written (without its list marker, at most :data:`LINE_CHARS` characters) is rendered as
  its handle and resolved back to its text, so a student names the item instead of copying twenty words (a
  2-layer student does not learn verbatim copying in minutes: docs/fidelity.md, pilot table). Any other ``q``
  stays free text. Default arguments (``page`` 1, ``max_results`` 10) are left out and filled back in.
  A search of a request line ends with a cursor, the line after it as the user turn shows it (its first
  :data:`CURSOR_WORDS` words, ``next line: U4 | (3) a steel mug``, or ``next line: none`` after the last), so
  whether a list goes on is read next to the decision rather than found two hops back in the user turn. It
  copies the request; it never says whether that line is an item (docs/training.md, "The cursor").

Trajectories always store real ids and full results; a profile is a view of them, never a change.

This module is also the one home of request-item splitting: :func:`listed_items` (the lines a list marker was
taken from: ``- ``/``* `` bullets, a run of numbered lines without backticks, ``(n)``, ordinals, and a first
sentence before ordinals that is not a lead-in) are the planner's items (``agents.query_parser``) as well as
the handles :func:`listed_lines` names.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator

from shoparena.formats.native import text_to_result
from shoparena.records.render import RENDER_STAMP_NAME, RenderStamp


class RenderProfile(StrEnum):
    """What a chat policy sees: ``upstream`` (ShoppingBench's tools and full JSON results) or ``compact``
    (request-line, product and shop handles). A ``str``: configs, stamps and reports store the plain value."""

    UPSTREAM = "upstream"
    COMPACT = "compact"


PROFILES = tuple(profile.value for profile in RenderProfile)
#: The profile of a corpus, checkpoint or config that names none (upstream's text). A plain ``str`` value,
#: so every file that records it stays as it was.
DEFAULT_PROFILE: str = RenderProfile.UPSTREAM.value
#: Search results a compact render shows per page (the decisive teacher weighs the same number).
COMPACT_TOP = 5
_COMPACT_ATTRS = 10
_COMPACT_WEB_PAGES = 4
_COMPACT_WEB_CHARS = 240
_HANDLE_RE = re.compile(r"^(?:P\d+\.\d+|S\d+)$")
_LINE_HANDLE_RE = re.compile(r"^U(\d+)$")
#: A web request's catalogue search: the brand a page names, then a request line (``W1 U1``).
_PAGE_LINE_RE = re.compile(r"^W(\d+) U(\d+)$")
#: How a knowledge page names its brand (the bank's pages and the catalogue-derived ones).
_PAGE_BRAND_RE = re.compile(r"Brand: ([^.]+)\.")
_BULLET_RE = re.compile(r"^(?:[-*\u2022])\s+")
_NUMBER_MARK_RE = re.compile(r"^\d+[.)]\s+")
_PAREN_MARK_RE = re.compile(r"\(\d\)\s*")
_ORDINAL_MARK_RE = re.compile(
    r"(?:(?<=[.!?;:])\s+|^)(?:First(?:ly)?|Second(?:ly)?|Third(?:ly)?|Fourth(?:ly)?|Fifth|Next|Then|Also|"
    r"Additionally|Finally|Lastly|And finally),\s*"
)
# A list's lead-in ("I'm looking for a shop that offers these:") names no item; any other head is the first.
_LEAD_IN_RE = re.compile(
    r"\b(?:shops?|stores?|sellers?|recommend|suggestions?|help|thanks|thank you|following|below|these)\b",
    re.IGNORECASE,
)
_SENTENCE_END_RE = re.compile(r"[.!?]\s+(?=[A-Z])")
#: Bumped whenever the compact rendering changes in code (not only in its fixed text), so hashes change too.
COMPACT_VERSION = 8
#: Words of the next request line that a search's cursor shows (its list marker and the item's first words).
CURSOR_WORDS = 4
#: A line handle stands for at most this many characters of its line (a search query's length cap).
LINE_CHARS = 300
_TEXT_ARGS = {"find_product": "q", "web_search": "q"}
_ID_ARGS = {"product_ids": "P", "shop_id": "S"}
_DEFAULT_ARGS = {"find_product": {"page": 1}, "web_search": {"max_results": 10}}

COMPACT_TOOLS = {
    "find_product": "find_product(q, price='lo-hi', service='official|freeShipping|COD|flashsale', "
    "sort='priceasc|pricedesc|order', shop_id, page)",
    "view_product_information": "view_product_information(product_ids)",
    "recommend_product": "recommend_product(product_ids in the order asked)",
    "terminate": "terminate(status='success|failure')",
    "web_search": "web_search(q)",
}
COMPACT_SYSTEM = (
    "You are a shopping assistant. Request lines are U1, U2, ..., products P<search>.<line> (P2.1: first "
    "line of the second search), shops S1, S2, ... and web pages W1, W2, ... (a search for W1 U1: the "
    "brand page W1 names, then line U1); call tools as <tool_call> JSON. Tools: "
)


class RenderProfileError(ValueError):
    """An unknown profile, or a corpus/policy profile mismatch."""


def check_profile(name: str) -> str:
    """``name`` if it is a known profile; raises :class:`RenderProfileError` naming the known ones."""
    if name not in PROFILES:
        raise RenderProfileError(f"unknown render profile {name!r}; known: {', '.join(PROFILES)}")
    return name


#: A config field holding a profile name, validated on load (pydantic ``Annotated`` type).
ProfileName = Annotated[str, AfterValidator(lambda value: check_profile(value))]


def profile_hash(name: str) -> str:
    """A short fingerprint of a profile's fixed text (recorded beside its name in cards and manifests)."""
    fixed = json.dumps(
        [
            name,
            COMPACT_VERSION,
            COMPACT_SYSTEM,
            COMPACT_TOOLS,
            COMPACT_TOP,
            _COMPACT_ATTRS,
            _COMPACT_WEB_PAGES,
            LINE_CHARS,
            CURSOR_WORDS,
        ]
        if name == RenderProfile.COMPACT
        else [name],
        sort_keys=True,
    )
    return hashlib.sha256(fixed.encode()).hexdigest()[:16]


def _is_lead_in(head: str) -> bool:
    """Whether the text before an ordinal list's first marker introduces the list rather than being its
    first item ("Find a shop that sells these:" vs "I need a steel mug. Also, a plate. Lastly, a bowl.")."""
    return head.endswith((":", "?")) or len(head.split()) <= 6 or bool(_LEAD_IN_RE.search(head))


def _enumeration(line: str) -> list[tuple[str, str, bool]] | None:
    """An inline list ("(1) X; (2) Y", "First, X. Second, Y.", "I need X. Also, Y. Lastly, Z.") split one
    item per line as (shown text, value, whether it is a listed item), or None."""
    for marker in (_PAREN_MARK_RE, _ORDINAL_MARK_RE):
        marks = list(marker.finditer(line))
        if len(marks) < 2:
            continue
        head = line[: marks[0].start()].strip()
        # "I need X. Also, Y. Lastly, Z.": a sentence before an ordinal list is its first item, unless it
        # introduces the list; a head before "(1)" is always a lead-in.
        first = marker is _ORDINAL_MARK_RE and not _is_lead_in(head)
        out = [(head, head, first)] if head else []
        for k, mark in enumerate(marks):
            end = marks[k + 1].start() if k + 1 < len(marks) else len(line)
            item = line[mark.end() : end]
            tail = ""
            if k + 1 == len(marks):  # a closing sentence ("They must all come from one shop.") is a line
                split = _SENTENCE_END_RE.search(item.strip())
                if split:
                    item, tail = item.strip()[: split.start() + 1], item.strip()[split.end() :]
                    out.append((line[mark.start() : mark.end()] + item, item.strip(" ;,"), True))
                    out.append((tail, tail, False))
                    continue
            out.append((line[mark.start() : end].strip(), item.strip(" ;,."), True))
        return out
    return None


def _numbered_items(lines: Sequence[str]) -> set[int]:
    """Indices of the numbered lines ("1. X", "2) Y") that list items: runs of two or more in a row with no
    backtick. Template requirement lines and the voucher rules of spec 6.3 quote their values in backticks."""
    items: set[int] = set()
    run: list[int] = []
    for k, line in enumerate([*lines, ""]):
        if _NUMBER_MARK_RE.match(line) and "`" not in line:
            run.append(k)
            continue
        if len(run) >= 2:
            items.update(run)
        run = []
    return items


def _request_lines(request: str) -> Iterator[tuple[str, str, bool]]:
    """Each handle's line as (shown text, value, whether a list marker was taken from it)."""
    lines = [raw.strip() for raw in request.splitlines() if raw.strip()]
    numbered = _numbered_items(lines)
    for k, line in enumerate(lines):
        if k in numbered:
            yield line, _NUMBER_MARK_RE.sub("", line), True
            continue
        enumerated = _enumeration(line)
        if enumerated:
            yield from enumerated
        else:
            yield line, _BULLET_RE.sub("", line), bool(_BULLET_RE.match(line))


def request_items(request: str) -> list[tuple[str, str]]:
    """The request as the compact profile lists it, one ``(shown text, value)`` per handle ``U1``, ``U2``...:
    each non-empty line, with an inline list split one item per line. The value (what the handle stands for)
    is the text without its list marker (``- ``, ``2. ``, ``(2) ``, ``Second, ``; an inline item also without
    its closing ``;``/``.``), cut at :data:`LINE_CHARS`."""
    return [(shown, value[:LINE_CHARS]) for shown, value, _ in _request_lines(request)]


def listed_items(request: str) -> list[str]:
    """The request's listed items, in order: the lines :func:`listed_lines` names, without list marker and not
    cut (a handle stands for the first :data:`LINE_CHARS` characters). The one split of a request into
    items: the compact profile's handles and the planner's items (``agents.query_parser``) both read it."""
    return [value for _, value, marked in _request_lines(request) if marked]


def listed_lines(request: str) -> list[str]:
    """The handles of the request's listed items (:func:`listed_items`), or ``["U1"]`` for a request that
    lists nothing: what a regular teacher searches, one line per item."""
    listed = [f"U{n}" for n, (_, _, marked) in enumerate(_request_lines(request), start=1) if marked]
    return listed or ["U1"]


#: How a compact render shows the request lines an assistant turn's own words list (:func:`plan_text`).
PLAN_PREFIX = "items: "


def plan_text(handles: Sequence[str]) -> str:
    """An item list as the compact profile shows it: ``items: U3,U4`` (the words of a planning turn: a
    compact student writes the same text that it is shown)."""
    return PLAN_PREFIX + ",".join(handles)


def listed_handles(text: str, table: HandleTable) -> list[str]:
    """The request-line handles that an assistant's words consist of, or ``[]`` when they say anything else.

    Each non-empty line is either a request line's value as written (a teacher lists the items still to
    search, one per line) or a comma-separated list of handles, optionally after ``items:`` (what a compact
    policy writes back). Anything else (free reasoning, a handle the request does not have) shows nothing:
    the profile relabels a plan the policy wrote; it never writes one.
    """
    handles: list[str] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        named = table.line_handle(line)
        if named:
            handles.append(named)
            continue
        tokens = [t.strip() for t in line.removeprefix(PLAN_PREFIX.strip()).split(",")]
        lines = len(table.lines)
        if not all((m := _LINE_HANDLE_RE.match(t)) and 1 <= int(m.group(1)) <= lines for t in tokens):
            return []
        handles += tokens
    return handles


def compact_request(request: str) -> str:
    """The user turn as the compact profile shows it: each listed item after its handle (``U1 | ...``)."""
    return "\n".join(f"U{n} | {shown}" for n, (shown, _) in enumerate(request_items(request), start=1))


@dataclass(slots=True)
class HandleTable:
    """Per-episode handles: product and shop ids numbered by first appearance in what the policy was shown,
    and the request's lines (``U1``...) once the user turn has been seen."""

    ids: dict[str, str] = field(default_factory=dict)  # real id -> handle (a product's first)
    handles: dict[str, str] = field(default_factory=dict)  # handle -> real id
    lines: list[str] = field(default_factory=list)  # line values, U1 first
    shown: list[str] = field(default_factory=list)  # each line as the user turn shows it
    pages: list[str] = field(default_factory=list)  # brand named by each page of the last web search
    searches: int = 0  # search results shown so far (the <search> of product handles)
    unlisted: int = 0  # products named before any search listed them (P0.<n>)

    def set_request(self, request: str) -> None:
        items = request_items(request)
        self.lines = [value for _, value in items]
        self.shown = [shown for shown, _ in items]

    def line_handle(self, text: str) -> str | None:
        """``U<n>`` when ``text`` is the value of request line n (the first such line), else None."""
        for n, value in enumerate(self.lines, start=1):
            if value and value == text:
                return f"U{n}"
        return None

    def page_line_handle(self, text: str) -> str | None:
        """``W<k> U<n>`` when ``text`` is the brand page k names, a space and request line n, else None."""
        for k, brand in enumerate(self.pages, start=1):
            if brand and text.startswith(f"{brand} "):
                line = self.line_handle(text[len(brand) + 1 :])
                if line:
                    return f"W{k} {line}"
        return None

    def named_line(self, query: str) -> str | None:
        """The line handle (``U<n>``, ``W<k> U<n>``) that a search's ``q`` names: the line's text (after a
        page's brand) or the handle itself, as a compact policy writes it; None for anything else."""
        named = self.line_handle(query) or self.page_line_handle(query)
        if not named and self.resolve_line(query) != query:
            named = query
        return named

    def resolve_line(self, text: str) -> str:
        """The line value behind a ``U<n>`` handle (``W<k> U<n>``: page k's brand, then the line); anything
        else is returned as given."""
        m = _LINE_HANDLE_RE.match(text.strip())
        if m and 1 <= int(m.group(1)) <= len(self.lines):
            return self.lines[int(m.group(1)) - 1]
        m = _PAGE_LINE_RE.match(text.strip())
        if m and 1 <= int(m.group(1)) <= len(self.pages) and 1 <= int(m.group(2)) <= len(self.lines):
            brand = self.pages[int(m.group(1)) - 1]
            if brand:
                return f"{brand} {self.lines[int(m.group(2)) - 1]}"
        return text

    def handle(self, kind: str, real: Any) -> str:
        """The handle of a shop (``S<n>`` by first appearance) or product (its first ``P<search>.<line>``; a
        product never listed by a search is ``P0.<n>``)."""
        key = f"{kind}:{real}"
        if key not in self.ids:
            if kind == "P":
                self.unlisted += 1
                name = f"P0.{self.unlisted}"
            else:
                name = f"{kind}{sum(1 for k in self.ids if k.startswith(f'{kind}:')) + 1}"
            self.ids[key] = name
            self.handles[name] = str(real)
        return self.ids[key]

    def listed(self, product_ids: Sequence[Any]) -> list[str]:
        """Handles of one search's result lines, in order: ``P<search>.1``, ``P<search>.2``... (a product
        listed again gets another handle for the new line; every handle resolves to its id)."""
        self.searches += 1
        names = []
        for line, real in enumerate(product_ids, start=1):
            name = f"P{self.searches}.{line}"
            self.handles[name] = str(real)
            self.ids.setdefault(f"P:{real}", name)
            names.append(name)
        return names

    def resolve(self, token: str) -> str:
        """The real id behind a handle; anything that is not a known handle is returned as given."""
        return self.handles.get(token.strip(), token.strip())


def _num(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def search_cursor(query: Any, table: HandleTable) -> str:
    """The line after the request line a search's ``q`` names, as the user turn shows it: ``next line:
    U<n+1> | <first words>``, or ``next line: none`` after the last; "" when ``q`` names no request line (free
    text). ``q`` is the line's text (with a page's brand in front) or its handle (``U<n>``, ``W<k> U<n>``): a
    replayed policy's call keeps the handle it wrote."""
    named = table.named_line(query) if isinstance(query, str) else None
    if not named:
        return ""
    line = int(named.rsplit("U", 1)[1])
    if line >= len(table.shown):
        return "next line: none"
    return f"next line: U{line + 1} | {' '.join(table.shown[line].split()[:CURSOR_WORDS])}"


def _search_lines(result: list[Any], table: HandleTable) -> str:
    hits = [hit for hit in result[:COMPACT_TOP] if isinstance(hit, dict) and "product_id" in hit]
    lines = []
    for pid, hit in zip(table.listed([hit["product_id"] for hit in hits]), hits, strict=True):
        shop = table.handle("S", hit["shop_id"]) if hit.get("shop_id") else "-"
        services = ",".join(str(s) for s in hit.get("service") or []) or "-"
        lines.append(f"{pid} {shop} | {hit.get('title', '')} | {_num(hit.get('price', ''))} | {services}")
    return "\n".join(lines) if lines else "no results"


def _values(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return str(value)


def _view_lines(result: list[Any], table: HandleTable) -> str:
    lines = []
    for view in result:
        if not isinstance(view, dict) or "product_id" not in view:
            continue
        pid = table.handle("P", view["product_id"])
        options: dict[str, list[str]] = {}
        skus = view.get("sku_options")
        for sku in skus.values() if isinstance(skus, dict) else []:
            for key, value in sku.items() if isinstance(sku, dict) else []:
                seen = options.setdefault(str(key), [])
                if str(value) not in seen:
                    seen.append(str(value))
        attrs = view.get("attributes") if isinstance(view.get("attributes"), dict) else {}
        parts = [f"{k} {', '.join(v)}" for k, v in options.items()]
        opt = "; ".join(parts) or "-"
        att = "; ".join(f"{k} {_values(v)}" for k, v in list(attrs.items())[:_COMPACT_ATTRS]) or "-"
        lines.append(f"{pid} | options: {opt} | attributes: {att}")
    return "\n".join(lines) if lines else "no products"


def _web_lines(result: Any, table: HandleTable) -> str:
    pages = result.get("observation") if isinstance(result, dict) else None
    if not isinstance(pages, list):
        return _json(result)
    shown = [str(p.get("content", "")) for p in pages[:_COMPACT_WEB_PAGES] if isinstance(p, dict)]
    # Each page's handle stands for the brand it names, as a product handle stands for its id.
    table.pages = [m.group(1).strip() if (m := _PAGE_BRAND_RE.search(text)) else "" for text in shown]
    lines = [f"W{k} {text[:_COMPACT_WEB_CHARS]}" for k, text in enumerate(shown, start=1)]
    return "\n".join(lines) if lines else "no pages"


def _json(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def compact_result(tool: str, content: Any, table: HandleTable, query: Any = None) -> str:
    """One tool result as the compact profile shows it (errors and unknown shapes pass through as text).

    ``query`` is the ``q`` the call sent (a line's text, or the handle a compact policy wrote): a search of a
    request line ends with its cursor (:func:`search_cursor`), whether it listed products, none or an error.
    """
    shown = _compact_result(tool, content, table)
    cursor = search_cursor(query, table) if tool == "find_product" else ""
    return f"{shown}\n{cursor}" if cursor else shown


def _compact_result(tool: str, content: Any, table: HandleTable) -> str:
    result = text_to_result(content)
    if isinstance(result, str):
        if tool == "recommend_product" and result.startswith("Having recommended"):
            return "recommended"
        if tool == "terminate" and result.startswith("The interaction has been completed"):
            return "done"
        return result
    if tool == "find_product" and isinstance(result, list):
        return _search_lines(result, table)
    if tool == "view_product_information" and isinstance(result, list):
        return _view_lines(result, table)
    if tool == "web_search":
        return _web_lines(result, table)
    return _json(result)


def _arguments(raw: Any) -> dict[str, Any] | None:
    if isinstance(raw, dict):
        return dict(raw)
    if isinstance(raw, str):
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            return None
        return value if isinstance(value, dict) else None
    return None


def compact_arguments(name: str, arguments: Mapping[str, Any], table: HandleTable) -> dict[str, Any]:
    """A call's arguments with ids and request lines as handles and default values left out (the student's
    target text)."""
    out: dict[str, Any] = {}
    defaults = _DEFAULT_ARGS.get(name, {})
    for key, value in arguments.items():
        if key in defaults and value == defaults[key]:
            continue
        kind = _ID_ARGS.get(key)
        if kind and isinstance(value, str) and value.strip():
            value = ",".join(table.handle(kind, v.strip()) for v in value.split(",") if v.strip())
        elif key == _TEXT_ARGS.get(name) and isinstance(value, str):
            value = table.named_line(value) or value
        out[key] = value
    return out


def resolve_arguments(name: str, arguments: Mapping[str, Any], table: HandleTable) -> dict[str, Any]:
    """Inverse of :func:`compact_arguments`: handles back to ids and lines, left-out defaults filled in."""
    out = dict(arguments)
    text_key = _TEXT_ARGS.get(name)
    if text_key and isinstance(out.get(text_key), str):
        out[text_key] = table.resolve_line(out[text_key])
    for key, kind in _ID_ARGS.items():
        value = out.get(key)
        if isinstance(value, str):
            out[key] = ",".join(
                table.resolve(v) if _HANDLE_RE.match(v.strip() or "-") and v.strip()[0] == kind else v.strip()
                for v in value.split(",")
                if v.strip()
            )
    for key, value in _DEFAULT_ARGS.get(name, {}).items():
        out.setdefault(key, value)
    return out


def _function(call: Mapping[str, Any]) -> Mapping[str, Any]:
    """The ``{name, arguments}`` part of a call (OpenAI's nested ``function``, or the call itself)."""
    return call["function"] if isinstance(call.get("function"), dict) else call


def _call_name(call: Mapping[str, Any]) -> str:
    return str(_function(call).get("name", ""))


def _call_query(call: Mapping[str, Any]) -> Any:
    """A call's ``q`` as sent (None when it has none or its arguments do not parse)."""
    return (_arguments(_function(call).get("arguments")) or {}).get("q")


def _compact_call(call: Mapping[str, Any], table: HandleTable) -> dict[str, Any]:
    fn = _function(call)
    name = str(fn.get("name", ""))
    args = _arguments(fn.get("arguments"))
    if args is None:  # unparseable arguments stay as the model wrote them
        return {**call}
    text = json.dumps(compact_arguments(name, args, table), ensure_ascii=False)
    return {"id": call.get("id"), "type": "function", "function": {"name": name, "arguments": text}}


def template_kwargs(render_profile: str, thinking: bool) -> dict[str, Any]:
    """Chat-template switches of a generation request under ``profile``.

    ``upstream`` passes Qwen3's ``enable_thinking``; ``compact`` has no reasoning channel and passes nothing,
    so the generation prompt is token for token the prefix its training rows were rendered with (a template
    that answers ``enable_thinking=False`` with an empty think block would otherwise prompt the student
    with text it never saw).
    """
    check_profile(render_profile)
    return {"enable_thinking": thinking} if render_profile == RenderProfile.UPSTREAM else {}


def compact_system(tool_names: Iterable[str]) -> str:
    names = [n for n in tool_names if n in COMPACT_TOOLS] or list(COMPACT_TOOLS)
    return COMPACT_SYSTEM + "; ".join(COMPACT_TOOLS[n] for n in names) + "."


def _tool_names(tools: Sequence[Any] | None) -> list[str]:
    names = []
    for tool in tools or []:
        fn = tool.get("function", tool) if isinstance(tool, dict) else tool
        name = fn.get("name") if isinstance(fn, dict) else getattr(fn, "name", None)
        if name:
            names.append(str(name))
    return names


def render_chat(
    messages: Sequence[Mapping[str, Any]], tools: Sequence[Any] | None, render_profile: str
) -> tuple[list[dict[str, Any]], list[Any] | None]:
    """The messages and template tools a policy under ``profile`` sees for the canonical chat ``messages``.

    Extra keys of a message (``trainable``) are kept, so corpus rows keep their loss flags.
    """
    check_profile(render_profile)
    if render_profile == RenderProfile.UPSTREAM:
        return [dict(m) for m in messages], list(tools) if tools is not None else None
    table = HandleTable()
    out: list[dict[str, Any]] = [{"role": "system", "content": compact_system(_tool_names(tools))}]
    pending: dict[str, Mapping[str, Any]] = {}  # call id -> the call its tool message answers
    order: list[str] = []
    for message in messages:
        role = message.get("role")
        if role == "system":
            continue
        m = dict(message)
        if role == "user" and not table.lines:
            table.set_request(str(m.get("content") or ""))
            m["content"] = compact_request(str(m.get("content") or ""))
        if role == "assistant":
            calls = m.get("tool_calls") or []
            if calls:  # of the turn's own words, only an item list it wrote (as handles)
                words = f"{m.get('reasoning_content') or ''}\n{m.get('content') or ''}"
                listed = listed_handles(words, table)
                m["content"] = plan_text(listed) if listed else ""
            else:
                m["content"] = m.get("content") or ""
            m.pop("reasoning_content", None)
            m["tool_calls"] = [_compact_call(c, table) for c in calls]
            for c in calls:
                pending[str(c.get("id"))] = c
                order.append(_call_name(c))
        elif role == "tool":
            call = pending.get(str(m.get("tool_call_id")))
            name = (_call_name(call) if call else "") or (order[0] if order else "")
            if order:
                order.pop(0)
            query = _call_query(call) if call else None
            m["content"] = compact_result(name, m.get("content"), table, query)
        out.append(m)
    return out, None


def handle_table(messages: Sequence[Mapping[str, Any]], tools: Sequence[Any] | None = None) -> HandleTable:
    """The handles a compact policy has been shown so far (what its next call's handles refer to)."""
    table = HandleTable()
    pending: dict[str, str] = {}
    for message in messages:
        if message.get("role") == "user" and not table.lines:
            table.set_request(str(message.get("content") or ""))
        if message.get("role") == "assistant":
            for c in message.get("tool_calls") or []:
                pending[str(c.get("id"))] = _call_name(c)
                _compact_call(c, table)
        elif message.get("role") == "tool":
            compact_result(pending.get(str(message.get("tool_call_id")), ""), message.get("content"), table)
    return table


def template_hash(chat_template: str | None) -> str:
    """sha256 prefix of a chat template's source ("" for none)."""
    return hashlib.sha256(chat_template.encode()).hexdigest()[:16] if chat_template else ""


def write_render_stamp(folder: str | Path, render_profile: str, chat_template: str | None) -> RenderStamp:
    """Record ``profile`` and the template's hash in ``folder`` (a checkpoint or a corpus)."""
    stamp = RenderStamp(
        profile=render_profile,
        profile_hash=profile_hash(render_profile),
        template_hash=template_hash(chat_template),
    )
    (Path(folder) / RENDER_STAMP_NAME).write_text(stamp.model_dump_json(indent=2) + "\n", encoding="utf-8")
    return stamp


def read_render_stamp(folder: str | Path) -> RenderStamp | None:
    """The stamp of ``folder``; None when it has none; a damaged one is an error naming the file."""
    path = Path(folder) / RENDER_STAMP_NAME
    if not path.is_file():
        return None
    try:
        return RenderStamp.model_validate_json(path.read_bytes())
    except ValueError as exc:
        raise RenderProfileError(f"{path}: not a render stamp ({str(exc).splitlines()[0]})") from None


__all__ = [
    "COMPACT_TOP",
    "DEFAULT_PROFILE",
    "LINE_CHARS",
    "PROFILES",
    "HandleTable",
    "ProfileName",
    "RenderProfile",
    "RenderProfileError",
    "check_profile",
    "compact_arguments",
    "compact_request",
    "compact_result",
    "handle_table",
    "listed_lines",
    "profile_hash",
    "read_render_stamp",
    "render_chat",
    "request_items",
    "resolve_arguments",
    "search_cursor",
    "template_hash",
    "template_kwargs",
    "write_render_stamp",
]
