"""``ChatTemplateTokenizer`` (the corpus build's chat rendering without transformers) renders the same text
and counts the same ids as the transformers tokenizer it stands in for, on the template's every branch."""

from __future__ import annotations

import copy

import pytest
from models_support import TOOLS
from tokenizers import Tokenizer

from shoparena.models.templates import ChatTemplateTokenizer
from shoparena.models.tiny import tiny_chat_tokenizer, tiny_tokenizer_json, wrap_tiny_tokenizer

CALL = {
    "type": "function",
    "function": {"name": "find_product", "arguments": '{"q": "red <tool_call> shoe"}'},
}
CONVERSATIONS = [
    [{"role": "user", "content": "red running shoes"}],  # no system turn
    [
        {"role": "system", "content": "You are a shopping agent. 购物"},
        {"role": "user", "content": "red running shoes under 300 <|im_end|> sneaky"},
        {"role": "assistant", "content": "", "reasoning_content": "  Search first.  ", "tool_calls": [CALL]},
        {"role": "tool", "content": '[{"product_id": "111", "title": "Röd sko"}]'},
        {"role": "tool", "content": {"products": [1, 2]}},  # a mapping: the template's tojson
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "Product 111 fits."}],
            "tool_calls": [
                {"function": {"name": "recommend_product", "arguments": {"product_ids": "111"}}},
                {"function": {"name": "terminate", "arguments": {"status": "success"}}},
            ],
        },
    ],
    [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "x"},
        {"role": "assistant", "content": "answer", "thinking": "older name for the reasoning"},
        {"role": "tool", "content": "late result"},
    ],
]


@pytest.fixture(scope="module")
def pair():
    text = tiny_tokenizer_json()
    return wrap_tiny_tokenizer(Tokenizer.from_str(text)), tiny_chat_tokenizer(Tokenizer.from_str(text))


@pytest.mark.parametrize("conversation", CONVERSATIONS)
@pytest.mark.parametrize("tools", [None, TOOLS])
@pytest.mark.parametrize("extra", [{}, {"add_generation_prompt": True, "enable_thinking": False}])
def test_same_text_and_ids_as_the_transformers_tokenizer(pair, conversation, tools, extra):
    reference, ours = pair
    before = copy.deepcopy(conversation)
    want = reference.apply_chat_template(copy.deepcopy(conversation), tools=tools, tokenize=False, **extra)
    got = ours.apply_chat_template(conversation, tools=tools, tokenize=False, **extra)
    assert got == want
    assert conversation == before  # the caller's messages are not edited
    assert (
        ours(got, add_special_tokens=False)["input_ids"]
        == reference(want, add_special_tokens=False)["input_ids"]
    )
    assert ours.chat_template == reference.chat_template


def test_it_renders_text_only_and_refuses_an_empty_conversation(pair):
    _, ours = pair
    assert isinstance(ours, ChatTemplateTokenizer)
    with pytest.raises(ValueError, match="text only"):
        ours.apply_chat_template(CONVERSATIONS[0], tokenize=True)
    with pytest.raises(ValueError, match="empty conversation"):
        ours.apply_chat_template([])


def test_a_template_from_elsewhere_renders_in_the_sandbox(pair):
    """Only this package's own template renders outside Jinja's sandbox; any other template given to the
    class is sandboxed, as transformers renders it (unsafe attribute access refused)."""
    from jinja2.exceptions import SecurityError

    _, ours = pair
    probe = "{{ messages.__class__.__mro__ }}"
    foreign = ChatTemplateTokenizer(ours.backend, probe, {})
    with pytest.raises(SecurityError):
        foreign.apply_chat_template([{"role": "user", "content": "x"}])
    trusted = ChatTemplateTokenizer(ours.backend, probe, {}, sandboxed=False)
    assert "object" in trusted.apply_chat_template([{"role": "user", "content": "x"}])


def test_the_plain_environment_reads_attributes_as_jinja_does(pair):
    """Outside the sandbox a dict's keys are read first (no failed attribute lookup per read): the same text
    as Jinja's own lookup, a key that shares a dict method's name included (Jinja gives the method)."""
    import jinja2

    _, ours = pair
    probe = (
        "{% for m in messages %}{{ m.role }}|{{ m.content }}|{{ m.items is defined }}|"
        "{{ m.missing is defined }}|{{ m.tool_calls[0].function.name if m.tool_calls is defined }};"
        "{% endfor %}"
    )
    messages = [
        {"role": "user", "content": "x", "items": "a key named like a dict method"},
        {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "find_product"}}]},
    ]
    plain = ChatTemplateTokenizer(ours.backend, probe, {}, sandboxed=False)
    want = jinja2.Environment().from_string(probe).render(messages=messages)
    assert plain.apply_chat_template(messages) == want
    assert "find_product" in want and "True|False" in want
