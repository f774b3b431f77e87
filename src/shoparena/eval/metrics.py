"""Evaluation metrics (distillation spec §7): greedy ASR, pass@1, unbiased pass@k, pass^k, 95 % intervals.

Every rate's denominator is the whole suite: a problem without a finished episode counts as n samples with
0 successes. Proportions of 0/1 outcomes (greedy ASR, format pass rates) get Wilson intervals; means over
problems of per-problem estimates (pass@1, pass@k, pass^k) get a percentile bootstrap over problems.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from shoparena.records.eval import Estimate, GroupMetrics

Z95 = 1.959963984540054
DEFAULT_BOOTSTRAP = 2000


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k for one problem: 1 − C(n−c, k) / C(n, k), in the stable product form.

    C(n−c, k)/C(n, k) = ∏_{i=n−c+1}^{n} (1 − k/i); no binomial coefficient is ever formed, so large n
    neither overflows nor loses precision.

    Raises:
        ValueError: unless 0 ≤ c ≤ n and 1 ≤ k ≤ n.
    """
    _check(n, c, k)
    if n - c < k:
        return 1.0
    return 1.0 - math.prod(1.0 - k / i for i in range(n - c + 1, n + 1))


def pass_hat_k(n: int, c: int, k: int) -> float:
    """pass^k for one problem: C(c, k) / C(n, k), the chance that k samples (without replacement) all pass.

    Product form ∏_{i=0}^{k−1} (c − i)/(n − i).
    """
    _check(n, c, k)
    if c < k:
        return 0.0
    return math.prod((c - i) / (n - i) for i in range(k))


def _check(n: int, c: int, k: int) -> None:
    if not 0 <= c <= n:
        raise ValueError(f"need 0 <= c <= n, got n={n}, c={c}")
    if not 1 <= k <= n:
        raise ValueError(f"need 1 <= k <= n, got n={n}, k={k}")


def wilson_interval(successes: int, total: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion ((0, 1) when ``total`` is 0)."""
    if total <= 0:
        return 0.0, 1.0
    if not 0 <= successes <= total:
        raise ValueError(f"need 0 <= successes <= total, got {successes}/{total}")
    p = successes / total
    z2 = z * z
    denom = 1.0 + z2 / total
    centre = (p + z2 / (2 * total)) / denom
    half = z * math.sqrt(p * (1 - p) / total + z2 / (4 * total * total)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def bootstrap_interval(
    values: Sequence[float], *, resamples: int = DEFAULT_BOOTSTRAP, seed: int = 0, level: float = 0.95
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of per-problem ``values`` (resampling problems)."""
    data = np.asarray(values, dtype=float)
    if data.size == 0:
        return 0.0, 1.0
    if np.all(data == data[0]):
        return float(data[0]), float(data[0])
    rng = np.random.default_rng(seed)
    means = data[rng.integers(0, data.size, size=(resamples, data.size))].mean(axis=1)
    alpha = (1.0 - level) / 2
    return float(np.quantile(means, alpha)), float(np.quantile(means, 1 - alpha))


def proportion(successes: int, total: int) -> Estimate:
    """A 0/1 rate with its Wilson interval."""
    low, high = wilson_interval(successes, total)
    return Estimate(
        value=successes / total if total else 0.0, ci_low=low, ci_high=high, method="wilson", n=total
    )


def mean_estimate(values: Sequence[float], *, seed: int = 0, resamples: int = DEFAULT_BOOTSTRAP) -> Estimate:
    """A mean over problems with its bootstrap interval."""
    low, high = bootstrap_interval(values, seed=seed, resamples=resamples)
    return Estimate(
        value=float(np.mean(values)) if len(values) else 0.0,
        ci_low=low,
        ci_high=high,
        method="bootstrap",
        n=len(values),
    )


class ProblemOutcome(BaseModel):
    """What one problem's episodes add up to under one profile (missing episodes already counted as 0)."""

    model_config = ConfigDict(extra="forbid")

    problem_id: str
    category: str
    n: int = Field(description="Sampled episodes the run asked for (missing ones count as failures).")
    c: int = Field(description="Successful sampled episodes.")
    greedy: bool | None = Field(default=None, description="Success of the greedy episode (None: not run).")
    format_score: float = 0.0
    steps: float = 0.0
    tokens: float = 0.0


def group_metrics(
    outcomes: Sequence[ProblemOutcome], samples: int, *, seed: int = 0, resamples: int = DEFAULT_BOOTSTRAP
) -> GroupMetrics:
    """Every metric of one group; pass@k and pass^k for each k in 1..samples."""
    n_problems = len(outcomes)
    greedy = [o.greedy for o in outcomes]
    greedy_est = None
    if outcomes and all(g is not None for g in greedy):
        greedy_est = proportion(sum(bool(g) for g in greedy), n_problems)
    at_k = {}
    hat_k = {}
    for k in range(1, samples + 1):
        at_k[str(k)] = mean_estimate(
            [pass_at_k(o.n, o.c, k) for o in outcomes], seed=seed, resamples=resamples
        )
        hat_k[str(k)] = mean_estimate(
            [pass_hat_k(o.n, o.c, k) for o in outcomes], seed=seed, resamples=resamples
        )
    return GroupMetrics(
        problems=n_problems,
        samples=samples,
        greedy_asr=greedy_est,
        pass_at_1=at_k["1"] if at_k else mean_estimate([]),
        pass_at_k=at_k,
        pass_hat_k=hat_k,
        format_score=mean_estimate([o.format_score for o in outcomes], seed=seed, resamples=resamples),
        mean_steps=float(np.mean([o.steps for o in outcomes])) if outcomes else 0.0,
        mean_tokens=float(np.mean([o.tokens for o in outcomes])) if outcomes else 0.0,
    )


def metrics_by_category(
    outcomes: Sequence[ProblemOutcome], samples: int, *, seed: int = 0, resamples: int = DEFAULT_BOOTSTRAP
) -> dict[str, GroupMetrics]:
    """``{"overall": ..., <category>: ...}``."""
    out = {"overall": group_metrics(outcomes, samples, seed=seed, resamples=resamples)}
    for category in sorted({o.category for o in outcomes}):
        members = [o for o in outcomes if o.category == category]
        out[category] = group_metrics(members, samples, seed=seed, resamples=resamples)
    return out


__all__ = [
    "Estimate",
    "GroupMetrics",
    "ProblemOutcome",
    "bootstrap_interval",
    "group_metrics",
    "mean_estimate",
    "metrics_by_category",
    "pass_at_k",
    "pass_hat_k",
    "proportion",
    "wilson_interval",
]
