"""The same problem, policy and seed give the same verdict through every door: in process, Gymnasium,
HTTP (a real server) and verifiers (the installed release's v1 taskset scoring the planner's native
conversation as a ``vf.Trace``)."""

from __future__ import annotations

import asyncio

import pytest
from door_helpers import play_gym, play_http, play_in_process

from shoparena.agent_sdk.env_client import EnvClient
from shoparena.eval.server import LoopbackServer
from shoparena.integrations.gym import ShopGymEnv
from shoparena.integrations.http import create_app as create_env_app
from shoparena.integrations.tasks import ShopTaskSet

vf = pytest.importorskip("verifiers.v1", reason="verifiers>=0.4 (the v1 API) not installed")


def _native_trace(task, tasks: ShopTaskSet):
    """The rule-based planner's episode (native tool calls) on the task's problem, as a verifiers trace."""
    from shoparena.agents import get_agent
    from shoparena.env.episodes import run_episode
    from shoparena.formats.native import trajectory_to_chat

    problem = tasks.problem(task.data.problem_id)
    trajectory = run_episode(get_agent("planner"), problem, tasks.engine, env=tasks.new_env())
    chat = trajectory_to_chat(trajectory, [t["function"] for t in task.data.tool_defs])
    nodes = []
    for message in chat:
        if message["role"] == "assistant":
            calls = [
                vf.ToolCall(id=c["id"], name=c["function"]["name"], arguments=c["function"]["arguments"])
                for c in message.get("tool_calls") or []
            ]
            parsed = vf.AssistantMessage(content=message.get("content") or "", tool_calls=calls or None)
        elif message["role"] == "tool":
            parsed = vf.ToolMessage(tool_call_id=message["tool_call_id"], content=message["content"])
        elif message["role"] == "user":
            parsed = vf.UserMessage(content=message["content"])
        else:
            parsed = vf.SystemMessage(content=message["content"])
        nodes.append(vf.MessageNode(parent=len(nodes) - 1 if nodes else None, message=parsed,
                                    sampled=message["role"] == "assistant"))  # fmt: skip
    agent = vf.AgentInfo(config=vf.AgentConfig())
    return vf.Trace(task=vf.TraceTask(type=type(task).__name__, data=task.data), agent=agent, nodes=nodes)


@pytest.fixture(scope="module")
def verifiers_outputs(tasks) -> dict[str, dict]:
    """Every problem of the taskset scored by verifiers' own ``Task.score`` on the planner's trace."""
    from shoparena.integrations.verifiers_env import ShopTaskset, ShopTasksetConfig

    config = ShopTasksetConfig(suite="-", index="-", max_steps=tasks.env_options["max_steps"])
    taskset = ShopTaskset(config, tasks=tasks)
    out = {}
    for task in taskset:
        assert isinstance(task.data, vf.TaskData) and task.data.prompt and task.data.system_prompt
        trace = _native_trace(task, tasks)
        asyncio.run(task.score(trace))
        out[task.data.problem_id] = {"trace": trace, "task": task}
    return out


def test_verifiers_traces_are_scored_by_shoparena(verifiers_outputs, tasks) -> None:
    assert sorted(verifiers_outputs) == sorted(p.problem_id for p in tasks.problems)
    for out in verifiers_outputs.values():
        trace = out["trace"]
        verdict = trace.info["shop_verdict"]
        assert trace.rewards["success"].value == (1.0 if verdict["success"] else 0.0)
        assert trace.reward == trace.rewards["success"].value  # the one weighted reward
        assert trace.metrics["steps"] >= 2 and trace.metrics["rule"] == verdict["rule"]
        names = {t["function"]["name"] for t in out["task"].data.tool_defs}
        assert {"find_product", "recommend_product", "terminate"} <= names
        # the row is serialisable, as verifiers writes it into traces.jsonl
        assert vf.WireTaskData.model_validate_json(out["task"].data.model_dump_json()).problem_id
    assert any(o["trace"].rewards["success"].value == 1.0 for o in verifiers_outputs.values())


def test_every_door_gives_the_same_verdict(tasks, verifiers_outputs) -> None:
    gym_env = ShopGymEnv(tasks)
    with LoopbackServer(create_env_app(tasks)) as srv:
        client = EnvClient(f"http://127.0.0.1:{srv.port}", timeout=60)
        for problem in tasks.problems:
            pid = problem.problem_id
            verifiers_verdict = dict(verifiers_outputs[pid]["trace"].info["shop_verdict"])
            verifiers_verdict.pop("steps")
            doors = {
                "in-process": play_in_process(tasks, pid),
                "gymnasium": play_gym(gym_env, pid),
                "http": play_http(client, pid),
                "verifiers": verifiers_verdict,
            }
            reference = doors["in-process"]
            assert reference["recommended_ids"], f"{pid}: the planner recommended nothing"
            for door, verdict in doors.items():
                assert verdict == reference, f"{pid}: {door} differs from in-process"
