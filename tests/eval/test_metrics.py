"""pass@k / pass^k against brute-force enumeration; Wilson and bootstrap intervals against known values."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

from shoparena.eval.metrics import (
    ProblemOutcome,
    bootstrap_interval,
    group_metrics,
    pass_at_k,
    pass_hat_k,
    wilson_interval,
)


def _enumerate(n: int, c: int, k: int) -> tuple[float, float]:
    """Over every k-subset of n samples (the first c succeed): share with ≥1 success, share all successes."""
    outcomes = [True] * c + [False] * (n - c)
    subsets = list(itertools.combinations(range(n), k))
    any_pass = sum(any(outcomes[i] for i in s) for s in subsets) / len(subsets)
    all_pass = sum(all(outcomes[i] for i in s) for s in subsets) / len(subsets)
    return any_pass, all_pass


def test_pass_at_k_and_pass_hat_k_match_enumeration_on_random_tables() -> None:
    rng = random.Random(7)
    for _ in range(150):
        n = rng.randint(1, 10)
        c = rng.randint(0, n)
        k = rng.randint(1, n)
        any_pass, all_pass = _enumerate(n, c, k)
        assert pass_at_k(n, c, k) == pytest.approx(any_pass, abs=1e-12), (n, c, k)
        assert pass_hat_k(n, c, k) == pytest.approx(all_pass, abs=1e-12), (n, c, k)


def test_pass_at_k_is_stable_for_large_n() -> None:
    # C(1000, 500) overflows floats; the product form does not.
    value = pass_at_k(1000, 3, 500)
    assert 0.87 < value < 0.88  # 1 - (500/1000)^3 approximately
    assert pass_at_k(200, 0, 50) == 0.0 and pass_at_k(200, 200, 50) == 1.0


@pytest.mark.parametrize("n,c,k", [(3, 4, 1), (3, 1, 0), (3, 1, 4), (2, -1, 1)])
def test_invalid_tables_are_rejected(n: int, c: int, k: int) -> None:
    with pytest.raises(ValueError):
        pass_at_k(n, c, k)


@pytest.mark.parametrize(
    "x,n,low,high",
    [
        (8, 10, 0.4902, 0.9433),  # textbook Wilson 95 % values
        (0, 10, 0.0, 0.2775),
        (50, 100, 0.4038, 0.5962),
    ],
)
def test_wilson_interval_known_values(x: int, n: int, low: float, high: float) -> None:
    got = wilson_interval(x, n)
    assert got[0] == pytest.approx(low, abs=5e-4) and got[1] == pytest.approx(high, abs=5e-4)


def test_wilson_half_widths_quoted_in_the_spec() -> None:
    # distillation spec §7: around 43 %, about ±8 points at 150 problems and ±11 at 75.
    for n, half in ((150, 0.08), (75, 0.11)):
        low, high = wilson_interval(round(0.43 * n), n)
        assert (high - low) / 2 == pytest.approx(half, abs=0.005)


def test_bootstrap_matches_normal_interval_on_a_large_sample() -> None:
    values = np.random.default_rng(3).normal(0.4, 0.2, size=2000)
    low, high = bootstrap_interval(values, resamples=4000, seed=1)
    half = 1.96 * values.std(ddof=1) / np.sqrt(values.size)
    assert low == pytest.approx(values.mean() - half, abs=0.002)
    assert high == pytest.approx(values.mean() + half, abs=0.002)
    assert bootstrap_interval([0.5, 0.5, 0.5]) == (0.5, 0.5)


def test_group_metrics_count_missing_episodes_as_failures() -> None:
    # Problem b had only 1 of 4 episodes finish (success): c=1 over n=4, not 1/1.
    outcomes = [
        ProblemOutcome(problem_id="a", category="Product", n=4, c=4, greedy=True),
        ProblemOutcome(problem_id="b", category="Product", n=4, c=1, greedy=False),
    ]
    m = group_metrics(outcomes, 4, resamples=200)
    assert m.pass_at_1.value == pytest.approx((1 + 0.25) / 2)
    assert m.pass_at_k["4"].value == pytest.approx(1.0)
    assert m.pass_hat_k["2"].value == pytest.approx(0.5)
    assert m.greedy_asr is not None and m.greedy_asr.value == 0.5 and m.greedy_asr.method == "wilson"
    dumped = m.model_dump(by_alias=True)
    assert set(dumped["pass@k"]) == {"1", "2", "3", "4"} and "pass^k" in dumped and "pass@1" in dumped
