"""Online multi-turn GRPO in ``ShopEnv``, through TRL's ``environment_factory``.

Each rollout gets one :class:`ShopRolloutEnv`; TRL renders its public methods as the tools (their docstrings
are ShopTools' own, so the descriptions match what inference shows), runs the calls the policy makes, and
hands the instances to the reward functions. Each tool call is one ``ShopEnv`` step.

Reward (weights in ``ShopGRPOConfig``): ``outcome_weight × strict success (0/1)`` +
``step_weight × teacher agreement``, where agreement is the mean over the teacher's steps of ``R_correct/3``
(spec §6.4) of the policy's assistant turn at the same position (a missing turn scores −1).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from shoparena.env.environment import ShopEnv
from shoparena.env.shop_tools import ShopTools
from shoparena.formats.native import result_to_text, trajectory_to_chat
from shoparena.formats.profiles import DEFAULT_PROFILE, RenderProfile, compact_result, handle_table
from shoparena.records.problem import Problem
from shoparena.records.trajectory import Trajectory
from shoparena.scoring.bench import ScoringBench
from shoparena.train.reward import correctness, normalise_call

if TYPE_CHECKING:
    from shoparena.search import SearchEngine


class ShopRolloutEnv:
    """One rollout's shop. ``reset(**row)`` starts the row's problem; the four core tools act on it."""

    def __init__(
        self,
        engine: SearchEngine,
        problems: dict[str, Problem],
        max_steps: int,
        render_profile: str = DEFAULT_PROFILE,
    ) -> None:
        self._env = ShopEnv(engine, max_steps=max_steps, render_profile=render_profile)
        self.render_profile = render_profile
        self._problems = problems
        self.problem: Problem | None = None

    def reset(self, **row: Any) -> None:
        problem_id = row.get("problem_id")
        if problem_id not in self._problems:
            raise KeyError(f"online GRPO: problem {problem_id!r} is not in the suite")
        self.problem = self._problems[problem_id]
        self._env.reset(self.problem)
        return None

    def _call(self, name: str, **parameters: Any) -> str:
        if self._env.session.done:
            return json.dumps({"error": "the episode has ended"})
        params = {k: v for k, v in parameters.items() if v is not None}
        result = self._env.step([{"name": name, "parameters": params}])  # the env maps compact handles
        calls = result.step.tool_calls
        payload = calls[0].result if calls else None
        if self.render_profile != RenderProfile.UPSTREAM:
            # The tool message as the profile shows it, numbered with the same handles the env resolved.
            history = Trajectory(query=self._env.session.query, steps=list(self._env.session.steps[:-1]))
            table = handle_table(trajectory_to_chat(history))
            sent = calls[0].parameters if calls and isinstance(calls[0].parameters, dict) else {}
            return compact_result(name, result_to_text(payload), table, sent.get("q"))
        return payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False, default=str)

    def find_product(
        self,
        q: str,
        page: int = 1,
        shop_id: str | None = None,
        price: str | None = None,
        sort: str | None = None,
        service: str | None = None,
    ) -> str:
        return self._call(
            "find_product", q=q, page=page, shop_id=shop_id, price=price, sort=sort, service=service
        )

    def view_product_information(self, product_ids: str) -> str:
        return self._call("view_product_information", product_ids=product_ids)

    def recommend_product(self, product_ids: str) -> str:
        return self._call("recommend_product", product_ids=product_ids)

    def terminate(self, status: str) -> str:
        return self._call("terminate", status=status)

    def _trajectory(self) -> Any:
        return self._env.trajectory()


# One home for the tool descriptions: ShopTools' docstrings (google style, parsed by get_json_schema).
for _name in ("find_product", "view_product_information", "recommend_product", "terminate"):
    getattr(ShopRolloutEnv, _name).__doc__ = getattr(ShopTools, _name).__doc__


def environment_factory(
    engine: SearchEngine, problems: Sequence[Problem], max_steps: int, render_profile: str = DEFAULT_PROFILE
) -> Callable[[], ShopRolloutEnv]:
    by_id = {p.problem_id: p for p in problems}
    return lambda: ShopRolloutEnv(engine, by_id, max_steps, render_profile)


def outcome_reward_func(bench: ScoringBench) -> Callable[..., list[float]]:
    """1.0 when the rollout succeeds under the strict profile, else 0.0."""

    def strict_outcome(prompts: Any, completions: Any, environments: Sequence[ShopRolloutEnv], **kwargs: Any):
        return [
            1.0 if bench.verdict(env.problem, env._trajectory(), "strict").success else 0.0
            for env in environments
        ]

    return strict_outcome


def policy_steps(completion: Any) -> list[list[dict[str, Any]]]:
    """The policy's assistant turns in a multi-turn completion, each as its ``{name, parameters}`` calls."""
    steps = []
    for message in completion if isinstance(completion, list) else []:
        if message.get("role") != "assistant":
            continue
        calls = [normalise_call(c) for c in message.get("tool_calls") or []]
        steps.append([c for c in calls if c is not None])
    return steps


def teacher_agreement(
    prompts: Any, completions: Any, teacher_actions: Sequence[str], **kwargs: Any
) -> list[float]:
    """Mean over the teacher's steps of R_correct/3 against the policy's turn at that position, in [−1, 1]."""
    out = []
    for completion, raw in zip(completions, teacher_actions, strict=True):
        teacher_steps = [[normalise_call(c) for c in step] for step in json.loads(raw)]
        mine = policy_steps(completion)
        if not teacher_steps:
            out.append(0.0)
            continue
        scores = [
            correctness(step, mine[i] if i < len(mine) else None) / 3.0
            for i, step in enumerate(teacher_steps)
        ]
        out.append(sum(scores) / len(scores))
    return out
