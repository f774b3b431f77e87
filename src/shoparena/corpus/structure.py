"""Structural evidence of one trajectory: both richness variants, forgery checks, the chat message rule.

Variant B (nonce-stamped) comes from the arena's richness module
(:func:`shoparena.arena.richness.trajectory_richness`, field ``nonce_stamped``);
Variant A (pending-target matching, distillation spec §2) lives here because only the corpus needs it. Both
read *summary* entries of a proxy log; the trusted proxy log is a flat list, so Variant A walks it once (the
pending list is replaced at every inference entry anyway), while sandbox-side ``extra_info.proxy_calls``
are walked step by step with the pending list emptied at each step, as published.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

from shoparena.arena.richness import trajectory_richness
from shoparena.records.tools import CATALOGUE_TOOLS

INFERENCE_PREFIX = "/inference/"
FORGED_NONCE_STATUSES = frozenset({"mismatch", "replayed", "malformed"})
_CALL_BLOCK = re.compile(r"<tool_call>(.*?)</tool_call>", re.DOTALL)


def catalogue_tool(entry: dict[str, Any]) -> str | None:
    """The catalogue tool a summary entry dispatched, or None (inference, local tools, other paths)."""
    path = entry.get("path")
    if not isinstance(path, str) or not path.startswith("/search/"):
        return None
    tool = path[len("/search/") :]
    return tool if tool in CATALOGUE_TOOLS else None


def is_inference(entry: dict[str, Any]) -> bool:
    path = entry.get("path")
    return isinstance(path, str) and path.startswith(INFERENCE_PREFIX)


def _block_names(text: str) -> list[str]:
    names: list[str] = []
    for block in _CALL_BLOCK.findall(text):
        try:
            value = json.loads(block)
        except ValueError:
            continue  # unparseable blocks are skipped, as published
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, dict):
                name = item.get("name") or item.get("tool") or item.get("function")
                if isinstance(name, dict):
                    name = name.get("name")
                if isinstance(name, str):
                    names.append(name)
    return names


def requested_tools(entry: dict[str, Any]) -> list[str]:
    """Tool names an inference entry's response requested: native calls, then ``<tool_call>`` blocks.

    Falls back to the proxy's ``parsed_tool_names`` when the response was truncated out of the log (our
    proxy keeps them: the arena spec's design choice against Variant A's truncation pitfall).
    """
    response = entry.get("response")
    names: list[str] = []
    if isinstance(response, dict) and isinstance(response.get("choices"), list):
        for choice in response["choices"]:
            message = choice.get("message") if isinstance(choice, dict) else None
            if not isinstance(message, dict):
                continue
            for call in message.get("tool_calls") or []:
                function = call.get("function") if isinstance(call, dict) else None
                if isinstance(function, dict) and isinstance(function.get("name"), str):
                    names.append(function["name"])
            if isinstance(message.get("content"), str):
                names.extend(_block_names(message["content"]))
        return names
    parsed = entry.get("parsed_tool_names")
    if isinstance(parsed, list):
        return [n for n in parsed if isinstance(n, str)]
    return names


def pending_target_walk(steps: Iterable[Sequence[dict[str, Any]]]) -> tuple[float, list[bool], int]:
    """Variant A over per-step entry lists: (richness, matched flag per dispatch, inference count)."""
    matched: list[bool] = []
    inference = 0
    for entries in steps:
        pending: list[str] = []
        for entry in entries:
            if not isinstance(entry, dict) or entry.get("kind", "summary") != "summary":
                continue
            if is_inference(entry):
                inference += 1
                pending = requested_tools(entry)
                continue
            tool = catalogue_tool(entry)
            if tool is None:
                continue
            matched.append(bool(pending) and pending[0] == tool)
            if pending:
                pending.pop(0)
    total = len(matched)
    return (round(sum(matched) / total, 4) if total else 0.0), matched, inference


def nonce_summary(entries: Sequence[dict[str, Any]]) -> tuple[float | None, dict[str, int], int]:
    """Variant B: (richness or None without stamps, nonce_status counts, catalogue dispatches)."""
    result = trajectory_richness("", [e for e in entries if isinstance(e, dict)])
    return result.nonce_stamped, dict(result.nonce_statuses), result.total_dispatch_count


def proof_summary(entries: Sequence[dict[str, Any]]) -> float | None:
    """Share of catalogue dispatches the proxy proved model-emitted (``nonce_valid`` or ``matched_emitted``).

    None when the log carries no per-dispatch proofs (older logs, agent-written logs) or the model never
    replied: no proof either way.
    """
    rows = [e for e in entries if isinstance(e, dict)]
    if not any("proof" in e for e in rows):
        return None
    return trajectory_richness("", rows).agentic_richness


def llm_requested(entries: Sequence[dict[str, Any]], tool: str) -> bool:
    """Whether any inference response in the log requested ``tool`` (e.g. the final recommend_product)."""
    return any(is_inference(e) and tool in requested_tools(e) for e in entries if isinstance(e, dict))


def forgery_findings(trusted: Sequence[dict[str, Any]], claimed: Sequence[dict[str, Any]]) -> list[str]:
    """Contradictions between the trusted log and the agent-written ``proxy_calls`` (or forged nonces)."""
    findings: list[str] = []
    statuses = {str(e.get("nonce_status")) for e in trusted if catalogue_tool(e) and e.get("nonce_status")}
    for status in sorted(statuses & FORGED_NONCE_STATUSES):
        findings.append(f"trusted log: a dispatch has nonce_status={status!r}")
    claimed_inf = sum(1 for e in claimed if isinstance(e, dict) and is_inference(e))
    trusted_inf = sum(1 for e in trusted if is_inference(e))
    if claimed_inf > trusted_inf:
        findings.append(
            f"extra_info.proxy_calls claims {claimed_inf} inference call(s), trusted log has {trusted_inf}"
        )
    claimed_disp = sum(1 for e in claimed if isinstance(e, dict) and catalogue_tool(e))
    trusted_disp = sum(1 for e in trusted if catalogue_tool(e))
    if claimed_disp > trusted_disp:
        findings.append(
            f"extra_info.proxy_calls claims {claimed_disp} dispatch(es), trusted log has {trusted_disp}"
        )
    return findings


def message_rule(messages: Sequence[dict[str, Any]]) -> tuple[bool, str]:
    """Chat-only rule: every tool message answers an earlier assistant ``tool_calls`` entry by id, and the
    call it answers names a tool with JSON-object arguments. Returns (ok, first violation)."""
    calls: dict[str, dict[str, Any]] = {}
    answered: set[str] = set()
    for index, message in enumerate(messages):
        role = message.get("role")
        if role == "assistant":
            for j, call in enumerate(message.get("tool_calls") or []):
                function = call.get("function") or {}
                name, args = function.get("name"), function.get("arguments")
                if not isinstance(name, str) or not name:
                    return False, f"messages[{index}].tool_calls[{j}].function.name: missing"
                try:
                    parsed = json.loads(args) if isinstance(args, str) else args
                except ValueError:
                    return False, f"messages[{index}].tool_calls[{j}].function.arguments: not JSON"
                if parsed is not None and not isinstance(parsed, dict):
                    return False, f"messages[{index}].tool_calls[{j}].function.arguments: not an object"
                calls[str(call.get("id"))] = call
        elif role == "tool":
            ref = message.get("tool_call_id")
            if ref is None or str(ref) not in calls:
                return False, f"messages[{index}].tool_call_id: answers no earlier assistant tool call"
            if str(ref) in answered:
                return False, f"messages[{index}].tool_call_id: {ref!r} answered twice"
            answered.add(str(ref))
    return True, ""


__all__ = [
    "catalogue_tool",
    "forgery_findings",
    "is_inference",
    "llm_requested",
    "message_rule",
    "nonce_summary",
    "pending_target_walk",
    "proof_summary",
    "requested_tools",
]
