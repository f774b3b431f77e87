"""Stateless history messages read back into the query and steps (the inverse of build_history_message)."""

from __future__ import annotations

import json

from shoparena.formats.tagged import build_history_message, tool_call_id
from shoparena.formats.tagged_history import is_history_message, parse_history_message
from shoparena.records.trajectory import Step, ToolCall


def _call(name: str, params: dict, result) -> ToolCall:
    return ToolCall(name=name, parameters=params, tool_call_id=tool_call_id(name, params), result=result,
                    has_result=True)


def test_round_trip_of_shoppingbench_history():
    steps = [
        Step(index=1, think="search first",
             tool_calls=[_call("find_product", {"q": "lamp"}, [{"product_id": "1"}])]),
        Step(index=2, think="look closer", tool_calls=[
            _call("view_product_information", {"product_ids": "1"}, [{"title": "Lamp </b>"}]),
            _call("find_product", {"q": "desk lamp", "page": 2}, [])]),
        # A step starts at its <think>; a lone <response> would read as the previous step's own.
        Step(index=3, think="done", response="Here you go."),
    ]
    text = build_history_message("I need a lamp", steps)
    assert is_history_message(text) and not is_history_message("I need a lamp")
    query, parsed = parse_history_message(text)
    assert query == "I need a lamp" and len(parsed) == 3
    for got, want in zip(parsed, steps, strict=True):
        assert (got.think, got.response) == (want.think, want.response)
        assert [(c.name, c.parameters, c.result, c.has_result) for c in got.tool_calls] == [
            (c.name, c.parameters, c.result, True) for c in want.tool_calls]


def test_oro_miner_history_without_ids_matches_obs_by_recomputed_id_then_order():
    calls = [{"name": "find_product", "parameters": {"q": q}} for q in ("a", "b")]
    obs = [{"tool_call_id": tool_call_id("find_product", {"q": "b"}), "results": ["B"]},
           {"tool_call_id": "unknown", "results": ["A"]}]
    text = ("# Dialogue Records History\n<user>q</user>\n\n<think>t</think>\n\n<tool_call>"
            + json.dumps(calls) + "</tool_call>\n\n<obs>" + json.dumps(obs) + "</obs>\n\n<think>next</think>")
    query, steps = parse_history_message(text)
    assert query == "q" and [s.think for s in steps] == ["t", "next"]
    assert [c.result for c in steps[0].tool_calls] == [["A"], ["B"]]
    assert steps[1].tool_calls == []
