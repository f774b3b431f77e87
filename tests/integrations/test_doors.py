"""The same problem, policy and seed give the same verdict through every door: in process, Gymnasium,
HTTP (a real server) and verifiers (its own evaluation against ``eval serve``'s OpenAI-compatible app)."""

from __future__ import annotations

import pytest
from door_helpers import play_gym, play_http, play_in_process
from openai import AsyncOpenAI
from verifiers.clients import OpenAIChatCompletionsClient

from shoparena.agent_sdk.env_client import EnvClient
from shoparena.eval.server import LoopbackServer
from shoparena.eval.server import create_app as create_chat_app
from shoparena.integrations.gym import ShopGymEnv
from shoparena.integrations.http import create_app as create_env_app
from shoparena.integrations.verifiers_env import ShopVerifiersEnv
from shoparena.llm.planner_backend import MODEL_NAME, PlannerBackend


@pytest.fixture(scope="module")
def verifiers_outputs(tasks) -> dict[str, dict]:
    """Every problem evaluated once by verifiers, the planner served over HTTP as a chat model."""
    env = ShopVerifiersEnv(tasks)
    with LoopbackServer(create_chat_app(PlannerBackend(mode="native"), MODEL_NAME)) as chat:
        client = OpenAIChatCompletionsClient(AsyncOpenAI(base_url=chat.base_url, api_key="offline"))
        results = env.evaluate_sync(client, model=MODEL_NAME, state_columns=["shop_verdict"])
    return {o["info"]["problem_id"]: o for o in results["outputs"]}


def test_verifiers_rollouts_are_scored_by_shoparena(verifiers_outputs, tasks) -> None:
    assert sorted(verifiers_outputs) == sorted(p.problem_id for p in tasks.problems)
    for out in verifiers_outputs.values():
        assert out["error"] is None and out["is_completed"]
        assert out["reward"] == (1.0 if out["shop_verdict"]["success"] else 0.0)
        assert out["metrics"]["steps"] >= 2
        tool_turns = [m for m in out["completion"] if m["role"] == "tool"]
        assert tool_turns and all(m["content"] for m in tool_turns)
    assert any(o["reward"] == 1.0 for o in verifiers_outputs.values())


def test_every_door_gives_the_same_verdict(tasks, verifiers_outputs) -> None:
    gym_env = ShopGymEnv(tasks)
    with LoopbackServer(create_env_app(tasks)) as srv:
        client = EnvClient(f"http://127.0.0.1:{srv.port}", timeout=60)
        for problem in tasks.problems:
            pid = problem.problem_id
            doors = {
                "in-process": play_in_process(tasks, pid),
                "gymnasium": play_gym(gym_env, pid),
                "http": play_http(client, pid),
                "verifiers": verifiers_outputs[pid]["shop_verdict"],
            }
            reference = doors["in-process"]
            assert reference["recommended_ids"], f"{pid}: the planner recommended nothing"
            for door, verdict in doors.items():
                assert verdict == reference, f"{pid}: {door} differs from in-process"
