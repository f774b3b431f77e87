"""Chat request/response records, the backend protocol and typed backend errors.

Every backend (HTTP, local transformers, scripted) speaks these records, so agents and the judge never see
transport details. Messages and tool calls keep the OpenAI chat-completions shape because that is what
vLLM, SGLang, llama.cpp, Chutes and OpenAI all accept.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, field_validator


class ChatRequest(BaseModel):
    """One non-streaming chat-completion request.

    Attributes:
        model: Model name; None lets the backend use its default model.
        messages: OpenAI-style message dicts (``{"role": ..., "content": ...}``).
        tools: OpenAI tool schemas (``{"type": "function", "function": {...}}``), or None.
        temperature: Sampling temperature; None leaves the server default.
        max_tokens: Cap on generated tokens; None leaves the server default.
        stop: Stop string(s), or None.
        timeout_s: Per-request timeout overriding the backend's default, or None.
        extra_body: Extra JSON fields merged into the HTTP body (e.g. ``chat_template_kwargs``).
        session: The episode this request belongs to. An in-process engine that keeps per-episode state
            (the transformers engine's key/value cache) reuses it for the episode's next turn; it is never
            sent to a server (a server's prefix cache matches the prompt tokens themselves).
    """

    model_config = ConfigDict(extra="forbid")

    model: str | None = None
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None = None
    temperature: float | None = None
    max_tokens: int | None = Field(default=None, ge=1)
    stop: list[str] | None = None
    timeout_s: float | None = Field(default=None, gt=0)
    extra_body: dict[str, Any] = Field(default_factory=dict)
    session: str | None = None

    @field_validator("stop", mode="before")
    @classmethod
    def _stop_as_list(cls, value: Any) -> Any:
        # OpenAI accepts a bare string; normalise so backends handle one shape.
        return [value] if isinstance(value, str) else value

    @field_validator("messages")
    @classmethod
    def _messages_have_roles(cls, value: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for i, message in enumerate(value):
            if "role" not in message:
                raise ValueError(f"ChatRequest.messages[{i}] has no 'role'")
        return value


class Usage(BaseModel):
    """Token counts reported by the server (0 when it reported none).

    Attributes:
        prompt_tokens: Tokens of the prompt.
        completion_tokens: Tokens generated.
        prefilled_tokens: Prompt tokens the engine actually computed (the rest came from its prefix cache);
            None when the engine did not say (a server that reports no ``cached_tokens``).
        prefix_miss: The prompt did not extend the episode's previous prompt token for token, so the
            engine could not reuse that turn (in-process transformers engine only).
    """

    model_config = ConfigDict(extra="forbid")

    prompt_tokens: int = 0
    completion_tokens: int = 0
    prefilled_tokens: int | None = None
    prefix_miss: bool = False


class ChatResponse(BaseModel):
    """One assistant turn.

    Attributes:
        content: Assistant text ("" when the model only called tools).
        reasoning_content: Separate reasoning channel (vLLM/SGLang reasoning parsers), "" when absent.
        tool_calls: OpenAI-shape calls ``{"id", "type": "function", "function": {"name", "arguments": str}}``.
        usage: Token counts.
        model: Model name the server reports.
        finish_reason: ``stop``, ``length``, ``tool_calls`` ... or None.
        raw: The decoded server payload, for debugging and logs.
    """

    model_config = ConfigDict(extra="forbid")

    content: str = ""
    reasoning_content: str = ""
    tool_calls: list[dict[str, Any]] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    model: str = ""
    finish_reason: str | None = None
    raw: dict[str, Any] | None = None


@runtime_checkable
class ChatBackend(Protocol):
    """Anything that turns a :class:`ChatRequest` into a :class:`ChatResponse` (or raises BackendError)."""

    def complete(self, request: ChatRequest) -> ChatResponse:
        """Run one chat completion."""
        ...


class BackendError(Exception):
    """A chat backend failed.

    Attributes:
        status_code: HTTP status when there was a response, else None.
        retryable: Whether retrying the same request later can succeed.
        body: Up to 2000 characters of the response body, for diagnostics.
    """

    def __init__(
        self, message: str, *, status_code: int | None = None, retryable: bool = False, body: str = ""
    ) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.retryable = retryable
        self.body = body[:2000]


class RateLimited(BackendError):
    """HTTP 429. Retryable; ``retry_after_s`` holds the server's Retry-After when it sent one."""

    def __init__(self, message: str, *, body: str = "", retry_after_s: float | None = None) -> None:
        super().__init__(message, status_code=429, retryable=True, body=body)
        self.retry_after_s = retry_after_s


class AuthError(BackendError):
    """HTTP 401/403 (or 402, unpaid): credentials are wrong; retrying cannot help."""

    def __init__(self, message: str, *, status_code: int, body: str = "") -> None:
        super().__init__(message, status_code=status_code, retryable=False, body=body)


class Unavailable(BackendError):
    """The server is down or slow: 5xx, connection failure or timeout. Retryable.

    Attributes:
        reason: ``"server"`` (5xx), ``"connection"`` or ``"timeout"``.
    """

    def __init__(
        self, message: str, *, reason: str, status_code: int | None = None, body: str = ""
    ) -> None:
        super().__init__(message, status_code=status_code, retryable=True, body=body)
        self.reason = reason


class InvalidResponse(BackendError):
    """HTTP 200 whose body is not a usable chat completion (bad JSON, no choices): a fault of the server
    (a proxy's error page, a half-written body), retried like a 5xx."""

    def __init__(self, message: str, *, body: str = "") -> None:
        super().__init__(message, status_code=200, retryable=True, body=body)


def error_for_status(status_code: int, body: str, *, retry_after_s: float | None = None) -> BackendError:
    """Map a non-200 HTTP status to the typed error a caller can dispatch on.

    Args:
        status_code: The HTTP status.
        body: The response body text.
        retry_after_s: Parsed ``Retry-After`` header, if any.

    Returns:
        The matching :class:`BackendError` subclass (plain BackendError for other 4xx).
    """
    message = f"HTTP {status_code}: {body[:200]}"
    if status_code == 429:
        return RateLimited(message, body=body, retry_after_s=retry_after_s)
    if status_code in (401, 402, 403):
        return AuthError(message, status_code=status_code, body=body)
    if status_code >= 500:
        return Unavailable(message, reason="server", status_code=status_code, body=body)
    return BackendError(message, status_code=status_code, retryable=False, body=body)
