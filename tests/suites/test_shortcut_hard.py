"""Hard banks: ``suite synth --hard`` rejects problems the no-LLM shortcut miner (first hit) solves."""

from __future__ import annotations

from _synth_helpers import small_bank, small_index

from shoparena.scoring import get_similarity, score_trajectory
from shoparena.suites.checks import shortcut_reasons, shortcut_trajectory
from shoparena.suites.options import SynthOptions
from shoparena.suites.synth import synthesize_problems


def _shortcut_wins(problems, engine) -> int:
    sim = get_similarity("lexical")
    return sum(
        score_trajectory(
            p, shortcut_trajectory(p, engine), engine, scoring_profile="strict", similarity=sim
        ).success
        for p in problems
    )


def test_shortcut_trajectory_is_the_first_hit_of_the_whole_query() -> None:
    _, engine, _ = small_index()
    problem = small_bank().problems[0]
    traj = shortcut_trajectory(problem, engine)
    first = engine.find_product(q=problem.query, page=1)[0].product_id
    assert [c.name for s in traj.steps for c in s.tool_calls] == [
        "find_product",
        "recommend_product",
        "terminate",
    ]
    assert traj.last_recommendation().parameters["product_ids"] == first


def test_hard_bank_rejects_what_the_shortcut_solves() -> None:
    _, engine, products = small_index()
    default = small_bank().problems
    assert _shortcut_wins(default, engine) > 0  # the default bank has shortcut-solvable problems
    hard = synthesize_problems(products, SynthOptions(n=40, seed=42, hard=True), engine=engine)
    assert hard.problems and _shortcut_wins(hard.problems, engine) == 0
    assert hard.report.rejected_by_reason.get("shortcut", 0) > 0
    assert all(shortcut_reasons(p, engine, engine) == [] for p in hard.problems)
