"""The one reader of proxy logs: the trusted file, its entries' roles, and the published pending walk.

Richness (:mod:`shoparena.arena.richness`), the corpus's structural evidence
(:mod:`shoparena.arena.evidence`, :mod:`shoparena.arena.episodes`), the nonce authority
(:mod:`shoparena.arena.nonce`) and the proxy itself all take from here:

- :func:`read_trusted_log` / :func:`append_entry`: the file ``proxy/<agent>/<problem>.jsonl``, through
  :mod:`shoparena.jsonl` and :class:`~shoparena.records.proxy_log.ProxyLogEntry`;
- :func:`catalogue_tool`, :func:`is_inference`, :func:`is_model_reply`: what an entry is;
- :func:`parse_response_tool_calls`: the one parser of the tool calls in a chat-completion response
  (native ``tool_calls``, then ``<tool_call>`` blocks as :mod:`shoparena.formats.tool_blocks` reads them);
  :func:`requested_tool_names` on an entry;
- :func:`pending_target_walk`: published Variant A (distillation spec §2).

Every function here takes typed entries; raw dicts (agent-written ``proxy_calls``) go through
:func:`shoparena.records.proxy_log.proxy_entries` first.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from shoparena.formats.tool_blocks import block_call, tool_call_blocks
from shoparena.jsonl import append_line, read_jsonl_dicts
from shoparena.records.proxy_log import ProxyLogEntry, proxy_entries
from shoparena.records.tools import CATALOGUE_TOOLS

SEARCH_PREFIX = "/search/"
INFERENCE_PREFIX = "/inference/"
INFERENCE_PATH = "/inference/chat/completions"


@dataclass(slots=True)
class ParsedToolCall:
    """A tool call found in a model response.

    Attributes:
        call_id: Native ``tool_calls[].id``, or ``xml_<choice>_<block>`` (``_<k>`` appended per item when a
            block holds a JSON list).
        name: Tool name.
        arguments: The raw arguments string whose SHA-256 a nonce signs (native: verbatim; XML: ``json.dumps``
            of the call's ``parameters``/``arguments`` object, published in ``parsed_tool_calls``).
    """

    call_id: str
    name: str
    arguments: str


def _xml_calls(content: str, choice: int) -> list[ParsedToolCall]:
    calls: list[ParsedToolCall] = []
    for block in tool_call_blocks(content):
        for k, item in enumerate(block.items or ()):  # unparseable blocks are skipped, as published
            call = block_call(item)
            if call is None:
                continue
            name, args = call
            raw = args if isinstance(args, str) else json.dumps(args)
            call_id = f"xml_{choice}_{block.index}" + (f"_{k}" if block.listed else "")
            calls.append(ParsedToolCall(call_id=call_id, name=name, arguments=raw))
    return calls


def parse_response_tool_calls(response: Any) -> list[ParsedToolCall]:
    """Every tool call of a chat-completion response: per choice, native calls first, then XML blocks.

    Never raises on what a model or an agent wrote: anything not shaped like a response gives no calls.
    """
    calls: list[ParsedToolCall] = []
    choices = response.get("choices") if isinstance(response, dict) else None
    for choice_no, choice in enumerate(choices if isinstance(choices, list) else []):
        message = choice.get("message") if isinstance(choice, dict) else None
        if not isinstance(message, dict):
            continue
        natives = message.get("tool_calls")
        for native in natives if isinstance(natives, list) else []:
            function = native.get("function") if isinstance(native, dict) else None
            if not isinstance(function, dict) or not isinstance(function.get("name"), str):
                continue
            raw = function.get("arguments", "")
            raw = raw if isinstance(raw, str) else json.dumps(raw)
            calls.append(
                ParsedToolCall(call_id=str(native.get("id", "")), name=function["name"], arguments=raw)
            )
        content = message.get("content")
        if isinstance(content, str):
            calls.extend(_xml_calls(content, choice_no))
    return calls


def catalogue_tool(entry: ProxyLogEntry) -> str | None:
    """The catalogue tool a summary entry dispatched, or None (inference, local tools, other paths)."""
    if not entry.path.startswith(SEARCH_PREFIX):
        return None
    tool = entry.path[len(SEARCH_PREFIX) :]
    return tool if tool in CATALOGUE_TOOLS else None


def is_inference(entry: ProxyLogEntry) -> bool:
    """Any call on the inference routes, answered or not (the published walk's "inference entry")."""
    return entry.path.startswith(INFERENCE_PREFIX)


def is_chat_call(entry: ProxyLogEntry) -> bool:
    """A chat-completion call, answered or not (what the runner counts as an inference call)."""
    return entry.path == INFERENCE_PATH


def is_model_reply(entry: ProxyLogEntry) -> bool:
    """A chat-completion call the backend answered (HTTP 200)."""
    return is_chat_call(entry) and entry.status_code == 200


def requested_tool_names(entry: ProxyLogEntry) -> list[str]:
    """Tool names an inference entry's response requested, in order.

    From the logged response when it is there; else the proxy's ``parsed_tool_names`` (kept when the
    response was truncated out of the log: the arena spec's answer to Variant A's truncation pitfall).
    """
    response = entry.response
    if isinstance(response, dict) and isinstance(response.get("choices"), list):
        return [call.name for call in parse_response_tool_calls(response)]
    return list(entry.parsed_tool_names or [])


class PendingWalk(NamedTuple):
    """Published Variant A over a log: the share matched, a flag per catalogue dispatch, inference calls."""

    richness: float
    matched: list[bool]
    inference: int


def pending_target_walk(steps: Iterable[Iterable[ProxyLogEntry]]) -> PendingWalk:
    """Variant A over per-step entry lists (the pending list starts empty at every step).

    At an inference entry the pending list is replaced by the tool names it requested; a catalogue
    dispatch matches when it equals the head, and the head is popped either way. A trusted log is one
    step (the list is replaced at every inference entry anyway).
    """
    matched: list[bool] = []
    inference = 0
    for entries in steps:
        pending: list[str] = []
        for entry in entries:
            if not entry.is_summary:
                continue
            if is_inference(entry):
                inference += 1
                pending = requested_tool_names(entry)
                continue
            tool = catalogue_tool(entry)
            if tool is None:
                continue
            matched.append(bool(pending) and pending[0] == tool)
            if pending:
                pending.pop(0)
    total = len(matched)
    return PendingWalk(round(sum(matched) / total, 4) if total else 0.0, matched, inference)


def llm_requested(entries: Iterable[ProxyLogEntry], tool: str) -> bool:
    """Whether any inference response in the log requested ``tool`` (e.g. the final recommend_product)."""
    return any(e.is_summary and is_inference(e) and tool in requested_tool_names(e) for e in entries)


def summaries(entries: Sequence[ProxyLogEntry]) -> list[ProxyLogEntry]:
    """The summary entries of a log (the ``kind`` rule of :mod:`shoparena.records.proxy_log`)."""
    return [e for e in entries if e.is_summary]


def read_trusted_log(path: str | Path) -> list[ProxyLogEntry]:
    """The summary entries of one problem's trusted log (missing file → []; damaged lines skipped, logged)."""
    return summaries(proxy_entries(read_jsonl_dicts(path)))


def append_entry(path: str | Path, entry: ProxyLogEntry) -> None:
    """Append one entry to a proxy log, unsynced (callers serialise concurrent writers to one file)."""
    append_line(path, entry.to_line(), fsync=False)


__all__ = [
    "INFERENCE_PATH",
    "INFERENCE_PREFIX",
    "SEARCH_PREFIX",
    "ParsedToolCall",
    "PendingWalk",
    "append_entry",
    "catalogue_tool",
    "is_chat_call",
    "is_inference",
    "is_model_reply",
    "llm_requested",
    "parse_response_tool_calls",
    "pending_target_walk",
    "read_trusted_log",
    "requested_tool_names",
    "summaries",
]
