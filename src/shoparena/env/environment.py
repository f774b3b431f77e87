"""The shopping environment: ``reset(problem)`` / ``step(action)`` / ``tool_schemas()`` / ``trajectory()``.

One :class:`ShopEnv` plays one episode at a time (make one per worker thread; the search engine may be
shared). The agent sees only the problem's public view (query, category, difficulty, display title), never
its reward, voucher or embeddings. Each ``step`` takes a completion (tagged text, a native assistant
message) or a list of tool calls, runs the calls in order and applies upstream's stop rules (spec §5.1):
stop after a step that parsed to nothing or that calls ``terminate``, and after ``max_steps`` steps.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from shoparena.env.knowledge import KnowledgeBase
from shoparena.env.policy_output import oversized_action, refuse_invalid_output
from shoparena.env.session import ShopSession
from shoparena.env.shop_tools import OroHelperTools, ShopTools
from shoparena.env.toolkit import BoundTool, ToolKit
from shoparena.formats.native import native_tool_call, trajectory_to_chat
from shoparena.formats.profiles import (
    DEFAULT_PROFILE,
    RenderProfile,
    check_profile,
    handle_table,
    resolve_arguments,
)
from shoparena.formats.scan import MAX_ACTION_CHARS
from shoparena.formats.tagged import (
    ParsedStep,
    build_prompt_messages,
    build_system_prompt,
    make_tool_call,
    parse_completion,
    render_model_output,
    tool_call_id,
)
from shoparena.records.message import ToolSchema
from shoparena.records.problem import Intent, Problem
from shoparena.records.tools import CORE_TOOLS, REGISTRY_ORDER, WEB_SEARCH
from shoparena.records.trajectory import EpisodeStatus, Step, ToolCall, Trajectory, TrajectoryError
from shoparena.search import SearchEngine

DEFAULT_MAX_STEPS = 30


class TerminationReason:
    """Why an episode ended (string constants, stored in ``Trajectory.meta['termination_reason']``)."""

    TERMINATE = "terminate"
    EMPTY_STEP = "empty_step"
    MAX_STEPS = "max_steps"
    INFRA_ERROR = "infra_error"
    AGENT_ERROR = "agent_error"


@dataclass(slots=True)
class Observation:
    """What the agent sees before choosing its next step.

    Attributes:
        episode_id: Unique id of this episode (agents key per-episode state on it).
        problem: The problem's public view (``problem_id``, ``query``, ``category``, ...); no constraints.
        query: The user's request.
        step_index: 1-based number of the step about to be taken.
        steps: Earlier steps, tool results filled in.
        tools: Schemas of the tools available in this episode.
        system_prompt: The tagged-format system prompt listing ``tools``.
        done: True once the episode has ended.
    """

    episode_id: str
    problem: dict[str, Any]
    query: str
    step_index: int
    steps: list[Step]
    tools: list[ToolSchema]
    system_prompt: str
    done: bool = False

    @property
    def last_step(self) -> Step | None:
        """The step just taken, or None at the start."""
        return self.steps[-1] if self.steps else None

    def messages(self) -> list[dict[str, str]]:
        """The two tagged-format prompt messages (``[system, user]``) for the next step."""
        return build_prompt_messages(self.system_prompt, self.query, self.steps)


@dataclass(slots=True)
class StepResult:
    """The outcome of one :meth:`ShopEnv.step`.

    Attributes:
        observation: The next observation.
        step: The recorded step (calls with ids and results).
        done: True when the episode ended with this step.
        termination_reason: Why it ended (see :class:`TerminationReason`), None while running.
        info: Extra details (schema violations, infra error).
    """

    observation: Observation
    step: Step
    done: bool
    termination_reason: str | None = None
    info: dict[str, Any] = field(default_factory=dict)


def _native_call(raw: dict[str, Any]) -> ToolCall:
    """A native OpenAI tool call recorded with spec §5.2's argument adapter and an upstream id."""
    function = raw.get("function") if isinstance(raw.get("function"), dict) else raw
    call_id = raw.get("id") if isinstance(raw.get("id"), str) else None
    return native_tool_call(function.get("name"), function.get("arguments", {}), call_id=call_id)


def to_parsed_step(action: Any) -> ParsedStep:
    """Normalise an agent action into a :class:`ParsedStep`.

    Accepts tagged completion text, a :class:`ParsedStep`, a native assistant message dict (``content``,
    ``tool_calls``, ``reasoning_content``), or a list of :class:`ToolCall` / ``{name, parameters}`` dicts.
    """
    if isinstance(action, ParsedStep):
        return action
    if action is None or isinstance(action, str):
        return parse_completion(action)
    if isinstance(action, dict) and ("tool_calls" in action or "role" in action):
        content = action.get("content") if isinstance(action.get("content"), str) else ""
        reasoning = action.get("reasoning_content")
        reasoning = reasoning if isinstance(reasoning, str) else ""
        out = ParsedStep(content=content, reasoning_content=reasoning, think=reasoning.strip())
        if "<think>" in content and "</think>" in content:
            out.think = content.split("<think>", 1)[1].split("</think>", 1)[0].strip()
            content = content.split("</think>", 1)[1]
        out.response = content.strip() if not action.get("tool_calls") else ""
        out.tool_calls = [_native_call(c) for c in action.get("tool_calls") or [] if isinstance(c, dict)]
        return out
    if isinstance(action, Sequence):
        calls = []
        for item in action:
            if isinstance(item, ToolCall):
                call = item.model_copy(deep=True)
                if not call.tool_call_id:
                    call.tool_call_id = tool_call_id(call.name, call.parameters)
            elif isinstance(item, dict):
                name, params = item.get("name"), item.get("parameters", item.get("arguments", {}))
                call = make_tool_call(name, params, tool_call_id(name, params))
            else:
                kind = type(item).__name__
                raise TypeError(f"ShopEnv.step: a tool call must be a ToolCall or dict, got {kind}")
            calls.append(call)
        return ParsedStep(tool_calls=calls)
    raise TypeError(f"ShopEnv.step: unsupported action type {type(action).__name__}")


class ShopEnv:
    """The ShoppingBench environment over a search engine.

    Args:
        engine: The product search backend (shared; thread-safe reads).
        tools: Names of the tools to expose. None = the four core tools, plus ``web_search`` for web-intent
            problems (as upstream's knowledge task).
        toolkits: Tool containers to draw tools from; default :class:`ShopTools` and :class:`OroHelperTools`.
        knowledge: Knowledge base behind ``web_search`` (default ShopTools only).
        max_steps: Step cap (upstream 30).
        agent_id: Recorded on trajectories.
        run_id: Recorded on trajectories.
        profile: Render profile of the policy (:mod:`shoparena.formats.profiles`): under ``compact`` the
            product and shop handles of a call (``P3``, ``S1``) are mapped back to ids and left-out
            defaults filled in before the call runs; the trajectory records real ids.
        max_calls_per_step: Calls past this many in one step are dropped, with a parse error on the step
            (None: no cap; the HTTP server sets one). Lone surrogates in an action are always refused as
            the policy's failure (:mod:`shoparena.env.policy_output`).
        max_action_chars: An action longer than this (content, reasoning and native arguments together) is
            not parsed: its step holds one parse issue and the episode ends as an empty step (None: no cap).
    """

    def __init__(
        self,
        engine: SearchEngine,
        *,
        tools: Sequence[str] | None = None,
        toolkits: Sequence[ToolKit] | None = None,
        knowledge: KnowledgeBase | None = None,
        max_steps: int = DEFAULT_MAX_STEPS,
        agent_id: str = "",
        run_id: str = "",
        render_profile: str = DEFAULT_PROFILE,
        max_calls_per_step: int | None = None,
        max_action_chars: int | None = MAX_ACTION_CHARS,
    ) -> None:
        self.render_profile = check_profile(render_profile)
        if max_steps < 1:
            raise ValueError(f"ShopEnv.max_steps must be >= 1, got {max_steps}")
        if max_calls_per_step is not None and max_calls_per_step < 1:
            raise ValueError(f"ShopEnv.max_calls_per_step must be >= 1, got {max_calls_per_step}")
        self.max_calls_per_step = max_calls_per_step
        self.max_action_chars = max_action_chars
        self.engine = engine
        self.max_steps = max_steps
        self.agent_id = agent_id
        self.run_id = run_id
        if toolkits is None:
            toolkits = [ShopTools(engine, knowledge), OroHelperTools(engine)]
        kits = list(toolkits)
        self._all: dict[str, BoundTool] = {}
        for kit in kits:
            for bound in kit.tools():
                self._all.setdefault(bound.name, bound)
        if tools is not None:
            unknown = [t for t in tools if t not in self._all]
            if unknown:
                raise ValueError(f"ShopEnv.tools: unknown tool(s) {unknown}; available: {sorted(self._all)}")
        self._requested = list(tools) if tools is not None else None
        self._active: dict[str, BoundTool] = {}
        self._session: ShopSession | None = None
        self._problem: Problem | None = None
        self._episode_id = ""
        self._started = 0.0
        self._ended: float | None = None
        self._system_prompt = ""

    # --- setup ------------------------------------------------------------------------------------------
    def _tool_names_for(self, problem: Problem) -> list[str]:
        if self._requested is not None:
            return list(self._requested)
        names = list(CORE_TOOLS)
        if problem.intent is Intent.WEB:
            names.append(WEB_SEARCH)
        return names

    def tool_schemas(self) -> list[ToolSchema]:
        """Schemas of the tools of the current episode (before any reset: the default set)."""
        if self._active:
            return [t.schema for t in self._active.values()]
        names = self._requested if self._requested is not None else list(CORE_TOOLS)
        return [self._all[n].schema for n in names]

    @property
    def session(self) -> ShopSession:
        """The current episode's state."""
        if self._session is None:
            raise RuntimeError("ShopEnv: call reset(problem) first")
        return self._session

    def reset(self, problem: Problem) -> Observation:
        """Start an episode on ``problem``; the agent only ever sees ``problem.public_view()``."""
        self._problem = problem
        self._episode_id = uuid.uuid4().hex
        names = self._tool_names_for(problem)
        order = {n: i for i, n in enumerate(REGISTRY_ORDER)}
        given = {n: i for i, n in enumerate(names)}
        names.sort(key=lambda n: (order.get(n, len(order)), given[n]))
        self._active = {n: self._all[n] for n in names}
        self._system_prompt = build_system_prompt([t.schema for t in self._active.values()])
        self._session = ShopSession(problem_id=problem.problem_id, query=problem.query)
        self._started = time.time()
        self._ended = None
        return self._observation()

    def _observation(self) -> Observation:
        session = self.session
        assert self._problem is not None
        return Observation(
            episode_id=self._episode_id,
            problem=self._problem.public_view(),
            query=self._problem.query,
            step_index=len(session.steps) + 1,
            steps=list(session.steps),
            tools=[t.schema for t in self._active.values()],
            system_prompt=self._system_prompt,
            done=session.done,
        )

    # --- acting -----------------------------------------------------------------------------------------
    def step(self, action: Any, *, reasoning_content: str | None = None) -> StepResult:
        """Record and run one step.

        Args:
            action: Tagged completion text, a native assistant message dict, a :class:`ParsedStep`, or a list
                of tool calls (:class:`ToolCall` or ``{name, parameters}`` dicts).
            reasoning_content: The API's reasoning channel for text completions (think fallback).

        Returns:
            The new observation, the recorded step and whether the episode ended.
        """
        session = self.session
        if session.done:
            raise RuntimeError(f"ShopEnv.step: the episode already ended ({session.termination_reason})")
        oversized = oversized_action(action, self.max_action_chars, reasoning_content)
        if oversized is not None:  # refused before any parser sees it, the same at every door
            parsed = oversized
        elif isinstance(action, str) or action is None:
            parsed = parse_completion(action, reasoning_content)
        else:
            parsed = to_parsed_step(action)
        step = parsed.to_step(len(session.steps) + 1, timestamp=int(time.time() * 1000))
        refuse_invalid_output(step, max_calls=self.max_calls_per_step)  # the policy's failure, not ours
        if oversized is None and isinstance(action, dict) and action.get("tool_calls") is not None:
            step.content_format = "native"
        if not step.content and step.content_format == "tagged":
            step.content = render_model_output(step)
        info: dict[str, Any] = {}
        if self.render_profile == RenderProfile.COMPACT:
            self._resolve_handles(step.tool_calls, session)
        for call in step.tool_calls:
            self._run_call(call, session)
            if session.infra_error is not None:
                break
        session.steps.append(step)
        reason = None
        if session.infra_error is not None:
            reason = TerminationReason.INFRA_ERROR
            info["infra_error"] = session.infra_error
        elif parsed.is_empty():
            reason = TerminationReason.EMPTY_STEP
        elif any(c.name == "terminate" for c in step.tool_calls):
            reason = TerminationReason.TERMINATE
        elif len(session.steps) >= self.max_steps:
            reason = TerminationReason.MAX_STEPS
        if reason is not None:
            session.termination_reason = reason
            self._ended = time.time()
        if session.schema_violations:
            info["schema_violations"] = list(session.schema_violations)
        return StepResult(self._observation(), step, reason is not None, reason, info)

    def _resolve_handles(self, calls: Sequence[ToolCall], session: ShopSession) -> None:
        """Map a compact policy's handles to the ids it was shown (the same table the render built)."""
        history = Trajectory(query=session.query, steps=list(session.steps))
        table = handle_table(trajectory_to_chat(history))
        for call in calls:
            if call.invalid_reason is None and isinstance(call.parameters, dict):
                call.parameters = resolve_arguments(call.name, call.parameters, table)

    def _run_call(self, call: ToolCall, session: ShopSession) -> None:
        if call.invalid_reason is not None:
            call.result = f"Error: invalid tool call: {call.invalid_reason}"
            call.has_result = True
            return
        bound = self._active.get(call.name)
        if bound is None:
            return  # upstream skips unknown tools without an obs entry
        outcome = bound.run(call.parameters, {"session": session})
        for violation in outcome.violations:
            if violation not in session.schema_violations:
                session.schema_violations.append(violation)
        if outcome.infra_error is not None:
            session.infra_error = f"{call.name}: {outcome.infra_error}"
            return
        call.result = outcome.result
        call.has_result = True

    def fail(self, reason: str, message: str) -> None:
        """End the episode from outside (agent crash, timeout) without another step."""
        session = self.session
        if not session.done:
            session.termination_reason = reason
            session.infra_error = message
            self._ended = time.time()

    # --- records ----------------------------------------------------------------------------------------
    def trajectory(self, *, rollout_idx: int = 0) -> Trajectory:
        """The episode so far as a :class:`Trajectory` (status FAILED after an infra or agent error)."""
        session = self.session
        assert self._problem is not None
        failed = session.termination_reason in (TerminationReason.INFRA_ERROR, TerminationReason.AGENT_ERROR)
        error = (
            TrajectoryError(type=session.termination_reason or "error", message=session.infra_error or "")
            if failed
            else None
        )
        end = self._ended if self._ended is not None else time.time()
        meta: dict[str, Any] = {
            "termination_reason": session.termination_reason,
            "state_hash": session.state_hash(),
            "tools": list(self._active),
        }
        if session.schema_violations:
            meta["schema_violations"] = list(session.schema_violations)
        return Trajectory(
            run_id=self.run_id,
            problem_id=self._problem.problem_id,
            rollout_idx=rollout_idx,
            agent_id=self.agent_id,
            query=self._problem.query,
            status=EpisodeStatus.FAILED if failed else EpisodeStatus.SUCCESS,
            execution_time=round(end - self._started, 3),
            error=error,
            steps=[s.model_copy(deep=True) for s in session.steps],
            meta=meta,
        )


__all__ = [
    "DEFAULT_MAX_STEPS",
    "Observation",
    "ShopEnv",
    "StepResult",
    "TerminationReason",
    "to_parsed_step",
]
