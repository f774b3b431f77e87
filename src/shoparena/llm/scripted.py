"""A scripted chat backend for tests: replies come from a list, received requests are recorded."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from shoparena.llm.openai_compat import normalise_tool_call
from shoparena.llm.types import ChatRequest, ChatResponse, Usage

ScriptItem = ChatResponse | str | BaseException | Callable[[ChatRequest], ChatResponse]


def scripted_reply(
    content: str = "",
    *,
    tool_calls: Iterable[dict[str, Any]] = (),
    reasoning_content: str = "",
    completion_tokens: int | None = None,
    prompt_tokens: int = 0,
    model: str = "",
    finish_reason: str | None = None,
) -> ChatResponse:
    """Build a :class:`ChatResponse` the way a server would have returned it.

    Args:
        content: Assistant text.
        tool_calls: Calls in OpenAI shape or flat ``{"name", "arguments"|"parameters"}`` (dict args allowed).
        reasoning_content: Separate reasoning channel.
        completion_tokens: Reported completion tokens; defaults to a whitespace word count of the text.
        prompt_tokens: Reported prompt tokens.
        model: Reported model name; "" lets the backend fill in the request's model.
        finish_reason: Defaults to ``tool_calls`` when there are calls, else ``stop``.
    """
    calls = [normalise_tool_call(call, i) for i, call in enumerate(tool_calls)]
    if completion_tokens is None:
        completion_tokens = len((reasoning_content + " " + content).split())
    return ChatResponse(
        content=content,
        reasoning_content=reasoning_content,
        tool_calls=calls,
        usage=Usage(prompt_tokens=prompt_tokens, completion_tokens=completion_tokens),
        model=model,
        finish_reason=finish_reason or ("tool_calls" if calls else "stop"),
    )


class ScriptExhausted(AssertionError):
    """The test asked a :class:`ScriptedBackend` for more replies than it was given."""


class ScriptedBackend:
    """Replays a fixed script and records every request.

    Each script item is consumed by one ``complete`` call:
    a :class:`ChatResponse` is returned (its ``model`` set to the request's model when empty);
    a ``str`` becomes a plain text reply; an exception instance is raised (e.g. ``RateLimited("...")``);
    a callable is called with the request and its result returned.

    Args:
        script: The replies, in order.
        default: Reply used once the script is exhausted; None raises :class:`ScriptExhausted`.
        name: Label used in reprs and logs.
    """

    def __init__(self, script: Iterable[ScriptItem] = (), *, default: ScriptItem | None = None,
                 name: str = "scripted") -> None:
        self._script: list[ScriptItem] = list(script)
        self._default = default
        self.name = name
        self.requests: list[ChatRequest] = []

    def __repr__(self) -> str:
        return f"ScriptedBackend(name={self.name!r}, remaining={len(self._script)})"

    @property
    def remaining(self) -> int:
        """Number of unconsumed script items."""
        return len(self._script)

    def push(self, *items: ScriptItem) -> None:
        """Append replies to the script."""
        self._script.extend(items)

    def complete(self, request: ChatRequest) -> ChatResponse:
        """Record ``request`` and play the next script item."""
        self.requests.append(request)
        if self._script:
            item = self._script.pop(0)
        elif self._default is not None:
            item = self._default
        else:
            raise ScriptExhausted(f"ScriptedBackend {self.name!r}: script exhausted after "
                                  f"{len(self.requests) - 1} replies")
        if isinstance(item, BaseException):
            raise item
        if isinstance(item, str):
            item = scripted_reply(item)
        elif not isinstance(item, ChatResponse):
            item = item(request)
        if not item.model:
            item = item.model_copy(update={"model": request.model or self.name})
        return item
