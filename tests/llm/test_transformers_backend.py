"""TransformersBackend: text parsing, the generate flow with fakes, and a real model when torch is present."""

from __future__ import annotations

import importlib.util
import json
import os

import pytest

from shoparena.llm import BackendError, ChatRequest, TransformersBackend, parse_generated_text


def test_parse_hermes_tool_calls_and_reasoning() -> None:
    text = ('<think>need a search</think>Searching now.\n<tool_call>\n{"name": "find_product", '
            '"arguments": {"q": "mug"}}\n</tool_call>\n<tool_call>[{"name": "terminate", '
            '"parameters": {"status": "success"}}]</tool_call>')
    parsed = parse_generated_text(text, parse_tools=True, split_reasoning=True)
    assert parsed.reasoning_content == "need a search"
    assert parsed.content == "Searching now."
    names = [c["function"]["name"] for c in parsed.tool_calls]
    assert names == ["find_product", "terminate"]
    assert json.loads(parsed.tool_calls[1]["function"]["arguments"]) == {"status": "success"}
    assert len({c["id"] for c in parsed.tool_calls}) == 2


def test_parse_keeps_text_verbatim_without_tools() -> None:
    text = "<think>x</think>\n<tool_call>[{\"name\": \"a\", \"parameters\": {}}]</tool_call>"
    parsed = parse_generated_text(text, parse_tools=False, split_reasoning=False)
    assert parsed.content == text.strip() and parsed.tool_calls == [] and parsed.reasoning_content == ""


def test_parse_closing_think_only_and_malformed_block() -> None:
    parsed = parse_generated_text("plan it</think>answer <tool_call>{bad</tool_call>",
                                  parse_tools=True, split_reasoning=True)
    assert parsed.reasoning_content == "plan it"
    assert parsed.tool_calls == [] and "<tool_call>{bad" in parsed.content


class _Ids(list):
    """A list that looks enough like a 2-D tensor for the backend's indexing."""

    @property
    def shape(self) -> tuple[int, int]:
        return (len(self), len(self[0]))


class _Encoding(dict):
    def to(self, device: str) -> _Encoding:
        return self


class _FakeTokenizer:
    eos_token_id = 0
    pad_token_id = None

    def __init__(self) -> None:
        self.rendered: list[tuple[list, dict]] = []

    def apply_chat_template(self, messages, tokenize, add_generation_prompt, **kwargs):
        assert tokenize is False and add_generation_prompt is True
        self.rendered.append((messages, kwargs))
        return "PROMPT " + " ".join(m["content"] for m in messages)

    def __call__(self, text, return_tensors, add_special_tokens):
        return _Encoding(input_ids=_Ids([[1] * len(text.split())]))

    def decode(self, tokens, skip_special_tokens):
        return " ".join(tokens)


class _FakeModel:
    device = "cpu"

    def __init__(self, words: list[str]) -> None:
        self.words = words
        self.kwargs: dict = {}

    def generate(self, input_ids, **kwargs):
        self.kwargs = kwargs
        return [list(input_ids[0]) + self.words[: kwargs["max_new_tokens"]]]


def test_generate_flow_with_fakes() -> None:
    words = ['<tool_call>{"name":', '"find_product",', '"arguments":', '{"q":', '"mug"}}</tool_call>']
    tokenizer, model = _FakeTokenizer(), _FakeModel(words)
    backend = TransformersBackend("/nonexistent", model=model, tokenizer=tokenizer)
    tools = [{"type": "function", "function": {"name": "find_product"}}]
    response = backend.complete(ChatRequest(messages=[{"role": "user", "content": "a mug"}], tools=tools,
                                            max_tokens=50, temperature=0))
    assert tokenizer.rendered[0][1] == {"tools": tools}
    assert model.kwargs["do_sample"] is False and model.kwargs["pad_token_id"] == 0
    assert response.tool_calls[0]["function"]["name"] == "find_product"
    assert response.usage.prompt_tokens == 3 and response.usage.completion_tokens == 5
    assert response.finish_reason == "tool_calls"

    truncated = TransformersBackend("/nonexistent", model=_FakeModel(["a", "b", "STOP", "c"]),
                                    tokenizer=_FakeTokenizer())
    reply = truncated.complete(ChatRequest(messages=[{"role": "user", "content": "x"}], max_tokens=4,
                                           temperature=0.7, stop=["STOP"]))
    assert reply.content == "a b" and reply.finish_reason == "length"


def test_missing_model_dir_is_a_backend_error(tmp_path) -> None:
    with pytest.raises(BackendError, match="model_dir"):
        TransformersBackend(tmp_path / "absent").complete(
            ChatRequest(messages=[{"role": "user", "content": "x"}])
        )


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")
def test_real_tiny_model() -> None:
    model_dir = os.environ.get("SHOPARENA_TINY_MODEL_DIR")
    if not model_dir:
        pytest.skip("set SHOPARENA_TINY_MODEL_DIR to a local chat model folder")
    backend = TransformersBackend(model_dir, default_max_tokens=8)
    response = backend.complete(ChatRequest(messages=[{"role": "user", "content": "Say hi."}], temperature=0))
    assert response.usage.completion_tokens > 0 and response.usage.prompt_tokens > 0
