"""The ToolRL per-step reward (distillation spec §6.4) on Hermes text: the table's cases, worked general
cases computed by hand from the definitions, the Hermes format check, and properties."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shoparena.train.reward import (
    correctness,
    format_score,
    multiset_jaccard,
    step_reward,
    toolrl_reward,
    value_similarity,
)


def call(name, **params):
    return {"name": name, "parameters": params}


def hermes(calls, think=None, text=""):
    blocks = "\n".join(
        "<tool_call>\n" + json.dumps({"name": c["name"], "arguments": c["parameters"]}) + "\n</tool_call>"
        for c in calls
    )
    head = f"<think>\n{think}\n</think>\n\n" if think is not None else ""
    return head + text + blocks


def teacher_json(calls):
    return json.dumps([{"name": c["name"], "arguments": c["parameters"]} for c in calls])


FIND = call("find_product", q="red shoes", page=1)


# --- the table of R_correct ---------------------------------------------------------------------------------
def test_teacher_without_call_scores_zero() -> None:
    assert correctness([], [FIND]) == 0.0 and correctness([], None) == 0.0


def test_missing_or_unparseable_call_scores_minus_three() -> None:
    assert correctness([FIND], None) == -3.0
    assert correctness([FIND], []) == -3.0
    assert (
        step_reward(
            '<tool_call>\n{"name": "find_product", "arguments": {"q": \n</tool_call>', teacher_json([FIND])
        ).correct
        == -3.0
    )


def test_exact_match_scores_three() -> None:
    assert correctness([FIND], [call("find_product", q="red shoes", page=1)]) == 3.0


# --- the general case, by hand ------------------------------------------------------------------------------
def test_general_case_one_tool() -> None:
    # S = J(names)=1 + [J(keys)=1 + tokens {red,shoes}/{red,running,shoes}=2/3 + ints 1≠2 → 0] = 8/3;
    # S_max = 1 + (1 + 2) = 4; R = 6·(8/3)/4 − 3 = 1.
    predicted = [call("find_product", q="red running shoes", page=2)]
    assert correctness([FIND], predicted) == pytest.approx(1.0)


def test_general_case_two_teacher_tools_one_predicted() -> None:
    # names J([rec, term], [rec]) = 1/2; rec: J(keys)=1 + tokens {1,2}/{1,3} = 1/3 → 4/3; term: no candidate.
    # S = 1/2 + 4/3 = 11/6; S_max = 1 + 2 + 2 = 5; R = 6·(11/6)/5 − 3 = −0.8.
    teacher = [call("recommend_product", product_ids="1,2"), call("terminate", status="success")]
    assert correctness(teacher, [call("recommend_product", product_ids="1,3")]) == pytest.approx(-0.8)


def test_floats_never_score_and_used_candidates_are_not_reused() -> None:
    # Two teacher finds, one predicted find: only the first teacher call can take it.
    # names J([f, f], [f]) = 1/2; first: J(keys)=1 + price float 0 → 1; second: nothing left.
    # S = 3/2; S_max = 1 + 2 + 2 = 5; R = 6·1.5/5 − 3 = −1.2.
    teacher = [call("find_product", price=10.5), call("find_product", price=10.5)]
    assert correctness(teacher, [call("find_product", price=10.5)]) == pytest.approx(-1.2)


def test_helpers() -> None:
    assert multiset_jaccard(["a", "a", "b"], ["a", "b", "b"]) == pytest.approx(2 / 4)
    assert multiset_jaccard([], ["a"]) == 0.0 and multiset_jaccard([], []) == 1.0
    assert value_similarity("1,2", "1 2") == 1.0  # commas are spaces
    assert (
        value_similarity(3, 3) == 1.0
        and value_similarity(3.0, 3.0) == 0.0
        and value_similarity("3", 3) == 0.0
    )


# --- the Hermes format check --------------------------------------------------------------------------------
def test_format_accepts_optional_think_then_calls() -> None:
    assert format_score(hermes([FIND]), teacher_calls=True, teacher_thinks=False) == 1.0
    assert format_score(hermes([FIND, FIND], think="go"), teacher_calls=True, teacher_thinks=True) == 1.0


@pytest.mark.parametrize(
    "text",
    [
        "I will search now.",  # no call although the teacher called
        "<tool_call>\n<tool_call>{}</tool_call>\n</tool_call>",  # nested
        hermes([FIND]) + "<think>late</think>",  # think after the call
        "<think>a</think><think>b</think>" + hermes([FIND]),  # two thinks
        '<tool_call>\n{"arguments": {}}\n</tool_call>',  # no name
        "<tool_call>\n" + json.dumps({"name": "x", "arguments": "notjson"}) + "\n</tool_call>",
    ],
)
def test_format_rejects(text) -> None:
    assert format_score(text, teacher_calls=True, teacher_thinks=False) == 0.0


def test_think_required_only_when_the_teacher_thought() -> None:
    assert format_score(hermes([FIND]), teacher_calls=True, teacher_thinks=True) == 0.0
    assert format_score("Here is my answer.", teacher_calls=False, teacher_thinks=False) == 1.0


def test_trl_reward_function_on_text_and_native_completions() -> None:
    native = [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "type": "function",
                    "function": {"name": "find_product", "arguments": json.dumps(FIND["parameters"])},
                }
            ],
        }
    ]
    rewards = toolrl_reward(["p", "p", "p"], [hermes([FIND]), native, "no call"], [teacher_json([FIND])] * 3)
    assert rewards == [4.0, 4.0, -3.0]


# --- properties ---------------------------------------------------------------------------------------------
values = st.one_of(st.integers(-3, 3), st.text("ab ,", max_size=6), st.floats(0, 2), st.booleans())
params = st.dictionaries(st.sampled_from(["q", "page", "price", "product_ids"]), values, max_size=3)
calls = st.lists(
    st.builds(call, st.sampled_from(["find_product", "terminate", "recommend_product"])).flatmap(
        lambda c: params.map(lambda p: {"name": c["name"], "parameters": p})
    ),
    max_size=3,
)


@settings(max_examples=200, deadline=None)
@given(calls, calls)
def test_correctness_in_range(teacher, predicted) -> None:
    assert -3.0 <= correctness(teacher, predicted) <= 3.0


@settings(max_examples=100, deadline=None)
@given(calls.filter(bool))
def test_identity_is_the_maximum(teacher) -> None:
    reward = step_reward(hermes(teacher, think="t"), teacher_json(teacher), teacher_thinks=True)
    assert reward.format == 1.0 and reward.correct == 3.0 and reward.total == 4.0
