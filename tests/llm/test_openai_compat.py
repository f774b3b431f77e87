"""OpenAICompatibleBackend against a real (loopback) HTTP server: results, retries and typed errors."""

from __future__ import annotations

import json
import socket

import pytest
from fake_openai_server import Action, FakeServer, completion

from shoparena.llm import (
    AuthError,
    BackendError,
    BackoffPolicy,
    ChatRequest,
    InvalidResponse,
    OpenAICompatibleBackend,
    RateLimited,
    Unavailable,
)

NO_JITTER = BackoffPolicy(initial_s=1.0, multiplier=2.0, max_s=5.0, jitter=False)


def _backend(server: FakeServer, sleeps: list[float], **kwargs) -> OpenAICompatibleBackend:
    kwargs.setdefault("max_retries", 3)
    kwargs.setdefault("backoff", NO_JITTER)
    return OpenAICompatibleBackend(server.base_url, "sk-test", "default-model", sleep=sleeps.append, **kwargs)


def _request(**kwargs) -> ChatRequest:
    return ChatRequest(messages=[{"role": "user", "content": "find a pink tumbler"}], **kwargs)


def test_success_parses_content_reasoning_tools_and_usage(server: FakeServer) -> None:
    tool_call = {"id": "call_9", "type": "function",
                 "function": {"name": "find_product", "arguments": "{\"q\": \"tumbler\"}"}}
    server.reset(Action(json=completion("", reasoning_content="think first", tool_calls=[tool_call],
                                       usage={"prompt_tokens": 40, "completion_tokens": 33},
                                       finish_reason="tool_calls")))
    sleeps: list[float] = []
    tools = [{"type": "function", "function": {"name": "find_product", "parameters": {"type": "object"}}}]
    response = _backend(server, sleeps).complete(
        _request(model="m1", tools=tools, temperature=0.0, max_tokens=64, stop="END")
    )
    assert response.content == ""
    assert response.reasoning_content == "think first"
    assert response.tool_calls == [tool_call]
    assert (response.usage.prompt_tokens, response.usage.completion_tokens) == (40, 33)
    assert response.model == "served-model"
    assert response.finish_reason == "tool_calls"
    body = server.received[0]
    assert body["model"] == "m1"
    assert body["stream"] is False
    assert body["tools"] == tools
    assert body["temperature"] == 0.0 and body["max_tokens"] == 64 and body["stop"] == ["END"]
    assert server.headers[0]["authorization"] == "Bearer sk-test"
    assert sleeps == []


def test_default_model_and_no_optional_fields(server: FakeServer) -> None:
    server.reset(Action(json=completion("hi")))
    response = _backend(server, []).complete(_request())
    assert response.content == "hi"
    body = server.received[0]
    assert body["model"] == "default-model"
    assert not {"tools", "temperature", "max_tokens", "stop"} & set(body)


def test_dict_arguments_and_reasoning_alias_are_normalised(server: FakeServer) -> None:
    function = {"name": "terminate", "arguments": {"status": "ok"}}
    raw_call = {"id": "c1", "type": "function", "function": function}
    server.reset(Action(json=completion(None, reasoning="via alias", tool_calls=[raw_call])))
    response = _backend(server, []).complete(_request())
    assert response.content == ""
    assert response.reasoning_content == "via alias"
    assert json.loads(response.tool_calls[0]["function"]["arguments"]) == {"status": "ok"}


def test_429_then_success_retries_with_backoff(server: FakeServer) -> None:
    server.reset(Action(status=429, json={"error": "slow down"}), Action(status=429, json={}),
                 Action(json=completion("done")))
    sleeps: list[float] = []
    response = _backend(server, sleeps).complete(_request())
    assert response.content == "done"
    assert len(server.received) == 3
    assert sleeps == [1.0, 2.0]


def test_retry_after_header_raises_the_delay(server: FakeServer) -> None:
    server.reset(Action(status=429, json={}, headers={"Retry-After": "3"}), Action(json=completion()))
    sleeps: list[float] = []
    _backend(server, sleeps).complete(_request())
    assert sleeps == [3.0]


def test_persistent_500_exhausts_retries(server: FakeServer) -> None:
    server.reset(*[Action(status=500, text="boom")] * 4)
    sleeps: list[float] = []
    backend = _backend(server, sleeps)
    with pytest.raises(Unavailable) as info:
        backend.complete(_request())
    assert info.value.status_code == 500 and info.value.retryable and info.value.reason == "server"
    assert "boom" in info.value.body
    assert len(server.received) == 4 == backend.attempts_made
    assert sleeps == [1.0, 2.0, 4.0]


def test_backoff_is_capped(server: FakeServer) -> None:
    server.reset(*[Action(status=503, text="")] * 5, Action(json=completion()))
    sleeps: list[float] = []
    _backend(server, sleeps, max_retries=5).complete(_request())
    assert sleeps == [1.0, 2.0, 4.0, 5.0, 5.0]


def test_rate_limit_exhausted_raises_rate_limited(server: FakeServer) -> None:
    server.reset(Action(status=429, json={}), Action(status=429, json={}))
    with pytest.raises(RateLimited) as info:
        _backend(server, [], max_retries=1).complete(_request())
    assert info.value.status_code == 429


@pytest.mark.parametrize("status", [401, 403])
def test_auth_errors_are_not_retried(server: FakeServer, status: int) -> None:
    server.reset(Action(status=status, json={"error": "bad key"}), Action(json=completion()))
    sleeps: list[float] = []
    with pytest.raises(AuthError) as info:
        _backend(server, sleeps).complete(_request())
    assert info.value.status_code == status and not info.value.retryable
    assert len(server.received) == 1 and sleeps == []


def test_other_4xx_is_a_plain_non_retryable_error(server: FakeServer) -> None:
    server.reset(Action(status=400, json={"error": "bad model"}), Action(json=completion()))
    with pytest.raises(BackendError) as info:
        _backend(server, []).complete(_request())
    assert type(info.value) is BackendError
    assert info.value.status_code == 400 and not info.value.retryable
    assert len(server.received) == 1


def test_invalid_json_200_is_invalid_response_retried_like_a_server_fault(server: FakeServer) -> None:
    server.reset(Action(status=200, text="{not json"), Action(json=completion("second")))
    sleeps: list[float] = []
    assert _backend(server, sleeps).complete(_request()).content == "second"
    assert len(server.received) == 2 and sleeps == [1.0]
    server.reset(Action(status=200, text="<html>proxy</html>"))
    with pytest.raises(InvalidResponse) as info:
        _backend(server, [], max_retries=0).complete(_request())
    assert info.value.status_code == 200 and info.value.retryable


def test_json_without_choices_is_invalid_response(server: FakeServer) -> None:
    server.reset(Action(json={"object": "chat.completion", "choices": []}))
    with pytest.raises(InvalidResponse):
        _backend(server, [], max_retries=0).complete(_request())


def test_timeout_is_retried_then_unavailable(server: FakeServer) -> None:
    server.reset(Action(json=completion(), delay_s=1.0), Action(json=completion("fast")))
    sleeps: list[float] = []
    response = _backend(server, sleeps, timeout=0.2).complete(_request())
    assert response.content == "fast" and len(sleeps) == 1

    server.reset(Action(json=completion(), delay_s=1.0))
    with pytest.raises(Unavailable) as info:
        _backend(server, [], max_retries=0).complete(_request(timeout_s=0.2))
    assert info.value.reason == "timeout" and info.value.status_code is None


def test_connection_refused_is_unavailable() -> None:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()  # nothing listens on this loopback port now
    sleeps: list[float] = []
    backend = OpenAICompatibleBackend(f"http://127.0.0.1:{port}/v1", None, "m", max_retries=2,
                                      backoff=NO_JITTER, sleep=sleeps.append)
    with pytest.raises(Unavailable) as info:
        backend.complete(_request())
    assert info.value.reason == "connection"
    assert sleeps == [1.0, 2.0] and backend.attempts_made == 3


def test_jittered_delays_stay_in_range_and_are_seeded() -> None:
    policy = BackoffPolicy(initial_s=2.0, multiplier=2.0, max_s=10.0, jitter=True)
    import random

    delays = [policy.delay(r, rng=random.Random(7)) for r in range(5)]
    for retry, delay in enumerate(delays):
        cap = min(2.0 * 2**retry, 10.0)
        assert cap / 2 <= delay <= cap
    assert delays == [policy.delay(r, rng=random.Random(7)) for r in range(5)]


def test_negative_max_retries_rejected() -> None:
    with pytest.raises(ValueError, match="max_retries"):
        OpenAICompatibleBackend("http://127.0.0.1:1/v1", max_retries=-1)
