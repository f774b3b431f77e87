"""Agent-side helpers: ORO-compatible registry, ids, content and steps."""

from __future__ import annotations

import json

import pytest

from shoparena import agent_sdk
from shoparena.agent_sdk import tools as sdk_tools


@pytest.mark.parametrize(
    ("name", "params", "expected"),
    [
        ("terminate", {"status": "success"}, "NR0gqQng"),
        ("find_product", {"q": "hosport waist bag", "price": "180-505"}, "0F6wQPb_"),
        ("find_product", {"price": "180-505", "q": "hosport waist bag"}, "7aHeHyUn"),
    ],
)
def test_tool_call_id_matches_spec_examples(name, params, expected):
    assert agent_sdk.tool_call_id(name, params) == expected
    assert sdk_tools._local_tool_call_id(name, params) == expected


def test_local_id_agrees_with_formats_module():
    tagged = pytest.importorskip("shoparena.formats.tagged")
    params = {"q": "red nike shoes", "page": 1, "nested": {"a": [1, 2]}}
    assert sdk_tools._local_tool_call_id("find_product", params) == tagged.tool_call_id(
        "find_product", params
    )


def test_tool_decorator_forms_and_execute():
    @agent_sdk.Tool
    def sdk_test_double(x: int) -> int:
        return 2 * x

    @agent_sdk.Tool("sdk_test_named")
    def whatever(x: int) -> int:
        return x + 1

    assert agent_sdk.execute_tool_call("sdk_test_double", {"x": 4})["result"] == 8
    out = agent_sdk.execute_tool_call("sdk_test_named", {"x": 4})
    assert out == {
        "name": "sdk_test_named",
        "parameters": {"x": 4},
        "tool_call_id": agent_sdk.tool_call_id("sdk_test_named", {"x": 4}),
        "result": 5,
    }
    with pytest.raises(ValueError, match="not registered"):
        agent_sdk.get_tool("sdk_no_such_tool")


def test_format_content_and_step():
    call = {
        "name": "recommend_product",
        "parameters": {"product_ids": "1,2"},
        "tool_call_id": "abc",
        "result": "r",
    }
    content = agent_sdk.format_content("why", [call], "done")
    assert content.split("\n") == [
        "<think>why</think>",
        '<tool_call>[{"name": "recommend_product", "parameters": {"product_ids": "1,2"}}]</tool_call>',
        "<response>done</response>",
    ]
    assert agent_sdk.format_content("", [], "") == ""
    step = agent_sdk.create_dialogue_step("why", [call], "", "the query", 3, timestamp_ms=123)
    assert step["completion"]["message"] == {"think": "why", "tool_call": [call]}
    assert step["completion"]["reasoning_content"] == ""
    assert step["extra_info"] == {"step": 3, "query": "the query", "timestamp": 123}
    assert (
        json.loads(step["completion"]["content"].split("<tool_call>")[1].split("</tool_call>")[0])[0]["name"]
        == "recommend_product"
    )


def test_parse_nonces_ignores_junk():
    assert agent_sdk.parse_nonces({"oro_metadata": {"tool_nonces": {"a": "n1", "b": 3}}}) == {"a": "n1"}
    assert agent_sdk.parse_nonces(None) == {}
    assert agent_sdk.parse_nonces({"oro_metadata": "x"}) == {}


def test_client_retries_then_gives_up_without_sleeping_for_real():
    slept: list[float] = []
    client = agent_sdk.ProxyClient(
        "http://127.0.0.1:9", timeout=0.5, max_retries=3, sleep=slept.append, api_key="t"
    )
    assert client.find_product("x") is None
    assert slept == [2.0, 4.0]  # doubling from 2 s; no sleep after the last attempt
