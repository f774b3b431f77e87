"""Episode executors: a local process pool and Ray give identical per-problem outcomes, and both resume."""

from __future__ import annotations

import json

import pytest

from shoparena.arena.executor import (
    EpisodeTask,
    ExecutorUnavailableError,
    ProcessExecutor,
    get_executor,
    run_episode_tasks,
)
from shoparena.formats.io import read_trajectories
from shoparena.suites.loaders import load_suite
from shoparena.suites.synth import SynthOptions, synthesize_bank


@pytest.fixture(scope="module")
def tasks(synth, tmp_path_factory):
    index_dir = synth.catalog.parent / "index"
    bank = tmp_path_factory.mktemp("bank") / "bank.json"
    synthesize_bank(index_dir, bank, SynthOptions(n=12, seed=4))
    problems, _ = load_suite(bank)
    return [
        EpisodeTask(p.model_dump_json(), str(index_dir), run_id="exec", suite_path=str(bank))
        for p in problems
    ]


def outcomes(path) -> dict[str, tuple]:
    """Per problem: status, termination, and every step's calls and answer (no ids or timestamps)."""
    out = {}
    for traj in read_trajectories(path):
        steps = [
            (tuple((c.name, json.dumps(c.parameters, sort_keys=True)) for c in s.tool_calls), s.response)
            for s in traj.steps
        ]
        out[traj.problem_id] = (traj.status.value, traj.meta.get("termination_reason"), tuple(steps))
    return out


def test_process_pool_runs_every_problem_and_resumes(tasks, tmp_path):
    out = tmp_path / "output.jsonl"
    first = run_episode_tasks(ProcessExecutor(2), tasks[:5], out)
    assert first["written"] == 5 and first["skipped"] == 0
    seen = []
    second = run_episode_tasks(ProcessExecutor(2), tasks, out, on_result=lambda r: seen.append(r.problem_id))
    assert second["skipped"] == 5 and second["written"] == len(tasks) - 5
    assert len(seen) == len(tasks) - 5
    assert len(outcomes(out)) == len(out.read_text().splitlines()) == len(tasks)


def test_ray_gives_the_same_per_problem_outcomes_as_the_process_pool(tasks, tmp_path):
    ray = pytest.importorskip("ray", reason="Ray not installed (pip install 'shoparena[scale]')")
    pool_out, ray_out = tmp_path / "pool.jsonl", tmp_path / "ray.jsonl"
    run_episode_tasks(ProcessExecutor(2), tasks, pool_out)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        executor = get_executor("ray", workers=2)
        assert executor.name == "ray"
        counts = run_episode_tasks(executor, tasks, ray_out)
    finally:
        ray.shutdown()
    assert counts["written"] == len(tasks)
    pool, by_ray = outcomes(pool_out), outcomes(ray_out)
    assert set(pool) == {json.loads(t.problem_json)["problem_id"] for t in tasks}
    assert by_ray == pool
    assert any(status == "SUCCESS" for status, _, _ in pool.values())


def test_unknown_executor_and_bad_workers_are_rejected():
    with pytest.raises(ValueError, match="unknown executor 'dask'"):
        get_executor("dask")
    with pytest.raises(ValueError, match="workers must be >= 1"):
        ProcessExecutor(0)
    assert issubclass(ExecutorUnavailableError, RuntimeError)
