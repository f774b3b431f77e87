"""Where per-problem episode tasks run: a local process pool or a Ray cluster, same results either way.

One task is one problem. A task is a small picklable :class:`EpisodeTask` (paths + the problem as JSON), so it
ships to a Ray worker on another node as easily as to a local process; each worker opens the search index once
and caches it. The caller appends results to the run directory's ``output.jsonl`` in the parent process as
they complete, so an interrupted run resumes with the problems still missing, whichever executor ran the rest.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shoparena.runs.machine import MIB, default_workers

EXECUTORS = ("process", "ray")
#: Resident memory of one episode worker process (its index handle and knowledge base).
EPISODE_WORKER_MEMORY_BYTES = 512 * MIB


class ExecutorUnavailableError(RuntimeError):
    """The requested executor cannot start here (e.g. Ray not installed)."""


@dataclass(frozen=True)
class EpisodeTask:
    """One problem for one agent: everything a worker needs, nothing it must share."""

    problem_json: str
    index_dir: str
    agent: str = "planner"
    run_id: str = ""
    max_steps: int = 20
    suite_path: str | None = None


@dataclass(frozen=True)
class EpisodeResult:
    problem_id: str
    envelope: dict[str, Any]
    status: str
    termination: str
    steps: int


_WORKER_CACHE: dict[tuple[str, str | None], tuple[Any, Any]] = {}


def _engine_and_knowledge(index_dir: str, suite_path: str | None) -> tuple[Any, Any]:
    key = (index_dir, suite_path)
    if key not in _WORKER_CACHE:
        from shoparena.env.episodes import suite_knowledge
        from shoparena.search import SearchIndex

        engine = SearchIndex.open(index_dir)
        _WORKER_CACHE[key] = (engine, suite_knowledge(engine, suite_path))
    return _WORKER_CACHE[key]


def play_episode_task(task: EpisodeTask) -> EpisodeResult:
    """Run one episode (in whatever process or node the executor chose) and return its ORO envelope line."""
    from shoparena.agents import get_agent
    from shoparena.env.episodes import run_episode
    from shoparena.formats.oro import to_oro_envelope
    from shoparena.records.problem import Problem

    engine, knowledge = _engine_and_knowledge(task.index_dir, task.suite_path)
    problem = Problem.model_validate_json(task.problem_json)
    traj = run_episode(
        get_agent(task.agent),
        problem,
        engine,
        run_id=task.run_id,
        max_steps=task.max_steps,
        knowledge=knowledge,
    )
    return EpisodeResult(
        problem_id=problem.problem_id,
        envelope=to_oro_envelope(traj),
        status=traj.status.value,
        termination=str(traj.meta.get("termination_reason")),
        steps=len(traj.steps),
    )


class ProcessExecutor:
    """A local process pool (one task per problem)."""

    name = "process"

    def __init__(self, workers: int = 2) -> None:
        if workers < 1:
            raise ValueError(f"executor workers must be >= 1, got {workers}")
        self.workers = workers

    def imap(self, fn: Callable[[Any], Any], items: Sequence[Any], cpus_per_task: int = 1) -> Iterator[Any]:
        """Results in completion order (``cpus_per_task`` is a Ray resource; the pool runs one per worker)."""
        if not items:
            return
        with ProcessPoolExecutor(max_workers=min(self.workers, len(items))) as pool:
            for future in as_completed([pool.submit(fn, item) for item in items]):
                yield future.result()


class RayExecutor:
    """Ray tasks (one per problem) on a local ``ray.init(num_cpus=N)`` or a running cluster (``address``)."""

    name = "ray"

    def __init__(self, workers: int = 2, address: str | None = None) -> None:
        try:
            import ray
        except ImportError:
            raise ExecutorUnavailableError(
                "executor 'ray' needs Ray: pip install 'shoparena[scale]'"
            ) from None
        self._ray = ray
        if not ray.is_initialized():
            address = address or os.environ.get("RAY_ADDRESS")
            if address:
                ray.init(address=address, ignore_reinit_error=True, log_to_driver=False)
            else:
                ray.init(
                    num_cpus=workers, ignore_reinit_error=True, log_to_driver=False, include_dashboard=False
                )
        self.workers = workers

    def largest_node_cpus(self) -> int:
        """CPUs of the biggest node: a task asking for more could never be scheduled (it would hang)."""
        nodes = [n for n in self._ray.nodes() if n.get("Alive")]
        return max((int(n.get("Resources", {}).get("CPU", 1)) for n in nodes), default=1) or 1

    def imap(self, fn: Callable[[Any], Any], items: Sequence[Any], cpus_per_task: int = 1) -> Iterator[Any]:
        """Results in completion order; each task reserves ``cpus_per_task`` CPUs of the cluster."""
        ray = self._ray
        remote = ray.remote(num_cpus=min(cpus_per_task, self.largest_node_cpus()))(fn)
        pending = [remote.remote(item) for item in items]
        try:
            while pending:
                done, pending = ray.wait(pending, num_returns=1)
                for ref in done:
                    yield ray.get(ref)
        finally:
            for ref in pending:  # the caller stopped early (an error, a kill): no orphan tasks keep running
                ray.cancel(ref)

    def call(self, fn: Callable[[Any], Any], item: Any) -> Any:
        """Run ``fn(item)`` as one Ray task and return its result."""
        return self._ray.get(self._ray.remote(num_cpus=1)(fn).remote(item))


def get_executor(
    name: str, workers: int | None = None, address: str | None = None
) -> ProcessExecutor | RayExecutor:
    """The named executor with ``workers`` processes or Ray CPUs (None: one per usable CPU, within memory)."""
    if workers is None:
        workers = default_workers(EPISODE_WORKER_MEMORY_BYTES)
    if name == "process":
        return ProcessExecutor(workers)
    if name == "ray":
        return RayExecutor(workers, address=address)
    raise ValueError(f"unknown executor {name!r}; known: {list(EXECUTORS)}")


def run_episode_tasks(
    executor: ProcessExecutor | RayExecutor,
    tasks: Sequence[EpisodeTask],
    out_path: str | Path,
    *,
    on_result: Callable[[EpisodeResult], None] | None = None,
) -> dict[str, int]:
    """Run the tasks whose problem is not yet in ``out_path``; append each envelope as it completes.

    Returns:
        ``{"problems", "skipped", "written"}`` plus a count per trajectory status.
    """
    from shoparena.records.problem import Problem
    from shoparena.runs.envelopes import EnvelopeLog

    log = EnvelopeLog(out_path)  # the one envelope writer: torn tails cut, problems never written twice
    done = log.done()
    todo = [t for t in tasks if Problem.model_validate_json(t.problem_json).problem_id not in done]
    counts: dict[str, int] = {"problems": len(tasks), "skipped": len(tasks) - len(todo), "written": 0}
    for result in executor.imap(play_episode_task, todo):
        if log.append(result.envelope):
            counts["written"] += 1
            counts[result.status] = counts.get(result.status, 0) + 1
        if on_result is not None:
            on_result(result)
    return counts
