"""Hostile actions are classified the same by every door (issue 52): a tool call nested thousands deep and
an action over the 32,768-character cap are parse issues of the policy's step, never an exception
(which used to be the env server's ``infra_error``, a Gymnasium raise, a verifiers ``TaskError`` and
``eval run``'s ``agent_error``)."""

from __future__ import annotations

import asyncio
import dataclasses
import json

import pytest

from shoparena.agent_sdk.env_client import EnvClient
from shoparena.env.episodes import run_episode
from shoparena.eval.server import LoopbackServer
from shoparena.formats.scan import MAX_ACTION_CHARS
from shoparena.integrations.gym import ShopGymEnv
from shoparena.integrations.http import create_app as create_env_app
from shoparena.integrations.tasks import verdict_summary
from shoparena.records.trajectory import Trajectory

DEEP = "[" * 3_000 + "]" * 3_000
TAGGED = {
    "deep tool call": f'<tool_call>[{{"name": "find_product", "parameters": {{"q": {DEEP}}}}}]</tool_call>',
    "over the cap": "<tool_call>" + "x" * MAX_ACTION_CHARS + "</tool_call>",
}
NATIVE = {
    "deep arguments": {"role": "assistant", "content": "",
                       "tool_calls": [{"id": "c1", "function": {"name": "find_product", "arguments": DEEP}}]},
    "over the cap": {"role": "assistant", "content": "y" * (MAX_ACTION_CHARS + 1), "tool_calls": []},
}  # fmt: skip


def _outcome(traj: Trajectory) -> tuple:
    last = traj.steps[-1]
    return (
        traj.meta["termination_reason"],
        len(traj.steps),
        list(last.parse_errors),
        [c.invalid_reason for c in last.tool_calls],
        traj.status,
    )


class _Scripted:
    name = "scripted"

    def __init__(self, action) -> None:
        self.action = action

    def act(self, obs, tools):
        return self.action


def _in_process(tasks, problem, action) -> tuple:
    return _outcome(run_episode(_Scripted(action), problem, tasks.engine, env=tasks.new_env(max_steps=1)))


@pytest.fixture(scope="module")
def one_step_tasks(tasks):
    return dataclasses.replace(tasks, env_options={**tasks.env_options, "max_steps": 1})


@pytest.mark.parametrize("kind", sorted(TAGGED))
def test_tagged_hostile_action_is_the_same_parse_issue_at_every_door(one_step_tasks, kind: str) -> None:
    tasks, action = one_step_tasks, TAGGED[kind]
    problem = tasks.problems[0]
    outcomes = {"in-process": _in_process(tasks, problem, action)}
    env = ShopGymEnv(tasks)
    env.reset(options={"problem_id": problem.problem_id})
    env.step(action)  # the Gymnasium door used to raise RecursionError / accept any length
    outcomes["gymnasium"] = _outcome(env.trajectory())
    with LoopbackServer(create_env_app(tasks)) as srv:
        client = EnvClient(f"http://127.0.0.1:{srv.port}", timeout=60)
        episode = client.reset(problem_id=problem.problem_id)
        episode = client.step(episode.session_id, action)
        assert episode.done and episode.verdict is not None
        outcomes["http"] = _outcome(Trajectory.model_validate(client.trajectory(episode.session_id)))
    reference = outcomes["in-process"]
    assert reference[0] == "empty_step" and reference[4] == "SUCCESS"  # scored as the policy's step
    assert len(reference[2]) == 1
    expected = "nested deeper than 64" if kind.startswith("deep") else "over the cap of 32,768"
    assert expected in reference[2][0]
    for door, outcome in outcomes.items():
        assert outcome == reference, door


@pytest.mark.parametrize("kind", sorted(NATIVE))
def test_native_hostile_action_is_the_same_at_every_door(one_step_tasks, kind: str) -> None:
    vf = pytest.importorskip("verifiers.v1")
    from shoparena.integrations.verifiers_env import ShopTaskset, ShopTasksetConfig

    tasks, action = one_step_tasks, NATIVE[kind]
    problem = tasks.problems[0]
    reference = run_episode(_Scripted(action), problem, tasks.engine, env=tasks.new_env())
    assert reference.meta["termination_reason"] in ("empty_step", "max_steps")
    issue = [*reference.steps[0].parse_errors, *(c.invalid_reason for c in reference.steps[0].tool_calls)]
    assert any(("nested deeper" if kind.startswith("deep") else "over the cap") in str(i) for i in issue)
    with LoopbackServer(create_env_app(tasks)) as srv:
        client = EnvClient(f"http://127.0.0.1:{srv.port}", timeout=60)
        episode = client.reset(problem_id=problem.problem_id)
        episode = client.step(episode.session_id, action)
        http = Trajectory.model_validate(client.trajectory(episode.session_id))
    assert _outcome(http) == _outcome(reference)
    config = ShopTasksetConfig(suite="-", index="-", max_steps=1)
    task = next(t for t in ShopTaskset(config, tasks=tasks) if t.data.problem_id == problem.problem_id)
    calls = [vf.ToolCall(id=c["id"], name=c["function"]["name"], arguments=c["function"]["arguments"])
             for c in action["tool_calls"]]  # fmt: skip
    message = vf.AssistantMessage(content=action["content"], tool_calls=calls or None)
    trace = vf.Trace(task=vf.TraceTask(type=type(task).__name__, data=task.data),
                     agent=vf.AgentInfo(config=vf.AgentConfig()),
                     nodes=[vf.MessageNode(parent=None, message=message, sampled=True)])  # fmt: skip
    asyncio.run(task.score(trace))  # used to raise TaskError (RecursionError inside)
    expected = verdict_summary(tasks.score(problem, reference))
    assert {k: v for k, v in task.verdict(trace).items() if k != "steps"} == json.loads(json.dumps(expected))


def test_a_planted_verdict_in_trace_info_is_never_trusted(one_step_tasks) -> None:
    """Issue 52: the verifiers door read ``info["shop_verdict"]`` as a cache, so a harness that planted one
    made a trace that gives up score 1.0."""
    vf = pytest.importorskip("verifiers.v1")
    from shoparena.integrations.verifiers_env import ShopTaskset, ShopTasksetConfig

    tasks = one_step_tasks
    task = next(iter(ShopTaskset(ShopTasksetConfig(suite="-", index="-", max_steps=1), tasks=tasks)))
    trace = vf.Trace(task=vf.TraceTask(type=type(task).__name__, data=task.data),
                     agent=vf.AgentInfo(config=vf.AgentConfig()),
                     nodes=[vf.MessageNode(parent=None, message=vf.AssistantMessage(content="I give up"),
                                           sampled=True)])  # fmt: skip
    trace.info["shop_verdict"] = {"success": True, "rule": 1.0, "product": 1.0, "steps": 1}
    asyncio.run(task.score(trace))
    assert trace.rewards["success"].value == 0.0 and trace.info["shop_verdict"]["success"] is False
