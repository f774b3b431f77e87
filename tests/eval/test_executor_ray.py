"""`eval run --executor ray`: one Ray task per problem, the in-process outcomes, the same resume."""

from __future__ import annotations

import json

import pytest
from kill_helpers import run_until_killed

from shoparena.eval.config import EvalConfigError
from shoparena.eval.run import run_eval

ray = pytest.importorskip("ray", reason="Ray not installed (pip install 'shoparena[scale]')")


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def outcomes(root, keys: tuple[str, ...] = ("steps", "calls")) -> dict[tuple[str, int], tuple]:
    """Per episode: status, termination, both profiles' success, steps and model calls (no timings)."""
    rows = [json.loads(line) for line in (root / "episodes.jsonl").read_text().split("\n") if line.strip()]
    keys = ("status", "termination_reason", "success_strict", "success_shoppingbench", *keys)
    return {(r["problem_id"], r["sample_idx"]): tuple(r[k] for k in keys) for r in rows}


@pytest.fixture
def in_process(make_config):
    config = make_config("planner", out="process", samples=2, concurrency=2)
    return config, run_eval(config).dump()


def test_ray_matches_the_in_process_run(make_config, in_process, local_ray) -> None:
    config, expected = in_process
    by_ray = make_config("planner", out="ray", samples=2, concurrency=2, executor="ray")
    summary = run_eval(by_ray).dump()
    assert len(outcomes(config.out)) == expected["episodes"]["expected"] == 12
    assert outcomes(by_ray.out) == outcomes(config.out)
    assert any(row[2] for row in outcomes(config.out).values())  # successes: the match means something
    assert summary["profiles"] == expected["profiles"] and summary["policy"] == expected["policy"]
    assert summary["episodes"] == expected["episodes"]


def test_a_killed_ray_run_resumes_exactly_the_missing_episodes(make_config, in_process, local_ray) -> None:
    reference, _ = in_process
    config = make_config("planner", out="killed", samples=2, concurrency=2, executor="ray")
    run_until_killed(config, after=3)
    before = outcomes(config.out)
    assert len(before) == 3  # the driver writes the run directory: nothing lands after the kill
    # Resume on the other executor: the run directory does not depend on which one played an episode.
    resumed = run_eval(config.model_copy(update={"executor": "process"})).dump()
    assert resumed["throughput"]["episodes_this_call"] == 12 - 3
    assert outcomes(config.out) == outcomes(reference.out)
    again = run_eval(config).dump()
    assert again["throughput"]["episodes_this_call"] == 0


def test_openai_policy_over_ray_workers_against_a_loopback_server(make_config, in_process, local_ray) -> None:
    from shoparena.eval.server import LoopbackServer, create_app
    from shoparena.llm.planner_backend import PlannerBackend

    reference, _ = in_process
    with LoopbackServer(create_app(PlannerBackend(), "planner")) as server:
        config = make_config(
            f"openai:{server.base_url}#planner", out="http", samples=2, concurrency=2, executor="ray"
        )
        summary = run_eval(config).dump()
    assert summary["policy"]["kind"] == "openai"
    # The same planner behind the OpenAI client: the same episodes, now with one model call per turn.
    assert outcomes(config.out, ("steps",)) == outcomes(reference.out, ("steps",))
    assert all(calls >= 1 for *_, calls in outcomes(config.out).values())


def test_miner_policies_and_ready_backends_are_refused_on_ray(make_config, local_ray) -> None:
    with pytest.raises(EvalConfigError, match="miner: policies run behind this process's sandbox proxy"):
        run_eval(make_config("miner:agentic", out="m", executor="ray"))
    with pytest.raises(EvalConfigError, match="Ray workers build their own backend"):
        run_eval(make_config("openai:http://127.0.0.1:9/v1#x", out="b", executor="ray"), backend=object())
