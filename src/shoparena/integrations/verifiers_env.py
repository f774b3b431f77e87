"""``ShopEnv`` as a `verifiers <https://github.com/PrimeIntellect-ai/verifiers>`_ v1 taskset (verifiers 0.4).

verifiers 0.4 builds environments from a **taskset** (serialisable task rows plus the task class that owns
scoring) run by a **harness**. :class:`ShopTaskset` is a ``vf.Taskset`` over a :class:`ShopTaskSet`: one
:class:`ShopTask` per problem, whose :class:`ShopTaskData` row carries the request as the user prompt, the
native system prompt (the one ``eval run`` sends native policies) and the OpenAI schemas of the tools
(``tool_defs``). :class:`ShopTask` scores a finished trace with shoparena's scorer: the trace's assistant
tool calls are replayed through a fresh ``ShopEnv`` (deterministic: the same actions give the same
episode), and the verdict under the task set's profile is the ``success`` reward (``@vf.reward``), with the
rule score, the product share and the step count as ``@vf.metric`` metrics. So a trace gets the verdict the
in-process, Gymnasium and HTTP doors give the same actions (``tests/integrations/test_doors.py``).

Load it with verifiers' own loader convention (``load_taskset``) or directly::

    from shoparena.integrations.verifiers_env import load_taskset
    taskset = load_taskset(suite="bank.json", index="index/")
    for task in taskset: ...                         # vf.Task objects; task.data is a vf.TaskData row

Tools: the rows name the tools (``tool_defs``) and ``ShopEnv`` executes them; serving them to a harness as
an MCP toolset (``vf.Toolset``) is not built yet (docs/integrations.md says why). Needs ``verifiers>=0.4``
(the ``ecosystem`` and ``dev`` extras).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import verifiers.v1 as vf
from pydantic import Field

from shoparena.agent_sdk.prompt import SYSTEM_PROMPT as NATIVE_SYSTEM_PROMPT
from shoparena.formats.native import trajectory_to_chat
from shoparena.integrations.tasks import ShopTaskSet, verdict_summary
from shoparena.records.trajectory import Trajectory


class ShopTaskData(vf.TaskData):
    """One problem as a verifiers task row (serialisable; no ground truth)."""

    problem_id: str
    category: str = ""
    tool_defs: list[dict[str, Any]] = Field(default_factory=list)


class ShopTasksetConfig(vf.TasksetConfig):
    """Where the problems and the search index are, and how episodes are scored."""

    suite: str
    index: str
    kb: list[str] = Field(default_factory=list)
    scoring_profile: str = "strict"
    similarity: str = "lexical"
    max_steps: int = 30


def _tool_defs(tasks: ShopTaskSet, problem: Any) -> list[dict[str, Any]]:
    env = tasks.new_env()
    env.reset(problem)
    return [t.to_openai() for t in env.tool_schemas()]


def _action(message: Any) -> dict[str, Any]:
    """A trace's assistant message as the ``ShopEnv.step`` action (native tool calls)."""
    return {
        "role": "assistant",
        "content": message.content if isinstance(message.content, str) else "",
        "reasoning_content": message.reasoning_content or "",
        "tool_calls": [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in message.tool_calls or []
        ],
    }


#: Replayed verdicts by (task set, problem, actions' fingerprint): the rewards and metrics of one trace are
#: computed from one replay. Bounded; a trace's verdict never comes from the trace itself.
_VERDICTS: dict[tuple[int, str, str], dict[str, Any]] = {}
_VERDICT_CACHE_SIZE = 4096


def _actions_key(actions: list[dict[str, Any]]) -> str:
    blob = json.dumps(actions, sort_keys=True, default=str, ensure_ascii=True)
    return hashlib.sha256(blob.encode()).hexdigest()


class ShopTask(vf.Task[ShopTaskData, vf.State, vf.TaskConfig]):
    """A problem whose trace is scored by shoparena (see the module docstring)."""

    tasks: ShopTaskSet | None = None  # set by ShopTaskset.load (not part of the serialisable row)

    def verdict(self, trace: vf.Trace) -> dict[str, Any]:
        """The verdict summary of the trace's actions replayed through a fresh ``ShopEnv``.

        Always computed from the trace's own actions, never read from ``trace.info`` (a harness could plant
        a ``shop_verdict`` there: a trace that gives up scored 1.0). The four rewards and metrics of one
        trace share one replay through a private cache keyed by the actions' content; ``trace.info``
        receives a copy for display only."""
        if self.tasks is None:
            raise vf.TaskError("ShopTask without its task set: load it through ShopTaskset")
        actions = [_action(m) for m in trace.messages if isinstance(m, vf.AssistantMessage)]
        key = (id(self.tasks), self.data.problem_id, _actions_key(actions))
        found = _VERDICTS.get(key)
        if found is None:
            problem = self.tasks.problem(self.data.problem_id)
            env = self.tasks.new_env()
            env.reset(problem)
            steps = 0
            for action in actions:
                steps += 1
                if env.step(action).done:
                    break
            found = {**verdict_summary(self.tasks.score(problem, env.trajectory())), "steps": steps}
            _VERDICTS[key] = found
            while len(_VERDICTS) > _VERDICT_CACHE_SIZE:
                _VERDICTS.pop(next(iter(_VERDICTS)))
        trace.info["shop_verdict"] = dict(found)
        return dict(found)

    @vf.reward
    async def success(self, trace: vf.Trace) -> float:
        return 1.0 if self.verdict(trace)["success"] else 0.0

    @vf.metric
    async def rule(self, trace: vf.Trace) -> float:
        return float(self.verdict(trace)["rule"])

    @vf.metric
    async def product(self, trace: vf.Trace) -> float:
        return float(self.verdict(trace)["product"])

    @vf.metric
    async def steps(self, trace: vf.Trace) -> float:
        return float(self.verdict(trace)["steps"])


class ShopTaskset(vf.Taskset[ShopTask, ShopTasksetConfig]):
    """Every problem of the suite as a :class:`ShopTask`, in suite order."""

    def __init__(self, config: ShopTasksetConfig, tasks: ShopTaskSet | None = None) -> None:
        super().__init__(config)
        self.tasks = tasks or ShopTaskSet.load(
            config.suite,
            config.index,
            kb=config.kb,
            scoring_profile=config.scoring_profile,
            similarity=config.similarity,
            max_steps=config.max_steps,
        )

    def load(self):
        for problem in self.tasks.problems:
            tools = _tool_defs(self.tasks, problem)
            chat = trajectory_to_chat(
                Trajectory(problem_id=problem.problem_id, query=problem.query),
                [t["function"] for t in tools],
                system_prompt=NATIVE_SYSTEM_PROMPT,
            )
            user = next(m["content"] for m in chat if m["role"] == "user")
            task = ShopTask(
                ShopTaskData(
                    id=problem.problem_id,
                    name=problem.problem_id,
                    prompt=user,
                    system_prompt=NATIVE_SYSTEM_PROMPT,
                    problem_id=problem.problem_id,
                    category=problem.category_label,
                    tool_defs=tools,
                ),
                self.config.task,
            )
            task.tasks = self.tasks
            yield task


def load_taskset(
    suite: str | Path,
    index: str | Path,
    *,
    kb: Sequence[str | Path] = (),
    scoring_profile: str = "strict",
    similarity: str = "lexical",
    max_steps: int = 30,
) -> ShopTaskset:
    """The taskset over a suite and a search index (verifiers' ``load_taskset`` hook).

    Args:
        suite: Problem file (SB JSONL or ORO JSON).
        index: Search index directory.
        kb: Extra knowledge page files for ``web_search``.
        scoring_profile: Scoring profile of the reward (``strict`` or ``shoppingbench``).
        similarity: Title similarity backend of the scorer.
        max_steps: ``ShopEnv``'s step cap.
    """
    config = ShopTasksetConfig(
        suite=str(suite),
        index=str(index),
        kb=[str(k) for k in kb],
        scoring_profile=scoring_profile,
        similarity=similarity,
        max_steps=max_steps,
    )
    return ShopTaskset(config)


__all__ = ["ShopTask", "ShopTaskData", "ShopTaskset", "ShopTasksetConfig", "load_taskset"]
