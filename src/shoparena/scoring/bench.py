"""The one scoring bench: problems, a product lookup and a title similarity, scoring a trajectory under both
profiles.

Every place that scores (eval, corpus ingest, the viewer, the pipeline's reference stage, ``arena run``, the
integrations, ``score``) builds a :class:`ScoringBench` and asks it, instead of assembling
``score_trajectory`` calls with its own similarity, lookup and problem table. Opening one from files (a suite
and an index) lives in :mod:`shoparena.suites.bench`, the layer that can read suites.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from shoparena.records.problem import Problem
from shoparena.records.trajectory import Trajectory
from shoparena.records.verdict import Verdict
from shoparena.scoring.format_reward import StepChecks
from shoparena.scoring.lookup import ProductLookup
from shoparena.scoring.profiles import OUTPUT_ROLES, SHOPPINGBENCH, STRICT, ScoringProfile, get_profile
from shoparena.scoring.scorer import RunScore, SlotMemo, score_run, score_trajectory
from shoparena.scoring.similarity import TitleSimilarity, get_similarity

#: Both profiles, in the order every summary lists them.
BOTH_PROFILES = (STRICT.name, SHOPPINGBENCH.name)


@dataclass(frozen=True, slots=True)
class BenchVerdicts:
    """One trajectory's verdicts under both profiles."""

    strict: Verdict
    shoppingbench: Verdict

    def of(self, scoring_profile: str) -> Verdict:
        """The verdict of ``scoring_profile`` (``strict`` or ``shoppingbench``)."""
        return self.strict if get_profile(scoring_profile).name == STRICT.name else self.shoppingbench


class ScoringBench:
    """Problems by id + a product lookup + a title similarity (a backend, or its name built on first use).

    Args:
        problems: The ground truth (a problem unknown to the bench cannot be scored).
        lookup: Resolves product ids (a ``SearchIndex``, a ``DictLookup``); None: nothing can be scored.
        similarity: A :class:`TitleSimilarity`, or its name (``exact``, ``lexical``, ``embedding``).
        model_path: The embedding model folder for ``similarity="embedding"``.
    """

    def __init__(
        self,
        problems: Iterable[Problem] | Mapping[str, Problem] = (),
        lookup: ProductLookup | None = None,
        similarity: TitleSimilarity | str = "lexical",
        *,
        model_path: str | Path | None = None,
    ) -> None:
        self.problems: dict[str, Problem] = (
            dict(problems) if isinstance(problems, Mapping) else {p.problem_id: p for p in problems}
        )
        self.lookup = lookup
        self._similarity = similarity
        self._model_path = model_path
        self._slot_memo = SlotMemo()  # both profiles and every miner's trajectory of a problem ask alike

    @property
    def similarity(self) -> TitleSimilarity:
        """The title backend (built from its name on first use: an embedding model loads only when needed)."""
        if isinstance(self._similarity, str):
            self._similarity = get_similarity(self._similarity, model_path=self._model_path)
        return self._similarity

    @property
    def similarity_name(self) -> str:
        return self._similarity if isinstance(self._similarity, str) else self._similarity.name

    @property
    def backend(self) -> str:
        """``name:version`` of the title backend (what a summary records)."""
        return f"{self.similarity.name}:{self.similarity.version}"

    def add_problems(self, problems: Iterable[Problem] | Mapping[str, Problem]) -> None:
        self.problems.update(
            problems if isinstance(problems, Mapping) else {p.problem_id: p for p in problems}
        )

    def unscorable(self, problem_id: str) -> str | None:
        """Why a trajectory of ``problem_id`` cannot be scored (None: it can)."""
        if problem_id not in self.problems:
            return "no ground truth"
        if self.lookup is None:
            return "no catalogue index"
        return None

    def verdict(
        self,
        problem: Problem,
        trajectory: Trajectory | None,
        scoring_profile: str | ScoringProfile = STRICT.name,
        *,
        title_threshold: float | None = None,
        format_roles: Sequence[str] = OUTPUT_ROLES,
        step_checks: StepChecks | None = None,
    ) -> Verdict:
        """The verdict of ``trajectory`` (None: the run has none) on ``problem`` under one profile
        (``step_checks``: format checks shared with the same trajectory's other profile)."""
        if self.lookup is None:
            raise ValueError("the scoring bench has no product lookup (no catalogue index)")
        return score_trajectory(
            problem,
            trajectory,
            self.lookup,
            scoring_profile=scoring_profile,
            similarity=self.similarity,
            title_threshold=title_threshold,
            format_roles=format_roles,
            slot_memo=self._slot_memo,
            step_checks=step_checks,
        )

    def score(self, trajectory: Trajectory, problem: Problem | None = None) -> BenchVerdicts | None:
        """Both profiles' verdicts of ``trajectory`` (on ``problem``, default: the bench's problem of the
        trajectory's id); None when it cannot be scored (:meth:`unscorable`)."""
        if problem is None:
            problem = self.problems.get(trajectory.problem_id or "")
        if problem is None or self.lookup is None:
            return None
        checks = StepChecks()  # the steps' format checks without results: the same under both profiles
        return BenchVerdicts(
            strict=self.verdict(problem, trajectory, STRICT.name, step_checks=checks),
            shoppingbench=self.verdict(problem, trajectory, SHOPPINGBENCH.name, step_checks=checks),
        )

    def score_run(
        self,
        trajectories: Iterable[Trajectory],
        scoring_profile: str | ScoringProfile,
        problems: Sequence[Problem] | None = None,
        *,
        title_threshold: float | None = None,
        format_roles: Sequence[str] = OUTPUT_ROLES,
    ) -> RunScore:
        """Score every problem of a suite (default: the bench's, in insertion order) against a run's
        trajectories and aggregate under the profile."""
        if self.lookup is None:
            raise ValueError("the scoring bench has no product lookup (no catalogue index)")
        return score_run(
            list(problems if problems is not None else self.problems.values()),
            trajectories,
            self.lookup,
            scoring_profile=scoring_profile,
            similarity=self.similarity,
            title_threshold=title_threshold,
            format_roles=format_roles,
        )


__all__ = ["BOTH_PROFILES", "BenchVerdicts", "ScoringBench"]
