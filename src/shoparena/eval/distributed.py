"""``eval run --executor ray``: one Ray task per problem, the run directory still written by this process.

A task carries the evaluation config (JSON), the run id and one problem with the sample indices it still
lacks; the worker builds the policy once (the search index, the knowledge base, the model or the client of an
OpenAI-compatible server such as vLLM) and keeps it for its later tasks. Finished episodes come back to the
driver, which scores them and appends them to ``output.jsonl`` / ``episodes.jsonl`` exactly as the in-process
path does, so resuming, the summary and ``eval compare`` do not depend on the executor.

``miner:`` policies are refused: they run in the arena sandbox behind this process's trusted proxy, whose
per-sample envelope logs under ``RUN/miner/`` must have a single writer (``arena firehose --executor ray``
distributes sandboxed runs by race instead).
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from shoparena.eval.config import EvalConfig
from shoparena.eval.policies import EpisodeResult, EpisodeSpec, InProcessPolicy, OnDone, policy_kind
from shoparena.records.problem import Problem

#: Per worker process: config JSON → (policy, thread pool), built by the first task of an evaluation and
#: reused by its later ones (a worker's next evaluation replaces it, so models do not pile up).
#: The pool outlives tasks so its threads keep their per-thread ShopEnv (a new env costs ~25 ms).
_WORKERS: dict[str, tuple[InProcessPolicy, ThreadPoolExecutor]] = {}


def _worker_policy(config_json: str) -> tuple[InProcessPolicy, ThreadPoolExecutor]:
    if config_json not in _WORKERS:
        from shoparena.env.episodes import suite_knowledge
        from shoparena.eval.config import load_problems
        from shoparena.eval.policies import build_policy
        from shoparena.search import SearchIndex

        for old_policy, old_pool in _WORKERS.values():  # one evaluation per worker at a time: free the last
            old_pool.shutdown(wait=False)
            old_policy.close()
        _WORKERS.clear()
        config = EvalConfig.model_validate_json(config_json)
        engine = SearchIndex.open(config.index)
        web = any(p.intent.value == "web" for p in load_problems(config))
        knowledge = suite_knowledge(engine, config.suite, config.kb) if web else None
        policy = build_policy(config, engine, knowledge)
        if not isinstance(policy, InProcessPolicy):  # RayPolicy refuses miner: before any task is sent
            raise TypeError(f"--policy {config.policy!r} cannot run on a Ray worker")
        pool = ThreadPoolExecutor(max_workers=config.concurrency, thread_name_prefix="eval-ray")
        _WORKERS[config_json] = (policy, pool)
    return _WORKERS[config_json]


def describe_task(config_json: str) -> dict[str, Any]:
    """The policy's description, as the worker that built it sees it."""
    return _worker_policy(config_json)[0].describe()


ProblemTask = tuple[
    str, str, str, list[tuple[int, str]]
]  # config JSON, run id, problem JSON, (idx, decoding)


def play_problem_task(item: ProblemTask) -> tuple[str, list[tuple[int, EpisodeResult]]]:
    """Play one problem's missing episodes on a worker: ``(problem_id, [(sample_idx, result), ...])``."""
    config_json, run_id, problem_json, plan = item
    problem = Problem.model_validate_json(problem_json)
    policy, pool = _worker_policy(config_json)
    specs = [EpisodeSpec(problem, idx, mode) for idx, mode in plan]
    results = pool.map(lambda spec: policy.play_or_fail(spec, run_id), specs)
    return problem.problem_id, [
        (spec.sample_idx, result) for spec, result in zip(specs, results, strict=True)
    ]


class RayPolicy:
    """A :class:`~shoparena.eval.policies.Policy` whose episodes run as Ray tasks, one per problem.

    Raises:
        ValueError: a ``miner:`` policy (see the module docstring).
        ExecutorUnavailableError: Ray is not installed.
    """

    def __init__(self, config: EvalConfig) -> None:
        kind = policy_kind(config.policy)
        if kind is not None and kind.name == "miner":
            raise ValueError(
                f"--policy {config.policy!r} with --executor ray: miner: policies run behind this process's "
                "sandbox proxy; use --executor process (arena firehose --executor ray spreads races instead)"
            )
        from shoparena.arena.executor import RayExecutor

        self.config = config
        self.config_json = config.model_copy(update={"progress": False}).model_dump_json()
        # A local ray.init gets ``concurrency`` CPUs: one episode task per CPU, as the in-process path.
        self.executor = RayExecutor(config.concurrency, address=config.ray_address)
        self.info = self.executor.call(describe_task, self.config_json)
        self.name, self.kind = str(self.info.get("name", "")), str(self.info.get("kind", ""))

    def run(self, episodes: Sequence[EpisodeSpec], on_done: OnDone, run_id: str = "") -> None:
        by_problem: dict[str, list[EpisodeSpec]] = {}
        for spec in episodes:
            by_problem.setdefault(spec.problem.problem_id, []).append(spec)
        items: list[ProblemTask] = [
            (
                self.config_json,
                run_id,
                specs[0].problem.model_dump_json(),
                [(s.sample_idx, s.decoding) for s in specs],
            )
            for specs in by_problem.values()
        ]
        for problem_id, finished in self.executor.imap(play_problem_task, items):
            specs = {s.sample_idx: s for s in by_problem[problem_id]}
            for sample_idx, result in finished:
                on_done(specs[sample_idx], result)

    def describe(self) -> dict[str, Any]:
        return dict(self.info)

    def close(self) -> None:
        """Workers keep their cached policies; Ray (local or cluster) is left to its owner."""


__all__ = ["RayPolicy", "describe_task", "play_problem_task"]
