"""TransformersBackend on a real (tiny) model: prompt with tools, usage, stop strings, template kwargs."""

from __future__ import annotations

from pathlib import Path

import pytest
from models_support import MISSING, SKIP_REASON, TOOLS

from shoparena.llm.factory import backend_from_spec
from shoparena.llm.transformers_backend import TransformersBackend
from shoparena.llm.types import ChatRequest, ChatResponse

pytestmark = pytest.mark.skipif(bool(MISSING), reason=SKIP_REASON)

MESSAGES = [
    {"role": "system", "content": "You are a shopping agent."},
    {"role": "user", "content": "Find black leather backpacks under 300 yuan."},
]


def _prompt_len(tokenizer, **template_kwargs) -> int:
    text = tokenizer.apply_chat_template(
        MESSAGES, tokenize=False, add_generation_prompt=True, **template_kwargs
    )
    return len(tokenizer(text, add_special_tokens=False)["input_ids"])


def test_complete_with_tools_renders_them_and_reports_usage(
    tiny_backend: TransformersBackend, tiny_tokenizer
) -> None:
    response = tiny_backend.complete(ChatRequest(messages=MESSAGES, tools=TOOLS, max_tokens=8))
    assert isinstance(response, ChatResponse)
    with_tools = _prompt_len(tiny_tokenizer, tools=TOOLS)
    # The prompt the backend generated from is exactly the template rendering with the tool list.
    assert response.usage.prompt_tokens == with_tools
    assert with_tools > _prompt_len(tiny_tokenizer) + 50
    assert 1 <= response.usage.completion_tokens <= 8
    expected_finish = "length" if response.usage.completion_tokens == 8 else "stop"
    assert response.finish_reason in (expected_finish, "tool_calls")
    assert response.model == Path(tiny_backend.model_dir).name
    assert isinstance(response.raw["text"], str)


def test_greedy_is_repeatable_and_stop_strings_cut_the_text(tiny_backend: TransformersBackend) -> None:
    request = ChatRequest(messages=MESSAGES, max_tokens=12, temperature=0)
    first = tiny_backend.complete(request)
    assert tiny_backend.complete(request).raw == first.raw
    text = first.raw["text"]
    if len(text) < 4:
        pytest.skip(f"greedy output too short to pick a stop string: {text!r}")
    stop = text[len(text) // 2 : len(text) // 2 + 2]
    cut = tiny_backend.complete(request.model_copy(update={"stop": [stop]}))
    assert cut.raw["text"] == text[: text.index(stop)]
    assert cut.usage.completion_tokens <= first.usage.completion_tokens


def test_chat_template_kwargs_reach_the_template(tiny_backend: TransformersBackend, tiny_tokenizer) -> None:
    request = ChatRequest(
        messages=MESSAGES, max_tokens=1, extra_body={"chat_template_kwargs": {"enable_thinking": False}}
    )
    response = tiny_backend.complete(request)
    assert response.usage.prompt_tokens == _prompt_len(tiny_tokenizer, enable_thinking=False)
    assert response.usage.prompt_tokens > _prompt_len(tiny_tokenizer)


def test_factory_spec_builds_a_working_backend(tiny_dir: Path) -> None:
    backend = backend_from_spec(f"transformers:{tiny_dir}", device="cpu", default_max_tokens=3)
    response = backend.complete(ChatRequest(messages=MESSAGES))
    assert 1 <= response.usage.completion_tokens <= 3
