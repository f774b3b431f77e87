"""The structural evidence of one episode (:class:`~shoparena.records.corpus.StructuralEvidence`): both
richness variants, the proxy's proofs, forgery checks, the strict format check and the chat message rule. The
arena owns it because it reads the arena's own proxy log; the corpus filter only reads the result.

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

from shoparena.arena.proxy_log import (
    PendingWalk,
    catalogue_tool,
    is_inference,
    llm_requested,
    pending_target_walk,
    summaries,
)
from shoparena.arena.richness import trajectory_richness
from shoparena.formats.oro import all_proxy_calls
from shoparena.records.corpus import StructuralEvidence
from shoparena.records.episode import Episode
from shoparena.records.proxy_log import ProxyLogEntry, proxy_entries
from shoparena.records.tools import CATALOGUE_TOOLS
from shoparena.records.trajectory import Trajectory

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


class EpisodeEvidence(NamedTuple):
    """An episode's structural evidence and what the corpus's training mask and provenance read beside it."""

    evidence: StructuralEvidence
    matched: list[bool]  # per catalogue dispatch, in log order: requested by the LLM (Variant A)
    agent_model: str | None  # the model the first inference call named


def episode_evidence(episode: Episode, strict_format: float | None = None) -> EpisodeEvidence:
    """The evidence of an envelope episode (never raises for agent-controlled content).

    The trusted proxy log is the evidence when the episode has one (arena runs); otherwise the agent-written
    ``extra_info.proxy_calls``, walked step by step. ``strict_format``: the strict profile's format score
    when the trajectory was scored (it checked every step already); None: checked here.
    """
    traj = episode.trajectory
    claimed = summaries(proxy_entries(all_proxy_calls(traj)))
    walk = None  # the flat log's walk, which the richness reuses
    trusted = episode.trusted_log
    if trusted is not None:
        trusted = summaries(proxy_entries(trusted))
        log, source = trusted, "trusted_proxy"
        walk = pending_target_walk([trusted])
        richness_a, matched, inference = walk
        forged = forgery_findings(trusted, claimed)
    else:
        log, source = claimed, "envelope"
        per_step = [proxy_entries(s.proxy_calls) for s in traj.steps]
        richness_a, matched, inference = pending_target_walk(per_step)
        forged = forgery_findings(claimed, [])
    # Proofs are the proxy's own findings: only a trusted log carries them.
    richness_b, nonces, dispatches, richness_proof = richness_evidence(
        log, proofs=trusted is not None, walk=walk
    )
    has_call_log = bool(log) or trusted is not None
    recommended = traj.last_recommendation() is not None
    final_llm = llm_requested(log, "recommend_product") if recommended else False
    if not traj.steps:
        format_ok, format_detail = False, "no steps"
    elif strict_format is not None:  # the strict scorer already checked every step (mean of step scores)
        format_ok = strict_format >= 1.0
        format_detail = "" if format_ok else "a step fails the strict format check"
    else:
        format_ok, format_detail = strict_format_check(traj)
    evidence = StructuralEvidence(
        envelope_status=traj.status.value,
        has_dialogue=not traj.dialogue_is_null and bool(traj.steps),
        log_source=source,  # type: ignore[arg-type]
        inference_calls=inference if has_call_log else None,
        dispatches=dispatches,
        nonce_counts=nonces,
        richness_nonce=richness_b,
        richness_proof=richness_proof,
        richness_pending=richness_a if dispatches else None,
        dispatch_matched=matched,
        forged=forged,
        final_llm_emitted=final_llm,
        format_ok=format_ok,
        format_detail=format_detail,
        proxy_log_problem=episode.log_problem,
    )
    models = [str(e.json_data.get("model")) for e in log if is_inference(e) and e.json_data is not None]
    return EpisodeEvidence(evidence, matched, models[0] if models else None)


def strict_format_check(traj: Trajectory) -> tuple[bool, str]:
    """(every step passes the strict profile's format check, the first step that does not)."""
    from shoparena.scoring.format_reward import step_format
    from shoparena.scoring.profiles import get_profile

    strict = get_profile("strict")
    for step in traj.steps:
        if step_format(step, strict) < 1.0:
            return False, f"steps[{step.index - 1}]: fails the strict format check"
    return True, ""


def chat_evidence(messages: Sequence[dict[str, Any]]) -> StructuralEvidence:
    """The evidence of a chat row: its messages are all there is (the message rule, the calls they name)."""
    ok, detail = message_rule(messages)
    calls = [c for m in messages if m.get("role") == "assistant" for c in (m.get("tool_calls") or [])]
    names = [str((c.get("function") or {}).get("name")) for c in calls if isinstance(c, dict)]
    return StructuralEvidence(
        envelope_status="CHAT",
        has_dialogue=any(m.get("role") == "assistant" for m in messages),
        log_source="messages",
        dispatches=sum(1 for n in names if n in CATALOGUE_TOOLS),
        final_llm_emitted="recommend_product" in names,
        message_rule_ok=ok,
        message_rule_detail=detail,
    )


__all__ = [
    "EpisodeEvidence",
    "RichnessEvidence",
    "chat_evidence",
    "episode_evidence",
    "forgery_findings",
    "message_rule",
    "richness_evidence",
    "strict_format_check",
]
