"""ShopEnv: reset/step/stop rules, recorded trajectories, and no ground-truth leaks."""

from __future__ import annotations

import json

import pytest

from shoparena.agents import tagged_step
from shoparena.env import ShopEnv, TerminationReason
from shoparena.env.knowledge import KnowledgeBase
from shoparena.formats.tagged import tool_call_id
from shoparena.records.trajectory import EpisodeStatus, ToolCall


def test_reset_exposes_only_public_view(hand, voucher_problem) -> None:
    env = ShopEnv(hand.index)
    obs = env.reset(voucher_problem)
    assert obs.problem == voucher_problem.public_view()
    text = json.dumps(obs.problem) + obs.system_prompt + json.dumps([m["content"] for m in obs.messages()])
    for secret in ("420", "budget", "face_value", "104", "Stainless Water Bottle"):
        assert secret not in text
    assert [t.name for t in obs.tools] == [
        "find_product",
        "view_product_information",
        "recommend_product",
        "terminate",
    ]
    assert "get_product_raw" not in obs.system_prompt


def test_step_records_ids_results_and_stops_on_terminate(hand, product_problem) -> None:
    env = ShopEnv(hand.index)
    env.reset(product_problem)
    r1 = env.step(
        tagged_step(
            "search",
            [
                {"name": "find_product", "parameters": {"q": "nike shoes", "page": 1}},
                {"name": "no_such_tool", "parameters": {}},
            ],
        )
    )
    assert not r1.done and r1.termination_reason is None
    found, unknown = r1.step.tool_calls
    assert found.tool_call_id == tool_call_id("find_product", {"q": "nike shoes", "page": 1})
    assert found.has_result and found.result[0]["product_id"] == "101"
    assert not unknown.has_result and unknown.result is None  # unknown tools: skipped, no obs
    r2 = env.step("<think>r</think><response>Here you go</response>")  # response-only: continues
    assert not r2.done
    r3 = env.step(
        tagged_step(
            "done",
            [
                {"name": "recommend_product", "parameters": {"product_ids": "101"}},
                {"name": "terminate", "parameters": {"status": "success"}},
            ],
        )
    )
    assert r3.done and r3.termination_reason == TerminationReason.TERMINATE
    assert r3.step.tool_calls[1].tool_call_id == "NR0gqQng"
    with pytest.raises(RuntimeError, match="already ended"):
        env.step("<think>x</think>")
    traj = env.trajectory()
    assert traj.status is EpisodeStatus.SUCCESS and len(traj.steps) == 3
    assert traj.last_recommendation().parameters == {"product_ids": "101"}
    assert all(isinstance(s.timestamp, int) and s.timestamp > 0 for s in traj.steps)
    assert traj.meta["termination_reason"] == "terminate"


def test_empty_parse_stops_and_max_steps_caps(hand, product_problem) -> None:
    env = ShopEnv(hand.index)
    env.reset(product_problem)
    r = env.step("no tags at all")
    assert r.done and r.termination_reason == TerminationReason.EMPTY_STEP
    env = ShopEnv(hand.index, max_steps=2)
    env.reset(product_problem)
    assert not env.step("<think>a</think><response>b</response>").done
    r = env.step("<think>a</think><response>b</response>")
    assert r.done and r.termination_reason == TerminationReason.MAX_STEPS


def test_terminate_without_status_defaults_and_flags(hand, product_problem) -> None:
    env = ShopEnv(hand.index)
    env.reset(product_problem)
    r = env.step([{"name": "terminate", "parameters": {}}])
    assert r.done and r.step.tool_calls[0].result == "The interaction has been completed with status: success"
    assert r.info["schema_violations"] and env.trajectory().meta["schema_violations"]


def test_invalid_and_erroring_calls_become_messages(hand, product_problem) -> None:
    env = ShopEnv(hand.index)
    env.reset(product_problem)
    r = env.step(
        [
            {"name": "find_product", "parameters": "not a dict"},
            {"name": "view_product_information", "parameters": {}},
            ToolCall(name="recommend_product", parameters={"product_ids": ["101"]}),
        ]
    )
    bad, missing, listed = r.step.tool_calls
    assert bad.has_result and bad.result.startswith("Error: invalid tool call")
    assert missing.result == "Error: view_product_information: missing required parameter 'product_ids'"
    assert listed.result.startswith("Error: recommend_product: invalid parameter 'product_ids'")
    assert not r.done


def test_native_message_is_adapted(hand, product_problem) -> None:
    env = ShopEnv(hand.index)
    env.reset(product_problem)
    r = env.step(
        {
            "role": "assistant",
            "content": "<think>look</think>",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "find_product", "arguments": json.dumps({"query": "socks"})},
                }
            ],
        }
    )
    call = r.step.tool_calls[0]
    assert call.parameters == {"q": "socks", "page": 1}
    assert call.tool_call_id == tool_call_id("find_product", call.parameters)
    assert call.result[0]["product_id"] == "102"
    assert r.step.think == "look"


def test_infra_error_fails_the_episode(hand, product_problem) -> None:
    class Broken:
        def __getattr__(self, name):
            def boom(*a, **k):
                raise OSError("index unreadable")

            return boom

    env = ShopEnv(Broken())  # type: ignore[arg-type]
    env.reset(product_problem)
    r = env.step([{"name": "find_product", "parameters": {"q": "x", "page": 1}}])
    assert r.done and r.termination_reason == TerminationReason.INFRA_ERROR
    traj = env.trajectory()
    assert traj.status is EpisodeStatus.FAILED and "index unreadable" in traj.error.message


def test_no_tool_output_leaks_hidden_fields(hand, product_problem) -> None:
    """Agents never see brand, category, specification, image or product URLs, nor the reward."""
    env = ShopEnv(
        hand.index,
        tools=[
            "find_product",
            "view_product_information",
            "recommend_product",
            "terminate",
            "check_product_match",
            "find_products_in_same_shop",
        ],
    )
    env.reset(product_problem)
    r = env.step(
        [
            {"name": "find_product", "parameters": {"q": "nike running shoes", "page": 1}},
            {"name": "view_product_information", "parameters": {"product_ids": "101,102,103"}},
            {"name": "check_product_match", "parameters": {"product_id": "101", "requirements": "{}"}},
            {"name": "find_products_in_same_shop", "parameters": {"product_queries": '[{"q": "shoes"}]'}},
        ]
    )
    dumped = json.dumps([c.result for c in r.step.tool_calls])
    for hidden in (
        "secret:spec",
        "Test > Things",
        "product_url",
        "main_image_url",
        "specification",
        '"brand": "Nike"',
        "category",
    ):
        assert hidden not in dumped
    with pytest.raises(ValueError, match="unknown tool"):
        ShopEnv(hand.index, tools=["get_product_raw"])


def test_web_intent_lists_web_search(hand) -> None:
    from shoparena.records.problem import Intent, Problem, RewardItem

    web = Problem(
        problem_id="w",
        query="Which shoe brand?",
        intent=Intent.WEB,
        knowledge_attribute="nike",
        web_product={"title": "Nike Running Shoes Breathable"},
        reward=[RewardItem(product_id="101", title=["Nike Running Shoes Breathable"])],
    )
    kb = KnowledgeBase.from_catalog(hand.index.iter_products())
    env = ShopEnv(hand.index, knowledge=kb)
    obs = env.reset(web)
    assert [t.name for t in obs.tools][-1] == "web_search" and "5. Name: web_search" in obs.system_prompt
    r = env.step([{"name": "web_search", "parameters": {"q": "nike running", "max_results": 3}}])
    res = r.step.tool_calls[0].result
    assert res["success"] is True and 1 <= len(res["observation"]) <= 3
    assert set(res["observation"][0]) == {"url", "title", "content"}
