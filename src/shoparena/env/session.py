"""Per-episode state of the shopping environment."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

import orjson

from shoparena.records.trajectory import Step


@dataclass(slots=True)
class ShopSession:
    """Everything one episode accumulates; owned by one :class:`~shoparena.env.environment.ShopEnv` reset.

    Attributes:
        problem_id: Id of the problem being played.
        query: The user's request (the only problem text the agent sees).
        steps: Steps taken so far, with tool results filled in.
        viewed_ids: Product ids returned by ``view_product_information``, in first-seen order.
        searches: ``find_product`` parameter dicts, in call order.
        recommendations: Raw ``product_ids`` argument of every ``recommend_product`` call (last one counts).
        terminated: True once ``terminate`` ran.
        terminate_status: The status ``terminate`` reported.
        schema_violations: Tolerated schema problems (e.g. ``terminate`` without ``status``).
        termination_reason: Why the episode ended (terminate, empty_step, max_steps, infra_error), None while
            it runs.
        infra_error: Description of the infrastructure error that ended the episode, if any.
    """

    problem_id: str
    query: str
    steps: list[Step] = field(default_factory=list)
    viewed_ids: list[str] = field(default_factory=list)
    searches: list[dict[str, Any]] = field(default_factory=list)
    recommendations: list[Any] = field(default_factory=list)
    terminated: bool = False
    terminate_status: str | None = None
    schema_violations: list[str] = field(default_factory=list)
    termination_reason: str | None = None
    infra_error: str | None = None

    @property
    def done(self) -> bool:
        """True once the episode has ended for any reason."""
        return self.termination_reason is not None

    def note_viewed(self, product_ids: list[str]) -> None:
        """Record ids seen through ``view_product_information`` (first-seen order, no duplicates)."""
        for pid in product_ids:
            if pid not in self.viewed_ids:
                self.viewed_ids.append(pid)

    def last_recommendation(self) -> Any:
        """The ``product_ids`` argument of the last ``recommend_product`` call, or None."""
        return self.recommendations[-1] if self.recommendations else None

    def snapshot(self) -> dict[str, Any]:
        """A JSON-able summary of the state (no step texts)."""
        return {
            "problem_id": self.problem_id,
            "n_steps": len(self.steps),
            "calls": [[c.name, c.parameters] for s in self.steps for c in s.tool_calls],
            "viewed_ids": list(self.viewed_ids),
            "recommendations": list(self.recommendations),
            "terminated": self.terminated,
            "terminate_status": self.terminate_status,
            "termination_reason": self.termination_reason,
        }

    def state_hash(self) -> str:
        """sha256 of the canonical :meth:`snapshot`: equal for episodes that reached the same state."""
        snapshot = self.snapshot()
        try:
            payload = orjson.dumps(snapshot, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS)
        except TypeError:  # text orjson refuses (invalid Unicode) must not crash the episode: escape it
            payload = json.dumps(snapshot, sort_keys=True, default=str, separators=(",", ":")).encode()
        return hashlib.sha256(payload).hexdigest()


__all__ = ["ShopSession"]
