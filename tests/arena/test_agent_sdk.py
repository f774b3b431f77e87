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


#: Every public name of ORO's src/agent/agent_interface.py and src/agent/proxy_client.py.
ORO_AGENT_INTERFACE = (
    "AgentOutput", "ToolResult", "ToolCallResult", "_TOOL_REGISTRY", "register_tool", "Tool", "get_tool",
    "list_tools", "generate_tool_call_id", "format_content", "create_dialogue_step", "execute_tool_call",
)
ORO_PROXY_CLIENT = (
    "DEFAULT_TIMEOUT", "DEFAULT_MAX_RETRIES", "DEFAULT_RETRY_DELAY", "DEFAULT_RATE_LIMIT_RETRY_DELAY",
    "RequestLog", "InferenceStats", "ProxyClient",
)


def test_sdk_exports_every_oro_name_and_the_live_registry():
    missing = [n for n in ORO_AGENT_INTERFACE + ORO_PROXY_CLIENT if not hasattr(agent_sdk, n)]
    assert missing == []
    namespace: dict = {}
    exec("from shoparena.agent_sdk import _TOOL_REGISTRY, register_tool", namespace)  # an ORO import line
    namespace["register_tool"]("oro_probe", len)
    assert namespace["_TOOL_REGISTRY"]["oro_probe"] is len and "oro_probe" in agent_sdk.list_tools()
    assert (agent_sdk.DEFAULT_TIMEOUT, agent_sdk.DEFAULT_MAX_RETRIES) == (120, 3)


def test_client_keeps_oro_request_log_and_inference_stats(tmp_path, monkeypatch):
    monkeypatch.setenv("REQUEST_LOG_FILE", str(tmp_path / "requests.jsonl"))
    monkeypatch.setenv("INFERENCE_STATS_FILE", str(tmp_path / "stats.jsonl"))
    monkeypatch.setenv("PROBLEM_DATA", json.dumps({"problem_id": "p9"}))
    client = agent_sdk.ProxyClient("http://127.0.0.1:9", max_retries=2, sleep=lambda s: None, timeout=0.5)
    assert client.chat_completion({"model": "m", "messages": []}) is None  # nothing listens there
    entries = [json.loads(line) for line in (tmp_path / "requests.jsonl").read_text().splitlines()]
    assert [e["kind"] for e in entries] == ["attempt", "attempt", "summary"]
    assert entries[0]["error_class"] and entries[-1]["path"] == "/inference/chat/completions"
    stats = json.loads((tmp_path / "stats.jsonl").read_text().splitlines()[-1])
    assert stats == {"problem_id": "p9", "inference_success": 0, "inference_failed": 1, "inference_total": 1}


def test_the_policy_prompt_has_one_home_in_the_sdk() -> None:
    import ast
    from pathlib import Path

    from shoparena.agent_sdk import prompt
    from shoparena.arena.miners import agentic
    from shoparena.eval.chat_agent import NATIVE_SYSTEM_PROMPT

    src = Path(prompt.__file__).resolve().parents[1]
    opening = prompt.SYSTEM_PROMPT[:80]
    holders = sorted(str(p.relative_to(src)) for p in src.rglob("*.py") if opening in p.read_text("utf-8"))
    assert holders == ["agent_sdk/prompt.py"]
    assert agentic.SYSTEM_PROMPT is prompt.SYSTEM_PROMPT is NATIVE_SYSTEM_PROMPT
    # Inside the sandbox only the SDK is mounted: the prompt module imports nothing else.
    tree = ast.parse(Path(prompt.__file__).read_text("utf-8"))
    imported = [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    assert imported == ["__future__"] and not any(isinstance(n, ast.Import) for n in ast.walk(tree))
