"""An in-process agent that asks a chat backend for each step, in the native or the tagged format.

* ``native``: OpenAI messages (system, user query, then per step the assistant turn with ``tool_calls`` and
  one ``tool`` message per result); the tool schemas go in the request's ``tools`` so the model's chat
  template renders them. The reply's ``tool_calls`` (or ``<tool_call>`` text the backend parsed) are the step.
* ``tagged``: ShoppingBench's two prompt messages (system prompt listing the tools, user turn with the
  history); the reply text is parsed by the environment's tagged parser.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from shoparena.agent_sdk.prompt import SYSTEM_PROMPT as AGENTIC_SYSTEM_PROMPT
from shoparena.env.environment import Observation
from shoparena.formats.native import trajectory_to_chat
from shoparena.formats.profiles import DEFAULT_PROFILE, check_profile, render_chat, template_kwargs
from shoparena.formats.scan import MAX_ACTION_CHARS
from shoparena.llm.transformers_backend import parse_generated_text
from shoparena.llm.types import (
    AuthError,
    BackendError,
    ChatBackend,
    ChatRequest,
    InvalidResponse,
    RateLimited,
    Unavailable,
)
from shoparena.records.infra import InfraReason
from shoparena.records.message import ToolSchema
from shoparena.records.trajectory import Trajectory

#: System turn of the native format (the tools themselves are rendered by the chat template): the built-in
#: agentic miner's, so a student trained on arena trajectories is evaluated under the prompt it learnt from.
NATIVE_SYSTEM_PROMPT = AGENTIC_SYSTEM_PROMPT

Format = Literal["native", "tagged"]


class EpisodeTimeout(Exception):
    """The episode ran past its time limit (recorded as TIMED_OUT)."""


@dataclass(slots=True)
class Decoding:
    """Decoding settings of one episode (recorded with every number)."""

    temperature: float = 0.0
    top_p: float = 1.0
    max_tokens: int = 512
    thinking: bool = False
    seed: int | None = None

    @property
    def mode(self) -> str:
        return "sampled" if self.temperature > 0 else "greedy"


@dataclass(slots=True)
class EpisodeUsage:
    """Token and call counts of one episode."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    #: Prompt tokens the engine computed (the rest it reused); None once a call's engine did not say.
    prefilled_tokens: int | None = 0
    #: Turns whose prompt did not extend the previous turn's, so the engine could not reuse it.
    prefix_misses: int = 0
    calls: int = 0
    failed_calls: int = 0
    model: str = ""
    finish_reasons: dict[str, int] = field(default_factory=dict)


def unreachable(exc: BackendError) -> bool:
    """True for a server that could not be reached or answered 502/503."""
    return isinstance(exc, Unavailable) and (
        exc.reason == "connection" or (exc.reason == "server" and exc.status_code in (502, 503))
    )


def transport_failure(exc: BackendError) -> InfraReason | None:
    """The infrastructure reason of a failed model call, or None when the policy's request itself was
    refused (another 4xx: a prompt over the context, a malformed request).

    Drawn by cause: no server (connection refused, 502/503) is ``model_unreachable``; a server that
    answered with anything but a completion after its retries (another 5xx, a timeout, a body that is not
    a completion, 429, rejected credentials) is ``model_failed``. Neither is a measurement of the policy.
    """
    if unreachable(exc):
        return InfraReason.MODEL_UNREACHABLE
    if isinstance(exc, Unavailable | InvalidResponse | RateLimited | AuthError):
        return InfraReason.MODEL_FAILED
    if exc.status_code is not None and exc.status_code >= 500:
        return InfraReason.MODEL_FAILED
    return None


class ChatAgent:
    """One episode's agent over a shared backend (make one per episode: it holds that episode's usage).

    Args:
        backend: Any chat backend (thread-safe for concurrent episodes).
        fmt: ``native`` or ``tagged``.
        decoding: Temperature, top-p, token cap, thinking switch, seed.
        model: Model name sent with each request (None: the backend's default).
        deadline: ``time.monotonic()`` after which the next step raises :class:`EpisodeTimeout`.
        request_timeout_s: Per-request timeout.
        profile: Render profile (:mod:`shoparena.formats.profiles`) of the native messages and tools.
    """

    def __init__(
        self,
        backend: ChatBackend,
        *,
        fmt: Format = "native",
        decoding: Decoding | None = None,
        model: str | None = None,
        deadline: float | None = None,
        request_timeout_s: float | None = None,
        name: str = "chat",
        render_profile: str = DEFAULT_PROFILE,
    ) -> None:
        self.render_profile = check_profile(render_profile)
        if fmt not in ("native", "tagged"):
            raise ValueError(f"ChatAgent.fmt must be 'native' or 'tagged', got {fmt!r}")
        self.backend, self.fmt = backend, fmt
        self.decoding = decoding or Decoding()
        self.model, self.deadline, self.request_timeout_s = model, deadline, request_timeout_s
        self.name = name
        self.usage = EpisodeUsage()
        #: Set when a call failed for a transport reason (:func:`transport_failure`): an infrastructure
        #: failure, so the episode is retried on resume, not scored as the policy's 0.
        self.unreachable: str | None = None
        self.infra_reason: InfraReason | None = None
        #: Names this episode to the backend, which may keep its key/value cache between turns.
        self.session = uuid.uuid4().hex
        self._lock = threading.Lock()

    def close(self, episode_id: str = "") -> None:
        """The episode ended: let the backend drop what it kept of it."""
        release = getattr(self.backend, "release", None)
        if callable(release):
            release(self.session)

    def messages(self, observation: Observation) -> list[dict[str, Any]]:
        """The prompt messages for the next step."""
        return self.rendered(observation, observation.tools)[0]

    def rendered(
        self, observation: Observation, tools: Sequence[ToolSchema]
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]] | None]:
        """The prompt messages and the template's tool list for the next step, under the render profile."""
        if self.fmt == "tagged":
            return list(observation.messages()), None
        history = Trajectory(query=observation.query, steps=list(observation.steps))
        schemas = [t.to_openai() for t in tools]
        chat = trajectory_to_chat(history, schemas, system_prompt=NATIVE_SYSTEM_PROMPT)
        return render_chat(chat, schemas, self.render_profile)

    def request(self, observation: Observation, tools: Sequence[ToolSchema]) -> ChatRequest:
        messages, template_tools = self.rendered(observation, tools)
        d = self.decoding
        extra: dict[str, Any] = {"chat_template_kwargs": template_kwargs(self.render_profile, d.thinking)}
        if d.temperature > 0:
            extra["top_p"] = d.top_p
            if d.seed is not None:
                extra["seed"] = d.seed
        return ChatRequest(
            model=self.model,
            messages=messages,
            tools=template_tools,
            temperature=d.temperature,
            max_tokens=d.max_tokens,
            timeout_s=self.request_timeout_s,
            extra_body=extra,
            session=self.session,
        )

    def act(self, observation: Observation, tools: Sequence[ToolSchema]) -> Any:
        """Ask the backend for the next step; a backend error ends the episode (FAILED)."""
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise EpisodeTimeout("episode time limit reached")
        request = self.request(observation, tools)
        with self._lock:
            self.usage.calls += 1
        try:
            response = self.backend.complete(request)
        except BackendError as exc:
            with self._lock:
                self.usage.failed_calls += 1
            reason = transport_failure(exc)
            if reason is None and self.usage.calls == self.usage.failed_calls:
                # Refused before the policy wrote a word: the request was the environment's prompt and
                # the run's settings (model name, context), not the policy's output.
                reason = InfraReason.MODEL_FAILED
            if reason is not None:
                self.unreachable = f"{type(exc).__name__}: {exc}"
                self.infra_reason = reason
            raise
        with self._lock:
            self.usage.prompt_tokens += response.usage.prompt_tokens
            self.usage.completion_tokens += response.usage.completion_tokens
            prefilled = response.usage.prefilled_tokens
            if prefilled is None or self.usage.prefilled_tokens is None:
                self.usage.prefilled_tokens = None
            else:
                self.usage.prefilled_tokens += prefilled
            self.usage.prefix_misses += int(response.usage.prefix_miss)
            self.usage.model = response.model or self.usage.model
            reason = response.finish_reason or "none"
            self.usage.finish_reasons[reason] = self.usage.finish_reasons.get(reason, 0) + 1
        if self.fmt == "tagged":
            text = response.content
            if response.reasoning_content and "<think>" not in text:
                text = f"<think>{response.reasoning_content}</think>\n{text}"
            return text
        content, tool_calls = response.content, response.tool_calls
        if not tool_calls and "<tool_call>" in (content or "") and len(content) <= MAX_ACTION_CHARS:
            # A profile that names the tools in its system turn sends no tool list, so the server (or the
            # in-process backend) leaves the Hermes blocks in the text: parse them here, the same way.
            parsed = parse_generated_text(content, parse_tools=True, split_reasoning=False)
            content, tool_calls = parsed.content, parsed.tool_calls
        return {
            "role": "assistant",
            "content": content,
            "reasoning_content": response.reasoning_content,
            "tool_calls": tool_calls,
        }


__all__ = ["NATIVE_SYSTEM_PROMPT", "ChatAgent", "Decoding", "EpisodeTimeout", "EpisodeUsage", "Format"]
