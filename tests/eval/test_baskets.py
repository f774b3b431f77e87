"""``eval.baskets``: per-problem successes grouped by intent and basket size, the shortcut replayed."""

from __future__ import annotations

import pytest

from shoparena.eval.baskets import basket_group, basket_table, eval_run_table
from shoparena.eval.run import run_eval, shortcut_wins
from shoparena.records.problem import Intent, Problem, RewardItem, Voucher
from shoparena.suites.loaders import load_suite


def _problem(pid: str, intent: Intent, items: int) -> Problem:
    return Problem(
        problem_id=pid,
        query=f"request {pid}",
        intent=intent,
        category=intent.value.capitalize() if intent != Intent.WEB else "Web",
        reward=[RewardItem(product_id=f"{pid}-{i}", title=[f"thing {i}"]) for i in range(items)],
        voucher=Voucher(
            voucher_type="platform",
            threshold=100,
            discount_type="fixed",
            face_value=10,
            budget=200,
            price_after_voucher=90,
        )
        if intent == Intent.VOUCHER
        else None,
    )


def test_groups_split_baskets_by_size_and_count_each_policy() -> None:
    problems = [
        _problem("a", Intent.PRODUCT, 1),
        _problem("b", Intent.SHOP, 2),
        _problem("c", Intent.SHOP, 3),
        _problem("d", Intent.SHOP, 4),
        _problem("e", Intent.VOUCHER, 1),
    ]
    assert [basket_group(p) for p in problems] == [
        "Product",
        "Shop 1-2",
        "Shop 3-4",
        "Shop 3-4",
        "Voucher 1-2",
    ]
    table = basket_table(problems, {"student": [True, True, False, True, False], "base": [False] * 5})
    assert table.groups == ["Product", "Shop 1-2", "Shop 3-4", "Voucher 1-2", "overall"]
    student, base = table.rows
    assert (student.groups["Shop 3-4"].solved, student.groups["Shop 3-4"].n) == (1, 2)
    assert (student.groups["overall"].solved, student.groups["overall"].n) == (3, 5)
    assert base.groups["overall"].solved == 0 and base.groups["overall"].ci_low == 0.0
    assert 0 < student.groups["overall"].ci_low < 0.6 < student.groups["overall"].ci_high
    with pytest.raises(ValueError, match="student: 2 outcomes for 5 problems"):
        basket_table(problems, {"student": [True, False]})


def test_an_eval_run_is_read_back_beside_the_shortcut_on_its_own_problems(make_config, bank, synth) -> None:
    config = make_config("planner", out="planner")
    summary = run_eval(config)
    table = eval_run_table({"planner": config.out})
    problems, _ = load_suite(bank)
    planner, shortcut = table.rows
    assert [r.policy for r in table.rows] == ["planner", "shortcut"]
    strict = summary.dump()["profiles"]["strict"]
    assert planner.groups["overall"].solved == round(strict["overall"]["greedy_asr"]["value"] * len(problems))
    assert shortcut.groups["overall"].solved == sum(shortcut_wins(problems, synth.index, "lexical")["strict"])
    assert sum(planner.groups[g].n for g in table.groups if g != "overall") == len(problems)
