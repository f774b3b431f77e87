"""Structural evidence of one trajectory: both richness variants, forgery checks, the chat message rule.

Variant B (nonce-stamped) and the proxy's proofs come from the arena's richness module
(:func:`shoparena.arena.richness.trajectory_richness`); Variant A is the published pending walk of
:mod:`shoparena.arena.proxy_log`. The trusted proxy log is one flat list, so Variant A walks it once, while
sandbox-side ``extra_info.proxy_calls`` are walked step by step with the pending list emptied at each step,
as published. Every function takes typed entries (:func:`shoparena.records.proxy_log.proxy_entries`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, NamedTuple

from shoparena.arena.proxy_log import PendingWalk, catalogue_tool, is_inference
from shoparena.arena.richness import trajectory_richness
from shoparena.records.proxy_log import ProxyLogEntry

FORGED_NONCE_STATUSES = frozenset({"mismatch", "replayed", "malformed"})


class RichnessEvidence(NamedTuple):
    """Variant B and the proxy's proofs of one log, from one richness pass."""

    nonce: float | None  # Variant B; None without any nonce stamp
    nonce_counts: dict[str, int]  # nonce_status counts
    dispatches: int  # catalogue dispatches
    proof: float | None  # share of dispatches proved model-emitted (``nonce_valid``/``matched_emitted``)


def richness_evidence(
    entries: Sequence[ProxyLogEntry], *, proofs: bool, walk: PendingWalk | None = None
) -> RichnessEvidence:
    """Both richness variants the filter reads from ``entries`` (summary entries).

    ``proof`` is None unless ``proofs`` (only the trusted log carries the proxy's findings), and None when
    the log carries no per-dispatch proofs (older logs) or the model never replied: no proof either way.
    ``walk``: the log's pending walk, when the caller has it (it is part of the richness).
    """
    result = trajectory_richness("", entries, walk=walk)
    proof = result.agentic_richness if proofs and any(e.proof is not None for e in entries) else None
    return RichnessEvidence(
        result.nonce_stamped, dict(result.nonce_statuses), result.total_dispatch_count, proof
    )


def forgery_findings(trusted: Sequence[ProxyLogEntry], claimed: Sequence[ProxyLogEntry]) -> list[str]:
    """Contradictions between the trusted log and the agent-written ``proxy_calls`` (or forged nonces)."""
    findings: list[str] = []
    statuses = {e.nonce_status for e in trusted if catalogue_tool(e) and e.nonce_status}
    for status in sorted(statuses & FORGED_NONCE_STATUSES):
        findings.append(f"trusted log: a dispatch has nonce_status={status!r}")
    claimed_inf = sum(1 for e in claimed if is_inference(e))
    trusted_inf = sum(1 for e in trusted if is_inference(e))
    if claimed_inf > trusted_inf:
        findings.append(
            f"extra_info.proxy_calls claims {claimed_inf} inference call(s), trusted log has {trusted_inf}"
        )
    claimed_disp = sum(1 for e in claimed if catalogue_tool(e))
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
    "RichnessEvidence",
    "forgery_findings",
    "message_rule",
    "richness_evidence",
]
