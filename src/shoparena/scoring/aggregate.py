"""Aggregates over verdicts (environment spec §8.5, arena spec §6) with each profile's denominator rule.

* ``strict`` (ORO ``compute_aggregate``): N = full suite size; missing, FAILED and TIMED_OUT problems count as
  failures; every rate is capped at 1.
* ``shoppingbench``: N = problems that have a trajectory; missing ones are excluded but reported.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from shoparena.records.verdict import FIELDS, Verdict, VerdictStatus
from shoparena.scoring.profiles import ScoringProfile, get_profile


class AggregateReport(BaseModel):
    """Run-level scores; ORO's names plus ShoppingBench's report fields."""

    model_config = ConfigDict(extra="forbid")

    profile: str
    denominator: int = Field(description="N used for every rate (strict: suite size; SB: scored problems).")
    # ORO compute_aggregate
    ground_truth_rate: float = 0.0
    success_rate: float = Field(default=0.0, description="ASR.")
    format_score: float = 0.0
    field_matching: float = Field(default=0.0, description="Σrule / N (SB: the rule match score).")
    total_problems: int = Field(default=0, description="Suite size.")
    successful_problems: int = 0
    scored_problems: int = 0
    # accounting
    missing_problems: int = 0
    failed_runs: int = 0
    timed_out_runs: int = 0
    # ShoppingBench report fields
    recommend_product_score: float = Field(default=0.0, description="Mean share of slots whose id was found.")
    field_match_scores: dict[str, float] = Field(default_factory=lambda: dict.fromkeys(FIELDS, 0.0))
    shop_rate: float | None = None
    budget_rate: float | None = None
    web_kw_score: float | None = None
    web_title_score: float | None = None
    length_reward: float = 0.0
    title_backend: str = ""
    title_threshold: float | None = None
    title_comparable: bool = False
    per_category: dict[str, AggregateReport] = Field(default_factory=dict)


def _mean(values: Sequence[float], n: int) -> float:
    return min(sum(values) / n, 1.0) if n else 0.0


def _report(verdicts: Sequence[Verdict], prof: ScoringProfile, suite_size: int) -> AggregateReport:
    scored = [v for v in verdicts if v.status is VerdictStatus.SCORED]
    n = max(suite_size, 1) if prof.denominator == "suite" else len(scored)
    success = sum(v.success for v in scored)
    shops = [v.shop for v in scored if v.shop is not None]
    budgets = [v.budget for v in scored if v.budget is not None]
    webs = [v for v in scored if v.web_kw is not None]
    n_shop = sum(v.shop is not None for v in verdicts) if prof.denominator == "suite" else len(shops)
    n_budget = sum(v.budget is not None for v in verdicts) if prof.denominator == "suite" else len(budgets)
    n_web = sum(v.web_kw is not None for v in verdicts) if prof.denominator == "suite" else len(webs)
    first = verdicts[0] if verdicts else None
    return AggregateReport(
        profile=prof.name,
        denominator=n,
        ground_truth_rate=_mean([float(v.gt >= 1) for v in scored], n),
        success_rate=_mean([float(v.success) for v in scored], n),
        format_score=_mean([v.format_score for v in scored], n),
        field_matching=_mean([v.rule for v in scored], n),
        total_problems=suite_size,
        successful_problems=success,
        scored_problems=len(scored),
        missing_problems=sum(v.status is VerdictStatus.MISSING for v in verdicts),
        failed_runs=sum(v.status is VerdictStatus.FAILED_RUN for v in verdicts),
        timed_out_runs=sum(v.status is VerdictStatus.TIMED_OUT for v in verdicts),
        recommend_product_score=_mean([v.product for v in scored], n),
        field_match_scores={f: _mean([v.field_scores.get(f, 0.0) for v in scored], n) for f in FIELDS},
        shop_rate=_mean(shops, n_shop) if n_shop else None,
        budget_rate=_mean(budgets, n_budget) if n_budget else None,
        web_kw_score=_mean([v.web_kw or 0.0 for v in webs], n_web) if n_web else None,
        web_title_score=_mean([v.web_title or 0.0 for v in webs], n_web) if n_web else None,
        length_reward=_mean([v.length_reward for v in scored], n),
        title_backend=first.title_backend if first else "",
        title_threshold=first.title_threshold if first else None,
        title_comparable=first.title_comparable if first else False,
    )


def compute_aggregate(
    verdicts: Sequence[Verdict], *, scoring_profile: str | ScoringProfile, suite_size: int | None = None
) -> AggregateReport:
    """Aggregate verdicts under a profile's denominator rule, overall and per category.

    Args:
        verdicts: One verdict per problem (missing problems as ``status=missing`` verdicts).
        scoring_profile: The scoring profile.
        suite_size: The full suite size (strict denominator); defaults to ``len(verdicts)``.

    Returns:
        The report; ``per_category`` holds the same report per category (denominator: that category's
        problems under strict, its scored problems under shoppingbench).
    """
    prof = get_profile(scoring_profile)
    size = len(verdicts) if suite_size is None else suite_size
    report = _report(verdicts, prof, size)
    categories: dict[str, list[Verdict]] = {}
    for v in verdicts:
        categories.setdefault(v.category, []).append(v)
    report.per_category = {cat: _report(vs, prof, len(vs)) for cat, vs in sorted(categories.items())}
    return report
