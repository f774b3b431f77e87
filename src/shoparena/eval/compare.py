"""``shoparena eval compare RUN_A RUN_B``: paired per-problem comparison of two evaluations.

Both runs must be on the same suite (content hash) and scored the same way (title backend and profile
rules); otherwise the comparison is refused. Per problem the statistic is the pass@1 estimate c/n (missing
episodes count as failures); the difference B − A gets a paired bootstrap interval over problems, and the
greedy successes get McNemar's exact test (two-sided binomial test on the discordant pairs).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from shoparena.eval.config import EvalConfig, EvalConfigError
from shoparena.eval.run import PROFILES, problem_outcomes, read_run
from shoparena.jsonl import sha256_file
from shoparena.records.eval import EvalSummary
from shoparena.records.problem import Problem
from shoparena.suites.loaders import load_suite


class CompareError(ValueError):
    """The two runs cannot be compared (different suites or scoring)."""


class PairedDifference(BaseModel):
    model_config = ConfigDict(extra="forbid")

    a: float
    b: float
    diff: float = Field(description="b − a")
    ci_low: float
    ci_high: float


class McNemar(BaseModel):
    model_config = ConfigDict(extra="forbid")

    a_only: int = Field(description="Problems A's greedy episode solved and B's did not.")
    b_only: int
    both: int
    neither: int
    p_value: float


class ProfileComparison(BaseModel):
    model_config = ConfigDict(extra="forbid")

    problems: int
    pass_at_1: PairedDifference
    greedy: McNemar | None = None
    greedy_asr: PairedDifference | None = None


class Comparison(BaseModel):
    model_config = ConfigDict(extra="forbid")

    run_a: str
    run_b: str
    suite_hash: str
    profiles: dict[str, ProfileComparison]


def mcnemar_exact(a_only: int, b_only: int) -> float:
    """Two-sided exact McNemar p: 2·P(X ≤ min(a_only, b_only)), X ~ Binomial(a_only + b_only, ½), ≤ 1."""
    n = a_only + b_only
    if n == 0:
        return 1.0
    k = min(a_only, b_only)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2.0**n
    return min(1.0, 2.0 * tail)


def paired_bootstrap(
    a: np.ndarray, b: np.ndarray, *, resamples: int = 2000, seed: int = 0
) -> tuple[float, float]:
    """95 % percentile interval of mean(b − a), resampling problems (pairs stay together)."""
    diff = b - a
    if diff.size == 0:
        return 0.0, 0.0
    if np.all(diff == diff[0]):
        return float(diff[0]), float(diff[0])
    rng = np.random.default_rng(seed)
    means = diff[rng.integers(0, diff.size, size=(resamples, diff.size))].mean(axis=1)
    return float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975))


def _difference(a: np.ndarray, b: np.ndarray, resamples: int, seed: int) -> PairedDifference:
    low, high = paired_bootstrap(a, b, resamples=resamples, seed=seed)
    return PairedDifference(
        a=float(a.mean()), b=float(b.mean()), diff=float((b - a).mean()), ci_low=low, ci_high=high
    )


def _suite_path(run_dir: Path, suite: Path, sha256: str) -> Path:
    """The run's suite file: as recorded, or (recorded relative to the directory a pipeline started in) the
    same relative path under one of the run directory's parents, accepted only with the recorded hash."""
    if suite.is_absolute() or suite.exists():
        return suite
    for parent in run_dir.resolve().parents:
        candidate = parent / suite
        if candidate.is_file() and sha256_file(candidate) == sha256:
            return candidate
    return suite


def run_problems(run: str | Path, summary: EvalSummary, config: EvalConfig) -> list[Problem]:
    """The problems a finished run evaluated: its suite reloaded (and cut to ``limit``)."""
    try:
        problems, _ = load_suite(_suite_path(Path(run), config.suite, summary.suite.sha256))
    except Exception as exc:
        raise EvalConfigError(f"{run}: cannot reload its suite {config.suite}: {exc}") from None
    return problems[: config.limit] if config.limit is not None else problems


def compare_runs(run_a: str | Path, run_b: str | Path, *, resamples: int = 2000, seed: int = 0) -> Comparison:
    """Compare two finished eval run directories problem by problem, under both profiles.

    Raises:
        CompareError: different suites (content hash) or different scoring (title backend).
        EvalConfigError: a directory is not a finished eval run.
    """
    summary_a, records_a, config_a = read_run(run_a)
    summary_b, records_b, config_b = read_run(run_b)
    hash_a, hash_b = summary_a.suite.content_hash, summary_b.suite.content_hash
    if hash_a != hash_b:
        raise CompareError(
            f"different suites: {run_a} evaluated {summary_a.suite.path} ({hash_a[:12]}), "
            f"{run_b} evaluated {summary_b.suite.path} ({hash_b[:12]})"
        )
    scoring_a, scoring_b = summary_a.scoring, summary_b.scoring
    for key in ("title_backend", "profiles", "denominator"):
        if scoring_a.get(key) != scoring_b.get(key):
            raise CompareError(
                f"different scoring ({key}): {run_a} {scoring_a.get(key)!r} vs {run_b} {scoring_b.get(key)!r}"
            )
    problems = run_problems(run_a, summary_a, config_a)
    out: dict[str, ProfileComparison] = {}
    for profile in PROFILES:
        oa = problem_outcomes(problems, records_a, config_a, profile)
        ob = problem_outcomes(problems, records_b, config_b, profile)
        pa = np.array([o.c / o.n for o in oa])
        pb = np.array([o.c / o.n for o in ob])
        result = ProfileComparison(problems=len(problems), pass_at_1=_difference(pa, pb, resamples, seed))
        if all(o.greedy is not None for o in (*oa, *ob)):
            ga = np.array([float(bool(o.greedy)) for o in oa])
            gb = np.array([float(bool(o.greedy)) for o in ob])
            result.greedy, result.greedy_asr = _greedy(ga, gb, resamples, seed)
        out[profile] = result
    return Comparison(run_a=str(run_a), run_b=str(run_b), suite_hash=hash_a, profiles=out)


def _greedy(ga: np.ndarray, gb: np.ndarray, resamples: int, seed: int) -> tuple[McNemar, PairedDifference]:
    """McNemar's exact test and the paired difference of two greedy success vectors (B − A)."""
    a_only = int(((ga == 1) & (gb == 0)).sum())
    b_only = int(((ga == 0) & (gb == 1)).sum())
    test = McNemar(
        a_only=a_only,
        b_only=b_only,
        both=int(((ga == 1) & (gb == 1)).sum()),
        neither=int(((ga == 0) & (gb == 0)).sum()),
        p_value=mcnemar_exact(a_only, b_only),
    )
    return test, _difference(ga, gb, resamples, seed)


def compare_to_shortcut(run: str | Path, *, resamples: int = 2000, seed: int = 0) -> Comparison:
    """The run's greedy episodes (B) against the no-LLM shortcut (A: search the request verbatim, recommend
    the top hit) on the same problems, problem by problem, under both profiles (the shortcut is replayed on
    the run's own index and title backend, so the pairs are exact)."""
    from shoparena.eval.run import shortcut_wins
    from shoparena.search import SearchIndex

    summary, records, config = read_run(run)
    problems = run_problems(run, summary, config)
    engine = SearchIndex.open(config.index)
    floor = shortcut_wins(problems, engine, config.similarity)
    out: dict[str, ProfileComparison] = {}
    for profile in PROFILES:
        outcomes = problem_outcomes(problems, records, config, profile)
        if any(o.greedy is None for o in outcomes):
            raise CompareError(f"{run}: no greedy episode per problem to pair with the shortcut")
        ga = np.array([float(w) for w in floor[profile]])
        gb = np.array([float(bool(o.greedy)) for o in outcomes])
        greedy, asr = _greedy(ga, gb, resamples, seed)
        out[profile] = ProfileComparison(problems=len(problems), pass_at_1=asr, greedy=greedy, greedy_asr=asr)
    return Comparison(run_a="shortcut", run_b=str(run), suite_hash=summary.suite.content_hash, profiles=out)


__all__ = [
    "CompareError",
    "Comparison",
    "compare_runs",
    "compare_to_shortcut",
    "mcnemar_exact",
    "paired_bootstrap",
    "run_problems",
]
