"""PlannerBackend: the rule-based planner behind the chat protocol, replayed from the message history."""

from __future__ import annotations

import json
from typing import Any

import pytest

from shoparena.agents.planner import PlannerAgent
from shoparena.env.environment import Observation
from shoparena.formats.native import read_tool_schemas
from shoparena.formats.tagged import tool_call_id
from shoparena.llm.factory import backend_from_spec
from shoparena.llm.planner_backend import (
    MODEL_NAME,
    NOTE,
    PlannerBackend,
    parse_request_text,
)
from shoparena.llm.types import ChatRequest
from shoparena.records.trajectory import Step, ToolCall

TOOLS = [{"type": "function", "function": {"name": n, "parameters": {"type": "object"}}}
         for n in ("find_product", "view_product_information", "recommend_product", "terminate")]


def _execute(engine: Any, name: str, params: dict[str, Any]) -> Any:
    if name == "find_product":
        hits = engine.find_product(params["q"], params.get("page", 1), params.get("shop_id"),
                                   params.get("price"), params.get("sort"), params.get("service"))
        return [h.model_dump(mode="json") for h in hits]
    if name == "view_product_information":
        return [v.model_dump(mode="json") for v in engine.view_product_information(params["product_ids"])]
    return f"{name} done"


def _problems(shop_world) -> list[dict[str, Any]]:
    return json.loads(shop_world.mixed.read_text())


def _direct(engine: Any, problem: dict[str, Any]) -> list[list[tuple[str, dict]]]:
    """The planner driven directly through its step-based API."""
    agent, schemas = PlannerAgent(), read_tool_schemas(TOOLS)
    steps: list[Step] = []
    out = []
    while True:
        obs = Observation(episode_id="direct", problem=problem, query=problem["query"],
                          step_index=len(steps) + 1, steps=list(steps), tools=schemas, system_prompt="")
        text = agent.act(obs, schemas)
        calls = [(c["name"], c["parameters"]) for block in text.split("<tool_call>")[1:]
                 for c in json.loads(block.split("</tool_call>")[0])]
        out.append(calls)
        if not calls or calls[-1][0] == "terminate":
            return out
        done = [ToolCall(name=n, parameters=p, result=_execute(engine, n, p), has_result=True)
                for n, p in calls]
        steps.append(Step(index=len(steps) + 1, tool_calls=done))


def _through_backend(engine: Any, problem: dict[str, Any], mode: str) -> tuple[list, list, list]:
    """The planner driven as a chat model, as the agentic miner drives it."""
    backend = PlannerBackend(mode=mode)  # type: ignore[arg-type]
    messages: list[dict[str, Any]] = [{"role": "user", "content": (
        f"Shopping request (category: {problem['category']}, difficulty: x):\n{problem['query']}")}]
    out, replies = [], []
    for _ in range(20):
        reply = backend.complete(ChatRequest(model="any", messages=messages, tools=TOOLS))
        replies.append(reply)
        if mode == "native":
            calls = [(c["function"]["name"], json.loads(c["function"]["arguments"]))
                     for c in reply.tool_calls]
            messages.append({"role": "assistant", "content": reply.content, "tool_calls": reply.tool_calls})
            messages += [{"role": "tool", "tool_call_id": c["id"],
                          "content": json.dumps(_execute(engine, n, p))}
                         for c, (n, p) in zip(reply.tool_calls, calls, strict=True)]
        else:
            calls = [(c["name"], c["parameters"]) for block in reply.content.split("<tool_call>")[1:]
                     for c in json.loads(block.split("</tool_call>")[0])]
            messages.append({"role": "assistant", "content": reply.content})
            messages.append({"role": "user", "content": "\n".join(
                "<tool_response>" + json.dumps({"name": n, "content": json.dumps(_execute(engine, n, p))})
                + "</tool_response>" for n, p in calls)})
        out.append(calls)
        if not calls or calls[-1][0] == "terminate":
            break
    return out, replies, messages


@pytest.mark.parametrize("mode", ["native", "xml"])
def test_backend_replays_to_the_same_plan_as_the_agent(shop_world, mode):
    for problem in _problems(shop_world):
        expected = _direct(shop_world.engine, problem)
        got, replies, _ = _through_backend(shop_world.engine, problem, mode)
        assert got == expected and len(got) >= 3
        assert got[-1][-2][0] == "recommend_product"
        assert all(r.model == MODEL_NAME and r.raw["note"] == NOTE and r.raw["diverged"] is False
                   for r in replies)
        assert all(r.usage.completion_tokens > 0 for r in replies)
        if mode == "native":
            ids = [c["id"] for r in replies for c in r.tool_calls]
            assert len(ids) == len(set(ids)) and all(r.reasoning_content for r in replies)


def test_divergent_history_is_flagged(shop_world):
    problem = _problems(shop_world)[0]
    messages = [
        {"role": "user", "content": f"Shopping request (category: Product):\n{problem['query']}"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "a", "type": "function", "function": {
            "name": "find_product", "arguments": json.dumps({"q": "something else"})}}]},
        {"role": "tool", "tool_call_id": "a", "content": "[]"},
    ]
    reply = PlannerBackend().complete(ChatRequest(messages=messages, tools=TOOLS))
    assert reply.raw["diverged"] is True and reply.model == MODEL_NAME


def test_finished_plan_answers_without_calls(shop_world):
    _, _, messages = _through_backend(shop_world.engine, _problems(shop_world)[0], "native")
    reply = PlannerBackend().complete(ChatRequest(messages=messages, tools=TOOLS))
    assert reply.tool_calls == [] and reply.finish_reason == "stop" and "complete" in reply.content


def test_request_header_and_factory_spec():
    header = "Shopping request (category: Shop, difficulty: hard):\nA\nB"
    assert parse_request_text(header) == ("A\nB", "Shop")
    assert parse_request_text("just a query") == ("just a query", None)
    assert isinstance(backend_from_spec("planner"), PlannerBackend)
    assert backend_from_spec("planner:xml").mode == "xml"
    with pytest.raises(ValueError, match="mode"):
        PlannerBackend(mode="json")  # type: ignore[arg-type]


def _through_stateless_history(engine: Any, query: str, mode: str) -> tuple[list, list]:
    """The planner driven as ORO's reference miner drives a model: one history message per step, no tools."""
    backend = PlannerBackend(mode=mode)  # type: ignore[arg-type]
    history = [f"<user>{query}</user>"]
    out, replies = [], []
    for _ in range(20):
        prompt = "# Dialogue Records History\n" + "\n\n".join(history)
        reply = backend.complete(ChatRequest(model="any", messages=[
            {"role": "system", "content": "# Role\nYou are a shopping assistant."},
            {"role": "user", "content": prompt}]))
        replies.append(reply)
        assert reply.tool_calls == []  # stateless tagged agents read calls only from the content tags
        calls = [(c["name"], c["parameters"]) for block in reply.content.split("<tool_call>")[1:]
                 for c in json.loads(block.split("</tool_call>")[0])]
        out.append(calls)
        if not calls or calls[-1][0] == "terminate":
            break
        think = reply.content.split("<think>")[1].split("</think>")[0] if "<think>" in reply.content else ""
        history.append(f"<think>{think}</think>")
        history.append("<tool_call>" + json.dumps([{"name": n, "parameters": p} for n, p in calls])
                       + "</tool_call>")
        observations = [{"tool_call_id": tool_call_id(n, p), "results": _execute(engine, n, p)}
                        for n, p in calls]
        history.append("<obs>" + json.dumps(observations) + "</obs>")
    return out, replies


@pytest.mark.parametrize("mode", ["native", "xml"])
def test_stateless_tagged_history_is_continued_not_reread(shop_world, mode):
    for problem in _problems(shop_world):
        expected = _direct(shop_world.engine, {"query": problem["query"], "category": None})
        got, replies = _through_stateless_history(shop_world.engine, problem["query"], mode)
        assert got == expected and got[-1][-2][0] == "recommend_product"
        assert all(r.raw["diverged"] is False and r.raw["mode"] == "xml" for r in replies)
        # The first search is built from the query, never from the history's markup.
        assert "Dialogue" not in json.dumps(got[0]) and "<obs>" not in json.dumps(got)


def test_hostile_history_is_read_in_linear_time() -> None:
    """A miner's unclosed tags (issue 52: the planner ran 43 s past --timeout 20) and a result nested 5,000
    deep are read without quadratic time or RecursionError."""
    from hang_guard import no_hang
    from shoparena.formats.tagged import HISTORY_HEADER

    deep = "[" * 5_000 + "]" * 5_000
    hostile = [
        [{"role": "user", "content": "Shopping request (category: x):\nred shoes"},
         {"role": "assistant", "content": "<think>" * 40_000 + "<tool_call>" * 40_000},
         {"role": "user", "content": "<tool_response>" * 80_000 + f"<tool_response>{deep}</tool_response>"}],
        [{"role": "user", "content": HISTORY_HEADER + "<user>red shoes</user>" + "<obs>" * 80_000
          + f"<tool_call>{deep}</tool_call>"}],
    ]  # fmt: skip
    backend = PlannerBackend(mode="xml")
    with no_hang():
        for messages in hostile:
            response = backend.complete(ChatRequest(messages=messages))
            assert response.model == MODEL_NAME
