"""RubricJudge: each gate's pass/fail on hand-built episodes, and resistance to fabricated results."""

from __future__ import annotations

from judge_fixtures import (
    QUERY,
    SEARCH_RESULT,
    call,
    example_trajectory,
    inference_entry,
    search_entry,
    step,
    trusted_calls,
    view_entry,
)

from shoparena.judge import JudgeStatus, RubricConfig, RubricJudge, build_judge_input
from shoparena.records.trajectory import Trajectory


def _grade(trajectory: Trajectory, calls=None, **config):
    judge_input = build_judge_input(QUERY, trusted_calls() if calls is None else calls, trajectory)
    return RubricJudge(RubricConfig(**config)).judge(judge_input, problem_id="p-1")


def test_spec_example_passes_all_gates() -> None:
    verdict = _grade(example_trajectory())
    assert verdict.status is JudgeStatus.OK and verdict.score == 0.9
    assert verdict.gates == {"G1": True, "G2": True, "G3": True, "G4": True}
    assert verdict.evidence["G4"]["step"] == 3
    assert set(verdict.evidence["G4"]["candidates"]) == {"4827719036", "4827702215"}
    assert "389" in verdict.evidence["G3"]["matched"]
    assert verdict.explanation.startswith("All gates passed")


def test_g1_needs_an_inference_call_with_30_tokens() -> None:
    no_inference = [search_entry(), view_entry()]
    verdict = _grade(example_trajectory(), no_inference)
    assert verdict.score == 0.1 and verdict.explanation.startswith("Gate 1 failed")
    small = [inference_entry(29), search_entry(), view_entry()]
    assert _grade(example_trajectory(), small).score == 0.1
    assert _grade(example_trajectory(), [inference_entry(30), search_entry(), view_entry()]).score == 0.9


def test_g2_fails_when_thinking_only_restates_the_query() -> None:
    verdict = _grade(example_trajectory("Looking for a pink 900ml insulated tumbler with free shipping."))
    assert verdict.gates["G1"] and not verdict.gates["G2"] and verdict.score == 0.3


def test_g3_fails_without_a_concrete_datum() -> None:
    verdict = _grade(example_trajectory("The double wall option looks sturdier; picking the first result."))
    assert verdict.gates["G2"] and not verdict.gates["G3"] and verdict.score == 0.5


def test_g4_fails_with_a_single_candidate() -> None:
    verdict = _grade(example_trajectory("4827719036 costs 389 and has a pink variant, so it fits."))
    assert verdict.gates["G3"] and not verdict.gates["G4"] and verdict.score == 0.7


def test_g4_accepts_candidates_named_by_title() -> None:
    think = "The Insulated Tumbler with Straw Lid at 389 is cheaper than the Double Wall Tumbler at 455."
    verdict = _grade(example_trajectory(think))
    assert verdict.score == 0.9


def test_data_from_the_query_do_not_count_as_citations() -> None:
    # 'pink', '900ml' and 'freeshipping' are in results but also in the query.
    verdict = _grade(example_trajectory("Want pink and 900ml with free shipping, within 250 to 600."))
    assert not verdict.gates["G3"]


def test_thinking_before_any_result_does_not_count() -> None:
    trajectory = Trajectory(query=QUERY, steps=[
        step(1, "4827719036 at 389 beats 4827702215 at 455, cheaper.",
             call("find_product", {"q": "tumbler"}, SEARCH_RESULT)),
    ])
    assert _grade(trajectory).score == 0.3


def test_fabricated_results_are_not_credited() -> None:
    fake = [{"product_id": "9999999999", "title": "Fake Tumbler", "price": 123.0},
            {"product_id": "8888888888", "title": "Other Fake", "price": 99.0}]
    trajectory = Trajectory(query=QUERY, steps=[
        step(1, "search", call("find_product", {"q": "tumbler"}, fake)),
        step(2, "9999999999 at 123 is cheaper than 8888888888 at 99? no, 8888888888 wins.",
             call("recommend_product", {"product_ids": "8888888888"}, "ok")),
    ])
    only_inference = [inference_entry(200)]
    assert _grade(trajectory, only_inference).score == 0.3
    # A real search happened, but it never returned these ids: prices count, the ids do not.
    with_search = [inference_entry(200), search_entry()]
    verdict = _grade(trajectory, with_search)
    assert verdict.gates["G3"] and not verdict.gates["G4"]
    # Without verification the same trajectory is credited fully, which is why it is on by default.
    assert _grade(trajectory, only_inference, verify_against_proxy=False).score == 0.9


def test_same_input_same_verdict() -> None:
    judge_input = build_judge_input(QUERY, trusted_calls(), example_trajectory())
    judge = RubricJudge()
    assert judge.judge(judge_input) == judge.judge(judge_input)
