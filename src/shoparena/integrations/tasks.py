"""What every door into :class:`~shoparena.env.ShopEnv` shares: the task set, the text rendering, the verdict.

A :class:`ShopTaskSet` holds the search engine, the problems and the environment options; every adapter
(Gymnasium, verifiers, the HTTP server) builds its environments with :meth:`ShopTaskSet.new_env` and scores
finished episodes with :meth:`ShopTaskSet.score`, so the same problem, policy and seed give the same verdict
through every door. ``env_options`` are passed to ``ShopEnv(...)`` unchanged (``tools``, ``max_steps``, and
whatever rendering options the environment grows).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from shoparena.env.environment import DEFAULT_MAX_STEPS, Observation, ShopEnv, TerminationReason
from shoparena.env.episodes import suite_knowledge
from shoparena.env.knowledge import KnowledgeBase
from shoparena.records.problem import Problem
from shoparena.records.trajectory import Trajectory
from shoparena.records.verdict import Verdict
from shoparena.runs.manifest import manifest_path
from shoparena.scoring.bench import ScoringBench
from shoparena.scoring.similarity import TitleSimilarity
from shoparena.search import SearchIndex


class TaskSetError(ValueError):
    """A task set that cannot be built or a problem it does not hold (one line, names the input)."""


@dataclass(slots=True)
class ShopTaskSet:
    """Problems over one search engine, with the environment options and the scoring profile.

    Attributes:
        engine: Search backend; also the product lookup of the scorer.
        problems: The suite, in file order.
        scoring_profile: Scoring profile of the verdict (``strict`` or ``shoppingbench``).
        similarity: Title similarity backend name (``lexical``, ``exact``).
        knowledge: Knowledge base behind ``web_search`` (None: none, or catalog-derived when loaded).
        env_options: Keyword arguments for ``ShopEnv`` (``max_steps``, ``tools``, rendering options).
    """

    engine: Any
    problems: list[Problem]
    scoring_profile: str = "strict"
    similarity: str = "lexical"
    knowledge: KnowledgeBase | None = None
    env_options: dict[str, Any] = field(default_factory=dict)
    _by_id: dict[str, Problem] = field(default_factory=dict, repr=False)
    _bench: ScoringBench | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if not self.problems:
            raise TaskSetError("task set: the suite has no problems")
        self._by_id = {p.problem_id: p for p in self.problems}
        self.env_options.setdefault("max_steps", DEFAULT_MAX_STEPS)

    @classmethod
    def load(
        cls,
        suite: str | Path,
        index: str | Path,
        *,
        kb: Sequence[str | Path] = (),
        scoring_profile: str = "strict",
        similarity: str = "lexical",
        **env_options: Any,
    ) -> ShopTaskSet:
        """Open ``index`` and read ``suite`` (every problem must load: a quarantined one is an error)."""
        from shoparena.suites.loaders import load_suite

        suite_path, index_path = Path(suite), Path(index)
        if not suite_path.is_file():
            raise TaskSetError(f"{suite_path}: suite file not found")
        if not manifest_path(index_path).is_file():
            raise TaskSetError(f"{index_path}: not a search index directory (no manifest.json)")
        problems, summary = load_suite(suite_path)
        if summary.quarantined:
            raise TaskSetError(f"{suite_path}: {summary.quarantined} problem(s) quarantined; fix the suite")
        engine = SearchIndex.open(index_path)
        knowledge = suite_knowledge(engine, suite_path, extra=list(kb))
        return cls(
            engine=engine,
            problems=problems,
            scoring_profile=scoring_profile,
            similarity=similarity,
            knowledge=knowledge,
            env_options=dict(env_options),
        )

    def problem(self, problem_id: str) -> Problem:
        """The problem with this id (:class:`TaskSetError` naming it when absent)."""
        try:
            return self._by_id[problem_id]
        except KeyError:
            raise TaskSetError(f"task set: no problem {problem_id!r} in the suite") from None

    def pick(self, seed: int | None = None, rng: np.random.Generator | None = None) -> Problem:
        """A problem drawn by ``rng`` (or by a generator seeded with ``seed``): the seed-to-problem rule."""
        generator = rng if rng is not None else np.random.default_rng(seed)
        return self.problems[int(generator.integers(len(self.problems)))]

    def new_env(self, **overrides: Any) -> ShopEnv:
        """A fresh environment with the task set's options (``overrides`` win)."""
        options = {**self.env_options, **overrides}
        options.setdefault("knowledge", self.knowledge)
        return ShopEnv(self.engine, **options)

    @property
    def bench(self) -> ScoringBench:
        """The scoring bench: the suite over the engine with the task set's title similarity."""
        if self._bench is None:
            self._bench = ScoringBench(self._by_id, self.engine, self.similarity)
        return self._bench

    @property
    def similarity_backend(self) -> TitleSimilarity:
        return self.bench.similarity

    def score(self, problem: Problem, trajectory: Trajectory) -> Verdict:
        """The verdict of a finished episode under the task set's profile."""
        return self.bench.verdict(problem, trajectory, self.scoring_profile)


def observation_text(observation: Observation) -> str:
    """The text an LLM policy reads for its next step: the environment's own user prompt (the request and
    the dialogue so far, with every tool result), as rendered by ``Observation.messages()``."""
    return observation.messages()[-1]["content"]


#: Longest observation (characters) a door sends: a 30-step dialogue with full tool results stays far below;
#: 30 steps of 32 ``view_product_information`` calls of 100 ids each reached 48.9 M characters.
MAX_OBSERVATION_CHARS = 2_000_000


def bounded_observation(env: ShopEnv, observation: Observation, cap: int = MAX_OBSERVATION_CHARS) -> str:
    """:func:`observation_text`, or, when it is over ``cap`` characters, one line saying so: the episode is
    then ended as the policy's failure (``agent_error``: its calls asked for that much), so no door holds
    or sends an unbounded observation."""
    text = observation_text(observation)
    if len(text) <= cap:
        return text
    message = (
        f"observation of {len(text):,} characters is over the cap of {cap:,}: the episode is ended "
        "(ask for fewer or smaller tool results per step)"
    )
    env.fail(TerminationReason.AGENT_ERROR, message)
    return f"Error: {message}"


def verdict_summary(verdict: Verdict) -> dict[str, Any]:
    """The verdict as every door shows it to a policy or a remote client: its public form
    (:meth:`Verdict.public_view`: outcome, scores, ids and which checks passed, never the ground truth).
    The same for every door, with no run id and no timing, so doors can be compared."""
    return verdict.public_view()


__all__ = [
    "MAX_OBSERVATION_CHARS",
    "ShopTaskSet",
    "TaskSetError",
    "bounded_observation",
    "observation_text",
    "verdict_summary",
]
