"""HTTP backend for any OpenAI-compatible chat-completions server (vLLM, SGLang, llama.cpp, OpenAI, Chutes).

We speak the wire format with httpx rather than the ``openai`` client so that retries, error typing and the
raw payload stay under our control (the client has its own retry loop and reshapes non-standard fields such
as ``reasoning_content``).
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable
from typing import Any

import httpx
from pydantic import BaseModel, ConfigDict, Field

from shoparena.formats.scan import JsonDepthError, loads_bounded
from shoparena.llm.types import (
    BackendError,
    ChatRequest,
    ChatResponse,
    InvalidResponse,
    RateLimited,
    Unavailable,
    Usage,
    error_for_status,
)
from shoparena.records.unicode import json_bytes


class BackoffPolicy(BaseModel):
    """Exponential backoff between retries: ``min(initial_s * multiplier**retry, max_s)``.

    With ``jitter`` the delay is drawn uniformly from [delay/2, delay] so that many clients hitting one
    rate-limited server spread out; tests turn it off to get exact delays.
    """

    model_config = ConfigDict(extra="forbid")

    initial_s: float = Field(default=1.0, ge=0)
    multiplier: float = Field(default=2.0, ge=1)
    max_s: float = Field(default=30.0, ge=0)
    jitter: bool = True

    def delay(
        self, retry: int, *, retry_after_s: float | None = None, rng: random.Random | None = None
    ) -> float:
        """Seconds to wait before retry number ``retry`` (0-based).

        Args:
            retry: 0 for the first retry.
            retry_after_s: Server's Retry-After; the delay is at least this (still capped at ``max_s``).
            rng: Random source for jitter.
        """
        base = min(self.initial_s * self.multiplier**retry, self.max_s)
        if self.jitter:
            base = (rng or random).uniform(base / 2, base)
        if retry_after_s is not None:
            base = max(base, min(retry_after_s, self.max_s))
        return base


def _retry_after(headers: httpx.Headers) -> float | None:
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None  # HTTP-date form: rare on inference servers, fall back to our own backoff


def normalise_tool_call(call: dict[str, Any], index: int = 0) -> dict[str, Any]:
    """Return a tool call in strict OpenAI shape with ``arguments`` as a JSON string.

    Accepts the OpenAI shape and the flat ``{"name", "arguments"|"parameters"}`` shape some servers and
    scripts use; dict arguments are serialised because OpenAI clients expect a string.
    """
    function = call.get("function") if isinstance(call.get("function"), dict) else call
    name = function.get("name", "")
    arguments = function.get("arguments", function.get("parameters", {}))
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments, ensure_ascii=False)
    return {
        "id": call.get("id") or f"call_{index}",
        "type": "function",
        "function": {"name": name, "arguments": arguments},
    }


def parse_chat_completion(payload: Any, *, body: str = "") -> ChatResponse:
    """Turn a decoded chat-completion payload into a :class:`ChatResponse`.

    Args:
        payload: The decoded JSON body.
        body: The raw body text, kept in the error for diagnostics.

    Raises:
        InvalidResponse: The payload has no ``choices[0].message``.
    """
    if not isinstance(payload, dict):
        raise InvalidResponse("chat completion body is not a JSON object", body=body)
    choices = payload.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise InvalidResponse("chat completion has no choices", body=body)
    message = choices[0].get("message")
    if not isinstance(message, dict):
        raise InvalidResponse("chat completion choices[0] has no message", body=body)
    # A 200 that is not a chat completion is the server's fault (infrastructure, retried), never the model's:
    # every field the response carries is checked for its type here.
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        raise InvalidResponse(f"chat completion message.content is {_kind(content)}, not a string", body=body)
    # vLLM/SGLang call the separate reasoning channel `reasoning_content`; newer vLLM also `reasoning`.
    reasoning = message.get("reasoning_content") or message.get("reasoning") or ""
    raw_calls = message.get("tool_calls") or []
    if not isinstance(raw_calls, list):
        kind = _kind(raw_calls)
        raise InvalidResponse(f"chat completion message.tool_calls is {kind}, not a list", body=body)
    finish = choices[0].get("finish_reason")
    if finish is not None and not isinstance(finish, str):
        raise InvalidResponse(f"chat completion finish_reason is {_kind(finish)}, not a string", body=body)
    usage = payload.get("usage") if isinstance(payload.get("usage"), dict) else {}
    model = payload.get("model")
    return ChatResponse(
        content=content or "",
        reasoning_content=reasoning if isinstance(reasoning, str) else "",
        tool_calls=[normalise_tool_call(c, i) for i, c in enumerate(raw_calls) if isinstance(c, dict)],
        usage=_usage(usage, body),
        model=model if isinstance(model, str) else "",
        finish_reason=finish,
        raw=payload,
    )


#: Largest token count a usage field may report (a server reporting more is broken, not generous).
MAX_TOKEN_COUNT = 2**31 - 1
#: Largest chat-completion body read (bytes); a longer one is an invalid response, not a memory spike.
MAX_RESPONSE_BYTES = 64 * 1024 * 1024


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _token_count(usage: dict[str, Any], key: str, body: str) -> int:
    value = usage.get(key)
    if value is None:
        return 0
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_TOKEN_COUNT:
        shown = repr(value)[:40]
        raise InvalidResponse(f"chat completion usage.{key} is {shown}, not a token count", body=body)
    return value


def _usage(usage: dict[str, Any], body: str) -> Usage:
    """Token counts of a completion's ``usage`` (each a checked token count, else InvalidResponse);
    ``prompt_tokens_details.cached_tokens`` (vLLM with ``--enable-prompt-tokens-details``, SGLang, OpenAI)
    gives the prompt tokens the server computed."""
    prompt = _token_count(usage, "prompt_tokens", body)
    details = usage.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    prefilled = None
    if isinstance(cached, int) and not isinstance(cached, bool) and 0 <= cached <= prompt:
        prefilled = prompt - cached
    completion = _token_count(usage, "completion_tokens", body)
    return Usage(prompt_tokens=prompt, completion_tokens=completion, prefilled_tokens=prefilled)


class OpenAICompatibleBackend:
    """Non-streaming chat completions against ``{base_url}/chat/completions`` with typed errors and retries.

    Retries cover 429, 5xx, connection errors, timeouts and 200 bodies that are not a chat completion (up to
    ``max_retries`` extra attempts, with :class:`BackoffPolicy` delays). 401/403 and other 4xx raise at once.

    Args:
        base_url: Server root including the API prefix, e.g. ``http://127.0.0.1:8000/v1``.
        api_key: Bearer token; None or "" sends no Authorization header.
        model: Default model when a request names none.
        timeout: Default per-attempt timeout in seconds.
        max_retries: Extra attempts after the first one for retryable errors.
        backoff: Delay policy between attempts.
        headers: Extra headers sent on every request.
        sleep: Sleep function (injectable so tests do not wait).
        client: An httpx.Client to reuse (the backend then does not close it).
        seed: Seed for the jitter random source (deterministic delays).
    """

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        model: str | None = None,
        *,
        timeout: float = 60.0,
        max_retries: int = 3,
        backoff: BackoffPolicy | None = None,
        headers: dict[str, str] | None = None,
        sleep: Callable[[float], None] = time.sleep,
        client: httpx.Client | None = None,
        seed: int | None = None,
    ) -> None:
        if max_retries < 0:
            raise ValueError("OpenAICompatibleBackend.max_retries must be >= 0")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff or BackoffPolicy()
        self._sleep = sleep
        self._rng = random.Random(seed)
        self._headers = {"Content-Type": "application/json", **(headers or {})}
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
        self._own_client = client is None
        self._client = client or httpx.Client()
        self.attempts_made = 0  # total HTTP attempts over the backend's life, for logs and tests

    @property
    def model_name(self) -> str | None:
        """The model requests name when the caller names none (the spec's ``#model``)."""
        return self.model

    def __repr__(self) -> str:
        return f"OpenAICompatibleBackend(base_url={self.base_url!r}, model={self.model!r})"

    def close(self) -> None:
        """Close the HTTP client if this backend created it."""
        if self._own_client:
            self._client.close()

    def __enter__(self) -> OpenAICompatibleBackend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def build_body(self, request: ChatRequest) -> dict[str, Any]:
        """The JSON body sent for ``request`` (stream is always false)."""
        body: dict[str, Any] = {"messages": request.messages, "stream": False}
        model = request.model or self.model
        if model:
            body["model"] = model
        if request.tools:
            body["tools"] = request.tools
        if request.temperature is not None:
            body["temperature"] = request.temperature
        if request.max_tokens is not None:
            body["max_tokens"] = request.max_tokens
        if request.stop:
            body["stop"] = request.stop
        body.update(request.extra_body)
        return body

    def complete(self, request: ChatRequest) -> ChatResponse:
        """Run one chat completion, retrying transient failures.

        Raises:
            RateLimited, Unavailable: Still failing after the last retry.
            AuthError: 401/402/403.
            InvalidResponse: A 200 whose body is not a chat completion.
            BackendError: Any other non-200 status.
        """
        body = self.build_body(request)
        timeout = request.timeout_s or self.timeout
        for retry in range(self.max_retries + 1):
            try:
                return self._attempt(body, timeout)
            except BackendError as error:
                if not error.retryable or retry == self.max_retries:
                    raise
                retry_after = error.retry_after_s if isinstance(error, RateLimited) else None
                self._sleep(self.backoff.delay(retry, retry_after_s=retry_after, rng=self._rng))
        raise AssertionError("unreachable: the loop returns or raises")  # pragma: no cover

    def _attempt(self, body: dict[str, Any], timeout: float) -> ChatResponse:
        """One request under a whole-request deadline of ``timeout`` seconds (httpx's own timeout is per
        read, so a server dripping a byte a second would never time out), its body capped in size."""
        self.attempts_made += 1
        deadline = time.monotonic() + timeout
        try:
            with self._client.stream(
                "POST",
                f"{self.base_url}/chat/completions",
                content=json_bytes(body),  # a lone surrogate (a model name, a prompt) goes as its escape
                headers=self._headers,
                timeout=timeout,
            ) as response:
                chunks, size = [], 0
                for chunk in response.iter_bytes():
                    size += len(chunk)
                    if size > MAX_RESPONSE_BYTES:
                        raise InvalidResponse(f"response body over {MAX_RESPONSE_BYTES} bytes", body="")
                    chunks.append(chunk)
                    if time.monotonic() > deadline:
                        raise Unavailable(f"timeout: no whole response within {timeout}s", reason="timeout")
        except httpx.TimeoutException as exc:
            raise Unavailable(f"timeout after {timeout}s: {exc}", reason="timeout") from exc
        except httpx.TransportError as exc:
            raise Unavailable(f"connection error: {exc}", reason="connection") from exc
        text = b"".join(chunks).decode(response.encoding or "utf-8", errors="replace")
        if response.status_code != 200:
            raise error_for_status(response.status_code, text, retry_after_s=_retry_after(response.headers))
        try:
            payload = loads_bounded(text)
        except JsonDepthError as exc:
            raise InvalidResponse(f"200 with a body {exc}", body=text[:200]) from exc
        except ValueError as exc:
            raise InvalidResponse(f"200 with a body that is not JSON: {text[:200]!r}", body=text) from exc
        return parse_chat_completion(payload, body=text)
