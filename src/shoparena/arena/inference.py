"""How the proxy runs one inference call: the run's generation limits, a per-call timeout, cancellation.

Generation limits are run configuration (``arena run --max-tokens/--stop/--call-timeout``), not whatever the
agent asks for: ``max_tokens`` caps the agent's value (or fills it in), configured stop strings are added to
the agent's. The backend runs in a worker thread; the proxy stops waiting when the call timeout passes, when
the agent hangs up, or when its problem ends (sandbox finished or killed), and then sets a cancel event that
backends accepting ``cancel=`` (the in-process transformers backend) check between tokens, so abandoned
requests stop generating. HTTP backends get the call timeout as their request timeout, so the remote server
sees the client go away.

The same limits reach the agent through its environment (:meth:`InferenceLimits.agent_env`), so miners that
read them can ask for what will be served and wait long enough for it.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import threading
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

#: Environment variables the runner sets for every agent (documented in docs/arena.md).
ENV_MODEL = "SANDBOX_MODEL"
ENV_MAX_TOKENS = "SHOPARENA_MAX_TOKENS"
ENV_STOP = "SHOPARENA_STOP"
ENV_CALL_TIMEOUT = "SHOPARENA_CALL_TIMEOUT_S"
ENV_PROBLEM_TIMEOUT = "SHOPARENA_PROBLEM_TIMEOUT_S"
#: How often a waiting call checks whether its client is still there.
POLL_S = 0.2


class InferenceLimits(BaseModel):
    """Generation limits and timeouts of one run (defaults suit a small model on CPU and any GPU server)."""

    model_config = ConfigDict(extra="forbid")

    max_tokens: int | None = Field(
        default=512, ge=1, description="Cap on generated tokens per call (the agent may ask for fewer)."
    )
    stop: list[str] = Field(default_factory=list, description="Stop strings added to every call.")
    call_timeout_s: float = Field(
        default=120.0, gt=0, description="Per inference call; the proxy answers 504 and cancels after it."
    )

    def apply(self, payload: dict[str, Any]) -> dict[str, Any]:
        """The request body with the run's cap and stop strings applied."""
        out = dict(payload)
        asked = out.get("max_tokens")
        if self.max_tokens is not None:
            out["max_tokens"] = (
                min(int(asked), self.max_tokens) if isinstance(asked, int) else self.max_tokens
            )
        if self.stop:
            current = out.get("stop")
            stops = [current] if isinstance(current, str) else list(current or [])
            out["stop"] = stops + [s for s in self.stop if s not in stops]
        return out

    def agent_env(self, model: str | None, problem_timeout_s: float) -> dict[str, str]:
        """Environment variables announcing the run's model and limits to an agent."""
        env = {
            ENV_CALL_TIMEOUT: f"{self.call_timeout_s:g}",
            ENV_PROBLEM_TIMEOUT: f"{problem_timeout_s:g}",
        }
        if model:
            env[ENV_MODEL] = model
        if self.max_tokens is not None:
            env[ENV_MAX_TOKENS] = str(self.max_tokens)
        if self.stop:
            env[ENV_STOP] = json.dumps(self.stop)
        return env


class CallAbandoned(Exception):
    """The proxy stopped waiting for a generation; ``reason`` is ``timeout`` or ``abandoned``."""

    def __init__(self, reason: str, waited_s: float) -> None:
        super().__init__(f"inference {reason} after {waited_s:.1f}s")
        self.reason = reason
        self.waited_s = waited_s


def accepts_cancel(backend: Any) -> bool:
    """Whether ``backend.complete`` takes a ``cancel`` event."""
    try:
        return "cancel" in inspect.signature(backend.complete).parameters
    except (TypeError, ValueError):
        return False


async def complete_with_limits(
    backend: Any,
    chat: Any,
    *,
    timeout_s: float,
    gone: Callable[[], Awaitable[bool]],
    cancels: set[threading.Event],
) -> Any:
    """Run ``backend.complete(chat)`` in a thread; give up on timeout or when ``gone()`` turns true.

    Args:
        backend: A chat backend.
        chat: The :class:`~shoparena.llm.types.ChatRequest`.
        timeout_s: Per-call limit.
        gone: Async predicate: the client disconnected or its problem ended.
        cancels: The problem's live cancel events (the event is added while the call runs, so ending the
            problem can cancel it too).

    Raises:
        CallAbandoned: The call timed out or its client went away (its generation was told to stop).
        Exception: Whatever the backend raised.
    """
    cancel = threading.Event()
    cancels.add(cancel)
    loop = asyncio.get_running_loop()
    if accepts_cancel(backend):
        future = loop.run_in_executor(None, lambda: backend.complete(chat, cancel=cancel))
    else:
        future = loop.run_in_executor(None, backend.complete, chat)
    started = loop.time()
    try:
        while True:
            done, _ = await asyncio.wait({future}, timeout=POLL_S)
            waited = loop.time() - started
            if done:
                if cancel.is_set():  # its problem ended meanwhile: whatever came back reaches nobody
                    future.exception()
                    raise CallAbandoned("abandoned", waited)
                return future.result()
            reason = "timeout" if waited >= timeout_s else ("abandoned" if await gone() else None)
            if reason is not None:
                cancel.set()
                # The thread finishes on its own (promptly when the backend honours `cancel`).
                future.add_done_callback(lambda f: f.exception())
                raise CallAbandoned(reason, waited)
    finally:
        cancels.discard(cancel)


__all__ = [
    "ENV_CALL_TIMEOUT",
    "ENV_MAX_TOKENS",
    "ENV_MODEL",
    "ENV_PROBLEM_TIMEOUT",
    "ENV_STOP",
    "CallAbandoned",
    "InferenceLimits",
    "accepts_cancel",
    "complete_with_limits",
]
