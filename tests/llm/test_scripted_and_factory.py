"""ScriptedBackend behaviour and the spec factory."""

from __future__ import annotations

import json

import pytest

from shoparena.llm import (
    ChatBackend,
    ChatRequest,
    OpenAICompatibleBackend,
    RateLimited,
    ScriptedBackend,
    ScriptExhausted,
    TransformersBackend,
    backend_from_spec,
    parse_backend_spec,
    scripted_reply,
)


def _req(text: str = "hi", model: str | None = "m") -> ChatRequest:
    return ChatRequest(model=model, messages=[{"role": "user", "content": text}])


def test_scripted_replies_in_order_and_records_requests() -> None:
    backend = ScriptedBackend([
        "plain text",
        scripted_reply(tool_calls=[{"name": "find_product", "arguments": {"q": "mug"}}]),
        RateLimited("busy"),
        lambda request: scripted_reply("echo " + request.messages[-1]["content"]),
    ])
    assert isinstance(backend, ChatBackend)
    first = backend.complete(_req("a"))
    assert first.content == "plain text" and first.model == "m"
    second = backend.complete(_req("b"))
    call = second.tool_calls[0]
    assert call["type"] == "function" and call["function"]["name"] == "find_product"
    assert json.loads(call["function"]["arguments"]) == {"q": "mug"}
    assert second.finish_reason == "tool_calls"
    with pytest.raises(RateLimited):
        backend.complete(_req("c"))
    assert backend.complete(_req("d")).content == "echo d"
    assert [r.messages[0]["content"] for r in backend.requests] == ["a", "b", "c", "d"]
    with pytest.raises(ScriptExhausted):
        backend.complete(_req("e"))


def test_scripted_default_and_token_count() -> None:
    backend = ScriptedBackend(default="again")
    assert [backend.complete(_req()).content for _ in range(3)] == ["again"] * 3
    reply = scripted_reply("one two three", reasoning_content="four five")
    assert reply.usage.completion_tokens == 5


def test_parse_backend_spec_forms() -> None:
    assert parse_backend_spec("openai:http://127.0.0.1:8000/v1#Qwen/Qwen3-4B") == (
        "openai", "http://127.0.0.1:8000/v1", "Qwen/Qwen3-4B")
    assert parse_backend_spec("http://localhost:30000/v1") == ("openai", "http://localhost:30000/v1", None)
    assert parse_backend_spec("hf:/models/tiny") == ("transformers", "/models/tiny", None)
    for bad in ("nonsense", "grpc:http://x", "openai:", "openai:/not/a/url"):
        with pytest.raises(ValueError, match="backend spec"):
            parse_backend_spec(bad)


def test_backend_from_spec_builds_configured_backends(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("SHOPARENA_LLM_API_KEY", "from-env")
    backend = backend_from_spec("openai:http://127.0.0.1:9/v1#judge-model", timeout=5.0, max_retries=1)
    assert isinstance(backend, OpenAICompatibleBackend)
    assert backend.model == "judge-model" and backend.timeout == 5.0 and backend.max_retries == 1
    assert backend._headers["Authorization"] == "Bearer from-env"
    explicit = backend_from_spec("http://127.0.0.1:9/v1", api_key="")
    assert "Authorization" not in explicit._headers
    local = backend_from_spec(f"transformers:{tmp_path}", default_max_tokens=16)
    assert isinstance(local, TransformersBackend) and local.default_max_tokens == 16
