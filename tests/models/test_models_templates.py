"""The tools chat template: tool list, tool-call round trip with the parser, assistant mask, thinking."""

from __future__ import annotations

import json
import re

import pytest
from models_support import TOOLS

from shoparena.llm.transformers_backend import parse_generated_text
from shoparena.models.smollm2 import DEFAULT_SYSTEM
from shoparena.models.templates import chatml_tools_template

CONVERSATION = [
    {"role": "system", "content": "You are a shopping agent."},
    {"role": "user", "content": "red running shoes under 300"},
    {
        "role": "assistant",
        "content": None,
        "reasoning_content": "Search with a price filter.",
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                # OpenAI shape: arguments as a JSON string
                "function": {"name": "find_product", "arguments": '{"q": "red running shoes", "page": 1}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": '[{"product_id": "111"}]'},
    {"role": "tool", "tool_call_id": "c2", "content": '[{"product_id": "222"}]'},
    {
        "role": "assistant",
        "content": "Product 111 fits.",
        # HF shape: arguments as a mapping
        "tool_calls": [
            {"type": "function", "function": {"name": "terminate", "arguments": {"status": "success"}}}
        ],
    },
]


def _assistant_segments(text: str) -> list[str]:
    return re.findall(r"<\|im_start\|>assistant\n(.*?<\|im_end\|>)", text, flags=re.DOTALL)


def test_tools_are_listed_one_json_line_each_in_the_system_turn(tiny_tokenizer) -> None:
    text = tiny_tokenizer.apply_chat_template(CONVERSATION[:2], tools=TOOLS, tokenize=False)
    system = text.split("<|im_end|>")[0]
    assert system.startswith("<|im_start|>system\nYou are a shopping agent.")
    block = system.split("<tools>\n", 1)[1].split("</tools>", 1)[0]
    assert [json.loads(line) for line in block.splitlines()] == TOOLS
    without = tiny_tokenizer.apply_chat_template(CONVERSATION[:2], tokenize=False)
    assert "<tools>" not in without
    assert without.startswith("<|im_start|>system\nYou are a shopping agent.<|im_end|>\n")


def test_rendered_tool_calls_parse_back_to_the_same_calls(tiny_tokenizer) -> None:
    text = tiny_tokenizer.apply_chat_template(CONVERSATION, tools=TOOLS, tokenize=False)
    segments = _assistant_segments(text)
    assert len(segments) == 2
    expected = [
        [("find_product", {"q": "red running shoes", "page": 1})],
        [("terminate", {"status": "success"})],
    ]
    for segment, want in zip(segments, expected, strict=True):
        parsed = parse_generated_text(
            segment.removesuffix("<|im_end|>"), parse_tools=True, split_reasoning=True
        )
        got = [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in parsed.tool_calls]
        assert got == want
    first = parse_generated_text(segments[0][:-10], parse_tools=True, split_reasoning=True)
    assert first.reasoning_content == "Search with a price filter."
    assert "Product 111 fits." in segments[1]


def test_consecutive_tool_messages_share_one_user_turn(tiny_tokenizer) -> None:
    text = tiny_tokenizer.apply_chat_template(CONVERSATION, tokenize=False)
    turn = text.split("</tool_call><|im_end|>\n", 1)[1].split("<|im_end|>", 1)[0]
    assert turn == (
        '<|im_start|>user\n<tool_response>\n[{"product_id": "111"}]\n</tool_response>'
        '\n<tool_response>\n[{"product_id": "222"}]\n</tool_response>'
    )


@pytest.mark.parametrize("thinking", [True, False])
def test_assistant_mask_covers_exactly_the_assistant_output(tiny_tokenizer, thinking: bool) -> None:
    template = chatml_tools_template(thinking=thinking)
    out = tiny_tokenizer.apply_chat_template(
        CONVERSATION, tools=TOOLS, chat_template=template, return_dict=True, return_assistant_tokens_mask=True
    )
    ids, mask = out["input_ids"], out["assistant_masks"]
    assert len(ids) == len(mask)
    masked = tiny_tokenizer.decode([i for i, m in zip(ids, mask, strict=True) if m])
    text = tiny_tokenizer.apply_chat_template(
        CONVERSATION, tools=TOOLS, chat_template=template, tokenize=False
    )
    # Every assistant token, the closing <|im_end|> included, and nothing else.
    assert masked == "".join(_assistant_segments(text))
    assert masked.count("<|im_end|>") == 2
    assert ("<think>" in masked) is thinking


def test_thinking_switch_and_default_system(tiny_tokenizer) -> None:
    user_only = [{"role": "user", "content": "hi"}]
    on = tiny_tokenizer.apply_chat_template(user_only, tokenize=False, add_generation_prompt=True)
    off = tiny_tokenizer.apply_chat_template(
        user_only, tokenize=False, add_generation_prompt=True, enable_thinking=False
    )
    assert on.endswith("<|im_start|>assistant\n")
    assert off == on + "<think>\n\n</think>\n\n"
    smol = chatml_tools_template(default_system=DEFAULT_SYSTEM)
    text = tiny_tokenizer.apply_chat_template(
        user_only, chat_template=smol, tokenize=False, add_generation_prompt=True, enable_thinking=False
    )
    assert text == (
        f"<|im_start|>system\n{DEFAULT_SYSTEM}<|im_end|>\n"
        "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"
    )
