"""``ShopEnv`` as a `verifiers <https://github.com/PrimeIntellect-ai/verifiers>`_ environment (native tools).

:func:`load_environment` returns a :class:`ShopVerifiersEnv`, a multi-turn tool environment whose per-rollout
state is one ``ShopEnv`` episode: every assistant turn (its OpenAI ``tool_calls``) is one ``ShopEnv.step``,
the tool messages are the environment's own results (rendered as the native format renders them), and the
environment's stop rules end the rollout (``terminate``, a turn without calls, the step cap). The rubric is
shoparena's scorer: reward = 1.0 when the verdict under the task set's profile (``strict`` by default) is a
success, with the rule score, the product share and the format score as metrics.

Evaluate against any OpenAI-compatible endpoint, ``shoparena eval serve`` included::

    from openai import AsyncOpenAI
    from verifiers.clients import OpenAIChatCompletionsClient
    env = load_environment(suite="bank.json", index="index/")
    client = OpenAIChatCompletionsClient(AsyncOpenAI(base_url="http://127.0.0.1:8000/v1", api_key="x"))
    results = env.evaluate_sync(client, model="student")

Needs the ``verifiers`` package (in the ``dev`` extra).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import verifiers as vf
from datasets import Dataset

from shoparena.agent_sdk.prompt import SYSTEM_PROMPT as NATIVE_SYSTEM_PROMPT
from shoparena.formats.native import result_to_text, trajectory_to_chat
from shoparena.integrations.tasks import ShopTaskSet, verdict_summary
from shoparena.records.trajectory import Trajectory

_ENV_KEY = "shop_env"
_PROBLEM_KEY = "shop_problem"
_VERDICT_KEY = "shop_verdict"


def _tool_defs(tasks: ShopTaskSet, problem: Any) -> list[dict[str, Any]]:
    env = tasks.new_env()
    env.reset(problem)
    return [dict(t.to_openai()["function"]) for t in env.tool_schemas()]


def _rows(tasks: ShopTaskSet, problem_ids: Sequence[str] | None, system_prompt: str) -> list[dict[str, Any]]:
    problems = [tasks.problem(pid) for pid in problem_ids] if problem_ids else list(tasks.problems)
    rows = []
    for i, problem in enumerate(problems):
        tools = _tool_defs(tasks, problem)
        prompt = trajectory_to_chat(
            Trajectory(problem_id=problem.problem_id, query=problem.query), tools, system_prompt=system_prompt
        )
        info = {"problem_id": problem.problem_id, "tool_defs": tools}
        rows.append({"example_id": i, "prompt": prompt, "answer": "", "info": json.dumps(info)})
    return rows


class ShopVerifiersEnv(vf.MultiTurnEnv):
    """One ``ShopEnv`` episode per rollout (see the module docstring).

    Args:
        tasks: The task set (engine, problems, scoring profile, ``ShopEnv`` options).
        problem_ids: The problems to serve (default all, in suite order).
        system_prompt: The system message (default: the native prompt of the arena's agentic miner, the
            one ``eval run`` sends native policies).
        **kwargs: Passed to ``verifiers.MultiTurnEnv`` (``timeout_seconds``, ``max_workers``, ...).
    """

    def __init__(
        self,
        tasks: ShopTaskSet,
        *,
        problem_ids: Sequence[str] | None = None,
        system_prompt: str = NATIVE_SYSTEM_PROMPT,
        **kwargs: Any,
    ) -> None:
        dataset = Dataset.from_list(_rows(tasks, problem_ids, system_prompt))
        kwargs.setdefault("max_turns", -1)  # ShopEnv's own step cap ends the rollout
        super().__init__(eval_dataset=dataset, rubric=shop_rubric(tasks), **kwargs)
        self.tasks = tasks

    async def setup_state(self, state: vf.State) -> vf.State:
        problem = self.tasks.problem(state["info"]["problem_id"])
        env = self.tasks.new_env(run_id=str(state["trajectory_id"]))
        env.reset(problem)
        state[_ENV_KEY] = env
        state[_PROBLEM_KEY] = problem
        return state

    async def env_response(self, messages: vf.Messages, state: vf.State, **kwargs: Any) -> vf.Messages:
        env = state[_ENV_KEY]
        last = messages[-1]
        calls = list(getattr(last, "tool_calls", None) or [])
        content = getattr(last, "content", None)
        action = {
            "role": "assistant",
            "content": content if isinstance(content, str) else "",
            "reasoning_content": getattr(last, "reasoning_content", None) or "",
            "tool_calls": [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                for c in calls
            ],
        }
        result = env.step(action)
        replies: vf.Messages = [
            vf.ToolMessage(
                tool_call_id=call.native_id or call.tool_call_id, content=result_to_text(call.result)
            )
            for call in result.step.tool_calls
            if call.has_result
        ]
        if result.done:
            state["final_env_response"] = replies
        return replies


def shop_verdict(state: vf.State) -> dict[str, Any]:
    """The rollout's verdict summary (computed once, cached in the state)."""
    if _VERDICT_KEY not in state:
        env = state[_ENV_KEY]
        tasks: ShopTaskSet = state["shop_tasks"]
        state[_VERDICT_KEY] = verdict_summary(tasks.score(state[_PROBLEM_KEY], env.trajectory()))
    return state[_VERDICT_KEY]


def shop_rubric(tasks: ShopTaskSet) -> vf.Rubric:
    """shoparena's scorer as a rubric: ``success`` (weight 1) plus ``rule``, ``product`` and ``format``."""

    def _verdict(state: vf.State) -> dict[str, Any] | None:
        if _ENV_KEY not in state:  # setup failed: nothing was played
            return None
        state.setdefault("shop_tasks", tasks)
        return shop_verdict(state)

    async def success(state: vf.State) -> float:
        verdict = _verdict(state)
        return 1.0 if verdict and verdict["success"] else 0.0

    async def rule(state: vf.State) -> float:
        verdict = _verdict(state)
        return float(verdict["rule"]) if verdict else 0.0

    async def product(state: vf.State) -> float:
        verdict = _verdict(state)
        return float(verdict["product"]) if verdict else 0.0

    async def steps(state: vf.State) -> float:
        return float(len(state[_ENV_KEY].session.steps)) if _ENV_KEY in state else 0.0

    rubric = vf.Rubric(funcs=[success], weights=[1.0])
    for metric in (rule, product, steps):
        rubric.add_metric(metric)
    return rubric


def load_environment(
    suite: str | Path,
    index: str | Path,
    *,
    kb: Sequence[str | Path] = (),
    scoring_profile: str = "strict",
    similarity: str = "lexical",
    max_steps: int = 30,
    problem_ids: Sequence[str] | None = None,
    env_options: dict[str, Any] | None = None,
    **kwargs: Any,
) -> ShopVerifiersEnv:
    """The verifiers environment over a suite and a search index (verifiers' ``load_environment`` hook).

    Args:
        suite: Problem file (SB JSONL or ORO JSON).
        index: Search index directory.
        kb: Extra knowledge page files for ``web_search``.
        scoring_profile: Scoring profile of the reward (``strict`` or ``shoppingbench``).
        similarity: Title similarity backend of the scorer.
        max_steps: ``ShopEnv``'s step cap (the rollout's turn cap).
        problem_ids: Serve only these problems.
        env_options: More ``ShopEnv`` options (``tools``, rendering options).
        **kwargs: Passed to :class:`ShopVerifiersEnv`.
    """
    tasks = ShopTaskSet.load(
        suite,
        index,
        kb=kb,
        scoring_profile=scoring_profile,
        similarity=similarity,
        max_steps=max_steps,
        **(env_options or {}),
    )
    return ShopVerifiersEnv(tasks, problem_ids=problem_ids, **kwargs)


__all__ = ["ShopVerifiersEnv", "load_environment", "shop_rubric", "shop_verdict"]
