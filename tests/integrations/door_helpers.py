"""One policy (the rule-based planner) driven through each door; each returns the verdict summary."""

from __future__ import annotations

from shoparena.agent_sdk.env_client import EnvClient
from shoparena.agents import get_agent
from shoparena.env.episodes import run_episode
from shoparena.integrations.gym import ShopGymEnv
from shoparena.integrations.tasks import ShopTaskSet, verdict_summary
from shoparena.llm.planner_backend import PlannerBackend
from shoparena.llm.types import ChatRequest


def _tagged(system: str, observation: str) -> str:
    request = ChatRequest(
        messages=[{"role": "system", "content": system}, {"role": "user", "content": observation}]
    )
    return PlannerBackend(mode="xml").complete(request).content


def play_in_process(tasks: ShopTaskSet, problem_id: str) -> dict:
    problem = tasks.problem(problem_id)
    traj = run_episode(get_agent("planner"), problem, tasks.engine, env=tasks.new_env())
    return verdict_summary(tasks.score(problem, traj))


def play_gym(env: ShopGymEnv, problem_id: str) -> dict:
    obs, info = env.reset(options={"problem_id": problem_id})
    system = info["system_prompt"]
    while True:
        obs, reward, terminated, truncated, info = env.step(_tagged(system, obs))
        if terminated or truncated:
            assert reward == (1.0 if info["verdict"]["success"] else 0.0)
            return info["verdict"]


def play_http(client: EnvClient, problem_id: str) -> dict:
    episode = client.reset(problem_id=problem_id)
    while not episode.done:
        episode = client.step(episode.session_id, _tagged(episode.system_prompt, episode.observation))
    client.close(episode.session_id)
    assert episode.verdict is not None
    assert episode.reward == (1.0 if episode.verdict["success"] else 0.0)
    return episode.verdict
