"""Verdict records: what a scorer decided about one trajectory, and why (environment spec §8).

Every verdict explains itself: each constraint, the GT-id match, the shop and budget checks become
:class:`Check` rows with expected and actual values, and the title backend and threshold are recorded.
That full form is for trusted readers only; :meth:`Verdict.public_view` is what a policy or a remote client
is shown (what failed, never what was expected).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

#: The four per-field match scores (SB's ``"sku & attrs"`` is spelled ``sku_attrs`` here).
FIELDS: tuple[str, ...] = ("title", "price", "service", "sku_attrs")


class VerdictStatus(StrEnum):
    """Whether a problem was scored, and if not, why."""

    SCORED = "scored"
    MISSING = "missing"  # no trajectory for this problem
    FAILED_RUN = "failed_run"  # envelope status FAILED (strict: a failure, not scored)
    TIMED_OUT = "timed_out"  # envelope status TIMED_OUT (strict: a failure, not scored)


@dataclass(slots=True)
class Check:
    """One decided constraint: expected vs. actual, with its unit/hit counts.

    A stdlib dataclass rather than a pydantic model, deliberately: a verdict carries about ten checks and
    scoring aims at thousands of problems per second, where per-check model construction was the largest
    single cost. Pydantic still validates checks wherever a :class:`Verdict` is read (``Verdict.checks``).

    Attributes:
        name: Check kind: found, gt_id, title, price, service, sku_attrs, shop, budget, ...
        field: The reward field or computed quantity checked.
        slot: 0-based reward slot, None for problem-level checks.
        expected: What the constraint asks for.
        actual: What the recommended product has.
        passed: Whether the check passed.
        required: False for informational checks (e.g. the GT-id match).
        units: Countable constraint units in this check.
        hits: Units met.
        detail: A human-readable explanation.
    """

    __pydantic_config__ = ConfigDict(extra="forbid")

    name: str
    passed: bool
    field: str = ""
    slot: int | None = None
    expected: Any = None
    actual: Any = None
    required: bool = True
    units: int = 0
    hits: int = 0
    detail: str = ""


class SlotVerdict(BaseModel):
    """The score of one reward slot against the product recommended in that position."""

    model_config = ConfigDict(extra="forbid")

    slot: int
    gt_product_id: str
    recommended_id: str | None = Field(default=None, description="The id in this position, None if absent.")
    found: bool = Field(default=False, description="The id resolved to a catalog product.")
    gt: float = 0.0
    rule: float = 0.0
    units: dict[str, int] = Field(default_factory=dict)
    hits: dict[str, int] = Field(default_factory=dict)
    field_scores: dict[str, float] = Field(default_factory=dict)
    price: float | None = None
    shop_id: str | None = None
    counts_as_hit: bool = Field(
        default=False, description="Counts for the shop/budget checks (profile rule)."
    )


class Verdict(BaseModel):
    """The explained score of one trajectory (or of a missing one) on one problem."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = 1
    problem_id: str
    run_id: str = ""
    rollout_idx: int = 0
    profile: str
    intent: str
    category: str
    status: VerdictStatus = VerdictStatus.SCORED
    success: bool = False
    rule: float = 0.0
    gt: float = 0.0
    product: float = Field(default=0.0, description="Share of slots whose recommended id was found.")
    field_scores: dict[str, float] = Field(default_factory=lambda: dict.fromkeys(FIELDS, 0.0))
    shop: float | None = None
    budget: float | None = None
    web_kw: float | None = None
    web_title: float | None = None
    format_score: float = 0.0
    length_reward: float = 0.0
    slots: list[SlotVerdict] = Field(default_factory=list)
    checks: list[Check] = Field(default_factory=list)
    title_backend: str = ""
    title_threshold: float | None = None
    title_comparable: bool = Field(
        default=False, description="True only for the reference embedding model; other backends differ."
    )
    recommended_ids: list[str] = Field(default_factory=list, description="Ids as parsed under the profile.")
    recommended_raw: str | None = Field(default=None, description="The last recommend_product argument, raw.")
    notes: list[str] = Field(default_factory=list)

    @property
    def scored(self) -> bool:
        return self.status is VerdictStatus.SCORED

    def public_view(self) -> dict[str, Any]:
        """What a policy or a remote client may see of this verdict: the outcome, the scores, the ids it
        recommended and, per required check, its name, field, slot and whether it passed. Never what was
        expected (the ground truth: ids, titles, attributes, price bounds), what the recommended product
        had, nor the explanations that quote either; the informational ground-truth id match is left out
        too (an exact-id oracle). Trusted readers (run directories, the viewer) keep the full verdict.
        """
        return {
            "problem_id": self.problem_id,
            "profile": self.profile,
            "status": self.status.value,
            "success": bool(self.success),
            "rule": float(self.rule),
            "product": float(self.product),
            "recommended_ids": list(self.recommended_ids),
            "checks": [
                {"name": c.name, "field": c.field, "slot": c.slot, "passed": bool(c.passed)}
                for c in self.checks
                if c.required
            ],
        }

    def failed_checks(self) -> list[Check]:
        """Every required check that did not pass, in order."""
        return [check for check in self.checks if check.required and not check.passed]

    def explain(self) -> str:
        """A short human-readable account of the decision."""
        head = (
            f"{self.problem_id} [{self.profile}/{self.intent}] {self.status.value}: "
            f"{'SUCCESS' if self.success else 'FAIL'} rule={self.rule:.3f} gt={self.gt:.2f}"
        )
        lines = [head]
        for check in self.checks:
            mark = "ok " if check.passed else "NO "
            where = f"slot {check.slot} " if check.slot is not None else ""
            units = f" {check.hits}/{check.units}" if check.units else ""
            lines.append(f"  {mark}{where}{check.name}{units}: {check.detail}".rstrip(": "))
        lines.extend(f"  note: {note}" for note in self.notes)
        return "\n".join(lines)
