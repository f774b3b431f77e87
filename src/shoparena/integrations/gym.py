"""``ShopEnv`` as a Gymnasium environment (registered id :data:`ENV_ID`), text in, text out.

* **Observation** (a string): the environment's own user prompt for the next step (the request and the
  dialogue so far with every tool result; :func:`~shoparena.integrations.tasks.observation_text`). The system
  prompt listing the tools is in ``info["system_prompt"]`` at reset.
* **Action** (a string): the policy's completion, in the tagged format (``<think>…</think>
  <tool_call>[{"name": …, "parameters": …}]</tool_call>``); a completion that parses to nothing ends the
  episode, as upstream.
* **Reward**: 0.0 until the episode ends, then 1.0 when the verdict (the task set's scoring profile,
  ``strict`` by default) is a success, else 0.0; ``info["verdict"]`` holds the verdict's outcome, scores and
  checks. ``terminated`` marks ``terminate`` or an empty step, ``truncated`` the step cap.
* **Seeding**: ``reset(seed=s)`` draws the problem with ``numpy.random.default_rng(s)``
  (:meth:`ShopTaskSet.pick`); ``options={"problem_id": ...}`` names it instead.

Make it with ``gymnasium.make(ENV_ID, suite=..., index=...)`` or ``ShopGymEnv(tasks=ShopTaskSet(...))``;
``env_options`` go to ``ShopEnv`` unchanged.
"""

from __future__ import annotations

import string
from typing import Any

import gymnasium
from gymnasium import spaces

from shoparena.env.environment import TerminationReason
from shoparena.formats.scan import MAX_ACTION_CHARS
from shoparena.integrations.tasks import (
    MAX_OBSERVATION_CHARS,
    ShopTaskSet,
    bounded_observation,
    observation_text,
    verdict_summary,
)

ENV_ID = "shoparena/Shop-v0"
_SAMPLE_CHARSET = string.ascii_letters + string.digits + string.punctuation + " \n"


class UnicodeText(spaces.Text):
    """A :class:`gymnasium.spaces.Text` that contains any string up to ``max_length`` characters (catalog
    titles and queries are Unicode); ``sample()`` draws from printable ASCII."""

    def __init__(self, max_length: int, *, min_length: int = 0, seed: int | None = None) -> None:
        super().__init__(max_length, min_length=min_length, charset=_SAMPLE_CHARSET, seed=seed)

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and self.min_length <= len(x) <= self.max_length

    def __repr__(self) -> str:
        return f"UnicodeText({self.min_length}, {self.max_length})"


class ShopGymEnv(gymnasium.Env[str, str]):
    """One shop episode per ``reset``; see the module docstring for the spaces, reward and seeding.

    Args:
        tasks: The task set (engine, problems, profile, environment options).
        suite: Suite file, when ``tasks`` is not given (with ``index``).
        index: Search index directory, when ``tasks`` is not given.
        render_mode: ``None`` or ``"ansi"`` (``render()`` returns the dialogue so far as text).
        env_options: Extra ``ShopEnv`` options (over the task set's).
    """

    metadata = {"render_modes": ["ansi"], "render_fps": 4}  # noqa: RUF012 (gymnasium's class attribute)

    def __init__(
        self,
        tasks: ShopTaskSet | None = None,
        *,
        suite: str | None = None,
        index: str | None = None,
        render_mode: str | None = None,
        **env_options: Any,
    ) -> None:
        if tasks is None:
            if suite is None or index is None:
                raise ValueError("ShopGymEnv: give tasks=ShopTaskSet(...) or both suite= and index=")
            tasks = ShopTaskSet.load(suite, index)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"ShopGymEnv.render_mode must be None or 'ansi', got {render_mode!r}")
        self.tasks = tasks
        self.render_mode = render_mode
        self.observation_space = UnicodeText(MAX_OBSERVATION_CHARS)
        self.action_space = UnicodeText(MAX_ACTION_CHARS)
        self._env = tasks.new_env(**env_options)
        self._problem = None
        self._text = ""
        self._done = True

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict]:
        super().reset(seed=seed)
        problem_id = (options or {}).get("problem_id")
        self._problem = (
            self.tasks.problem(str(problem_id))
            if problem_id is not None
            else self.tasks.pick(rng=self.np_random)
        )
        obs = self._env.reset(self._problem)
        self._text = observation_text(obs)
        self._done = False
        info = {
            "problem_id": self._problem.problem_id,
            "system_prompt": obs.system_prompt,
            "tools": [t.name for t in obs.tools],
            "step_index": obs.step_index,
        }
        return self._text, info

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        if self._problem is None or self._done:
            raise RuntimeError("ShopGymEnv.step: call reset() first (the episode has ended)")
        if not isinstance(action, str):
            raise TypeError(f"ShopGymEnv.step: the action must be a string, got {type(action).__name__}")
        result = self._env.step(action)
        self._text = bounded_observation(self._env, result.observation)  # over the cap: the episode ends
        info: dict[str, Any] = {
            "problem_id": self._problem.problem_id,
            "step_index": result.observation.step_index,
            "tool_results": [c.result if c.has_result else None for c in result.step.tool_calls],
        }
        reward = 0.0
        terminated = truncated = False
        if result.done or self._env.session.done:
            self._done = True
            reason = self._env.session.termination_reason
            truncated = reason == TerminationReason.MAX_STEPS
            terminated = not truncated
            verdict = self.tasks.score(self._problem, self._env.trajectory())
            reward = 1.0 if verdict.success else 0.0
            info["termination_reason"] = reason
            info["verdict"] = verdict_summary(verdict)
        return self._text, reward, terminated, truncated, info

    def trajectory(self) -> Any:
        """The current episode as a :class:`~shoparena.records.trajectory.Trajectory`."""
        return self._env.trajectory()

    def render(self) -> str | None:
        if self.render_mode == "ansi":
            return self._text
        return None


def register() -> None:
    """Register :data:`ENV_ID` with Gymnasium (idempotent; done on import of this module)."""
    if ENV_ID not in gymnasium.registry:
        gymnasium.register(id=ENV_ID, entry_point=f"{__name__}:ShopGymEnv")


register()

__all__ = ["ENV_ID", "ShopGymEnv", "UnicodeText", "register"]
