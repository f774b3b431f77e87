"""A server's ``usage.prompt_tokens_details.cached_tokens`` becomes the prompt tokens it computed."""

from __future__ import annotations

import pytest

from shoparena.llm.openai_compat import parse_chat_completion


def _payload(usage: dict) -> dict:
    return {"choices": [{"message": {"content": "ok"}, "finish_reason": "stop"}], "usage": usage}


@pytest.mark.parametrize(
    ("usage", "prefilled"),
    [
        ({"prompt_tokens": 900, "completion_tokens": 5, "prompt_tokens_details": {"cached_tokens": 832}}, 68),
        ({"prompt_tokens": 900, "completion_tokens": 5, "prompt_tokens_details": {"cached_tokens": 0}}, 900),
        ({"prompt_tokens": 900, "completion_tokens": 5}, None),  # the server did not say
        ({"prompt_tokens": 900, "prompt_tokens_details": None}, None),
        ({"prompt_tokens": 900, "prompt_tokens_details": {"cached_tokens": 901}}, None),  # impossible
        ({"prompt_tokens": 900, "prompt_tokens_details": {"cached_tokens": "832"}}, None),
        ({"prompt_tokens": 900, "prompt_tokens_details": {"cached_tokens": True}}, None),
    ],
)
def test_cached_tokens_give_the_prefilled_count(usage: dict, prefilled: int | None) -> None:
    reply = parse_chat_completion(_payload(usage))
    assert reply.usage.prompt_tokens == 900 and reply.usage.prefilled_tokens == prefilled
    assert reply.usage.prefix_miss is False
