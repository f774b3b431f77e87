"""Agentic richness from the proxy's trusted logs (distillation spec §2, arena spec §4-6).

Agentic richness is the share of *catalogue dispatches* the language model itself requested. This module
reads it from ``proxy/<agent>/<problem>.jsonl`` (the trusted log the proxy writes, never the agent's own
steps) and is importable without the judge, the race or a backend: the corpus filter uses it directly.

Each dispatch carries a proof kind, written by the proxy when it served the dispatch (``proof``):

- ``nonce_valid``: the agent sent back the proxy-minted HMAC nonce of a call the model emitted (strongest);
- ``matched_emitted``: no valid nonce, but the dispatch equals (tool name + normalised arguments) a call the
  model emitted earlier in the same problem that no other dispatch has claimed yet;
- ``unmatched``: the model never emitted this call (a sub-task loop, or a forged call).

Three numbers are reported per trajectory and pooled per agent:

- ``agentic_richness`` (the headline): (nonce_valid + matched_emitted) / dispatches; **None** when the model
  never answered at all in that trajectory (no proof either way, distinct from 0);
- ``pending_target`` (published Variant A): replace a pending list of requested tool names at every
  inference entry; a dispatch counts when it equals the head; pop the head (the walk of
  :mod:`shoparena.arena.proxy_log`, shared with the corpus);
- ``nonce_stamped`` (published Variant B): ``nonce_status == "valid"`` / dispatches; None when no dispatch
  carries a ``nonce_status``.

Logs written before the proxy recorded ``proof`` are read as ``nonce_valid`` when the nonce was valid, else
``unmatched`` (conservative: an old log never gains credit it cannot prove).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from shoparena.arena.proxy_log import PendingWalk, catalogue_tool, is_model_reply, pending_target_walk
from shoparena.records.proxy_log import ProofKind, ProxyLogEntry, proxy_entries

_ARGUMENT_ALIASES = {"query": "q", "product_id": "product_ids"}

CREDITED_PROOFS = frozenset({ProofKind.NONCE_VALID, ProofKind.MATCHED_EMITTED})


def _argument_text(value: Any) -> str:
    if isinstance(value, list | tuple):
        return ",".join(_argument_text(v) for v in value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return " ".join(str(value).split())


def normalise_arguments(arguments: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """A comparable form of tool arguments, whichever way they travelled (model JSON, query string, body).

    Aliases fold (``query`` → ``q``, ``product_id`` → ``product_ids``), values become whitespace-collapsed
    strings (lists comma-joined, ``3.0`` → ``3``), empty values, the default ``page=1`` and a ``sort`` or
    ``service`` of ``default`` drop out, and keys sort.
    """
    out: dict[str, str] = {}
    for key, value in arguments.items():
        if value is None:
            continue
        name = _ARGUMENT_ALIASES.get(str(key), str(key))
        text = _argument_text(value)
        if name == "product_ids":
            text = ",".join(part.strip() for part in text.split(",") if part.strip())
        if text and not (name in ("sort", "service") and text == "default"):
            out[name] = text
    if out.get("page") == "1":
        del out["page"]
    return tuple(sorted(out.items()))


def dispatch_proof(entry: ProxyLogEntry) -> ProofKind:
    """The proof kind of one dispatch (see the module docstring for logs without ``proof``)."""
    if entry.proof is not None:
        return entry.proof
    return ProofKind.NONCE_VALID if entry.nonce_status == "valid" else ProofKind.UNMATCHED


def _ratio(part: int, whole: int) -> float:
    return round(part / whole, 4) if whole else 0.0


def _richness_fields(
    tools: Counter[str], statuses: Counter[str], proofs: Counter[str], total: int, replies: int, emitted: int
) -> dict[str, Any]:
    """The richness numbers of a set of dispatches (one trajectory, or pooled), from their counts."""
    credited = sum(proofs[kind.value] for kind in CREDITED_PROOFS)
    return {
        "total_dispatch_count": total,
        "model_replies": replies,
        "agentic_richness": _ratio(credited, total) if replies else None,
        "proof_kinds": dict(sorted(proofs.items())),
        "pending_target": _ratio(emitted, total),
        "llm_emitted_count": emitted,
        "nonce_stamped": _ratio(statuses["valid"], total) if statuses else None,
        "valid_count": statuses["valid"],
        "has_nonce_stamps": bool(statuses),
        "tool_breakdown": dict(sorted(tools.items())),
        "nonce_statuses": dict(sorted(statuses.items())),
    }


class ProblemRichness(BaseModel):
    """Richness of one trajectory, from its trusted proxy log."""

    model_config = ConfigDict(extra="forbid")

    problem_id: str
    total_dispatch_count: int
    model_replies: int = Field(description="Inference calls the backend answered (n_steps of the LLM).")
    agentic_richness: float | None = Field(
        description="(nonce_valid + matched_emitted) / dispatches; None when the model never replied."
    )
    proof_kinds: dict[str, int] = Field(default_factory=dict)
    pending_target: float = Field(description="Published Variant A (pending-target matching).")
    llm_emitted_count: int = 0
    nonce_stamped: float | None = Field(description="Published Variant B; None without any nonce_status.")
    valid_count: int = 0
    has_nonce_stamps: bool = False
    tool_breakdown: dict[str, int] = Field(default_factory=dict)
    nonce_statuses: dict[str, int] = Field(default_factory=dict)

    @property
    def credited_count(self) -> int:
        return sum(self.proof_kinds.get(kind.value, 0) for kind in CREDITED_PROOFS)


def trajectory_richness(
    problem_id: str,
    entries: Iterable[ProxyLogEntry | Mapping[str, Any]],
    *,
    walk: PendingWalk | None = None,
) -> ProblemRichness:
    """Richness of one problem from its trusted proxy entries (summaries only; raw objects read leniently).

    ``pending_target`` is the shared published walk (:func:`shoparena.arena.proxy_log.pending_target_walk`),
    so it equals the corpus's ``richness_pending`` on the same log; ``walk``: that walk over these entries,
    when the caller has it already.
    """
    log = [e for e in proxy_entries(entries) if e.is_summary]
    tools: Counter[str] = Counter()
    statuses: Counter[str] = Counter()
    proofs: Counter[str] = Counter()
    for entry in log:
        tool = catalogue_tool(entry)
        if tool is None:
            continue
        tools[tool] += 1
        proofs[dispatch_proof(entry).value] += 1
        if entry.nonce_status is not None:
            statuses[entry.nonce_status] += 1
    walk = walk if walk is not None else pending_target_walk([log])
    total = sum(tools.values())
    replies = sum(is_model_reply(e) for e in log)
    fields = _richness_fields(tools, statuses, proofs, total, replies, sum(walk.matched))
    return ProblemRichness(problem_id=problem_id, **fields)


class RichnessSummary(BaseModel):
    """Richness pooled over an agent's trajectories (dispatch-weighted, not a mean of ratios)."""

    model_config = ConfigDict(extra="forbid")

    agentic_richness: float | None = Field(
        description="Credited / all dispatches; None when no trajectory reached a model reply."
    )
    total_dispatch_count: int = 0
    model_replies: int = 0
    proof_kinds: dict[str, int] = Field(default_factory=dict)
    pending_target: float = 0.0
    llm_emitted_count: int = 0
    nonce_stamped: float | None = None
    valid_count: int = 0
    has_nonce_stamps: bool = False
    tool_breakdown: dict[str, int] = Field(default_factory=dict)
    nonce_statuses: dict[str, int] = Field(default_factory=dict)


def pooled_richness(items: Iterable[ProblemRichness]) -> RichnessSummary:
    """Pool per-problem counts over every dispatch of ``items``."""
    items = list(items)
    tools: Counter[str] = Counter()
    statuses: Counter[str] = Counter()
    proofs: Counter[str] = Counter()
    for item in items:
        tools.update(item.tool_breakdown)
        statuses.update(item.nonce_statuses)
        proofs.update(item.proof_kinds)
    total = sum(i.total_dispatch_count for i in items)
    replies = sum(i.model_replies for i in items)
    emitted = sum(i.llm_emitted_count for i in items)
    return RichnessSummary(**_richness_fields(tools, statuses, proofs, total, replies, emitted))


__all__ = [
    "CREDITED_PROOFS",
    "ProblemRichness",
    "ProofKind",
    "RichnessSummary",
    "dispatch_proof",
    "normalise_arguments",
    "pooled_richness",
    "trajectory_richness",
]
