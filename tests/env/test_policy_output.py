"""A policy's invalid output is the policy's failure, scored, never a crash (issue 31, finding 3)."""

from __future__ import annotations

import json

import orjson

from shoparena.env import ShopEnv, TerminationReason
from shoparena.env.policy_output import first_lone_surrogate, replace_lone_surrogates
from shoparena.formats.oro import to_oro_envelope
from shoparena.records.trajectory import EpisodeStatus
from shoparena.scoring import get_similarity, score_trajectory

# What a model emits: the JSON escape of half a UTF-16 pair inside a tool argument.
LONE = json.loads('"shoes \\ud83d"')


def _native(name: str, arguments: str) -> dict:
    calls = [{"function": {"name": name, "arguments": arguments}}]
    return {"role": "assistant", "content": "", "tool_calls": calls}


def test_a_lone_surrogate_in_an_argument_is_an_invalid_call_and_the_episode_goes_on(
    hand, product_problem
) -> None:
    env = ShopEnv(hand.index)
    env.reset(product_problem)
    first = env.step(_native("find_product", '{"q": "shoes \\ud83d", "page": 1}'))
    call = first.step.tool_calls[0]
    assert not first.done
    assert call.invalid_reason == "parameters.q: a lone surrogate \\ud83d is not valid Unicode"
    assert call.result.startswith("Error: invalid tool call") and call.parameters["q"] == "shoes \ufffd"
    env.step(_native("recommend_product", '{"product_ids": "101"}'))
    last = env.step(_native("terminate", '{"status": "success"}'))
    assert last.done and last.termination_reason == TerminationReason.TERMINATE
    trajectory = env.trajectory()
    assert trajectory.status is EpisodeStatus.SUCCESS and trajectory.error is None
    assert len(trajectory.meta["state_hash"]) == 64
    orjson.dumps(to_oro_envelope(trajectory))  # storable as it is
    lexical = get_similarity("lexical")
    verdict = score_trajectory(
        product_problem, trajectory, hand.index, scoring_profile="strict", similarity=lexical
    )
    assert verdict.scored  # scored like any other episode: the policy's result


def test_surrogates_in_the_text_are_replaced_and_noted(hand, product_problem) -> None:
    env = ShopEnv(hand.index)
    env.reset(product_problem)
    result = env.step({"role": "assistant", "content": "thinking " + LONE, "tool_calls": []})
    assert result.step.content == "thinking shoes \ufffd"
    assert any("lone surrogate" in e for e in result.step.parse_errors)
    orjson.dumps(env.trajectory().model_dump(mode="json"))


def test_calls_past_the_cap_are_dropped_with_a_parse_error(hand, product_problem) -> None:
    env = ShopEnv(hand.index, max_calls_per_step=3)
    env.reset(product_problem)
    calls = [{"name": "find_product", "parameters": {"q": f"shoe {i}", "page": 1}} for i in range(50)]
    result = env.step(calls)
    assert len(result.step.tool_calls) == 3
    assert "50 calls in one step, over the cap of 3" in result.step.parse_errors[0]


def test_the_scrubbing_helpers_find_and_replace_every_lone_half() -> None:
    value = {"a": [1, {"b": "x" + LONE}], LONE: "k"}
    assert first_lone_surrogate(value) == ("a[1].b", "\\ud83d")
    clean = replace_lone_surrogates(value)
    assert first_lone_surrogate(clean) is None
    orjson.dumps(clean)
    assert first_lone_surrogate("a real pair \U0001f600") is None
