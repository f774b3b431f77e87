"""Success by intent and basket size for the policies a pipeline compares on the same problems.

A shop or voucher problem asks for a basket of 1-4 products (its reward slots); the small CPU student learns
two-item baskets long before three- and four-item ones (docs/fidelity.md), so an overall rate hides where a
design helps. :func:`basket_table` groups per-problem successes of any number of policies (the student, its
base, the no-LLM shortcut floor, the reference planner) into ``Product``, ``Shop 1-2``, ``Shop 3-4``,
``Voucher 1-2``, ``Voucher 3-4``, ``Web`` and ``overall``, with a Wilson interval per cell.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from shoparena.eval.metrics import wilson_interval
from shoparena.eval.run import problem_outcomes, read_run, shortcut_wins
from shoparena.records import Problem

#: Intents whose problems ask for several products (a basket) and are split by size.
BASKET_INTENTS = ("Shop", "Voucher")


class GroupScore(BaseModel):
    """Greedy strict successes of one policy on one group of problems."""

    model_config = ConfigDict(extra="forbid")

    solved: int
    n: int
    ci_low: float = Field(description="Wilson 95 % interval of solved / n.")
    ci_high: float


class BasketRow(BaseModel):
    model_config = ConfigDict(extra="forbid")

    policy: str
    groups: dict[str, GroupScore]


class BasketTable(BaseModel):
    """One row per policy, one column per group (same problems in every row)."""

    model_config = ConfigDict(extra="forbid")

    groups: list[str]
    rows: list[BasketRow]


def basket_size(problem: Problem) -> int:
    """How many products the problem asks for (its reward slots)."""
    reward = problem.reward
    return len(reward) if isinstance(reward, list) else 1


def basket_group(problem: Problem) -> str:
    """``Shop 3-4`` for a shop basket of three or four items, ``Product`` for a product problem, ..."""
    category = str(problem.category)
    if category not in BASKET_INTENTS:
        return category
    return f"{category} {'1-2' if basket_size(problem) <= 2 else '3-4'}"


def basket_table(problems: Sequence[Problem], solved: Mapping[str, Sequence[bool]]) -> BasketTable:
    """Group each policy's per-problem successes (in ``problems`` order) by intent and basket size."""
    labels = [basket_group(p) for p in problems]
    groups = [*sorted(set(labels)), "overall"]
    rows = []
    for policy, outcomes in solved.items():
        if len(outcomes) != len(problems):
            raise ValueError(f"{policy}: {len(outcomes)} outcomes for {len(problems)} problems")
        cells = {}
        for group in groups:
            picked = [bool(o) for o, g in zip(outcomes, labels, strict=True) if group in ("overall", g)]
            low, high = wilson_interval(sum(picked), len(picked))
            cells[group] = GroupScore(solved=sum(picked), n=len(picked), ci_low=low, ci_high=high)
        rows.append(BasketRow(policy=policy, groups=cells))
    return BasketTable(groups=groups, rows=rows)


def run_solved(run_dir: str | Path, problems: Sequence[Problem]) -> list[bool]:
    """An eval run's greedy strict success on each of ``problems`` (a problem it did not finish: False)."""
    _, records, config = read_run(run_dir)
    by_id = {o.problem_id: o for o in problem_outcomes(list(problems), records, config, "strict")}
    return [bool(by_id[p.problem_id].greedy) for p in problems]


def eval_run_table(
    runs: Mapping[str, str | Path],
    *,
    shortcut: bool = True,
    extra: Mapping[str, Sequence[bool]] | None = None,
) -> BasketTable:
    """The basket table of eval runs over one suite (the first run's problems), with the shortcut floor
    replayed on the first run's index and title backend, and ``extra`` per-problem outcomes (the planner)."""
    from shoparena.eval.compare import _run_problems
    from shoparena.search import SearchIndex

    first = next(iter(runs.values()))
    summary, _, config = read_run(first)
    problems = _run_problems(first, summary, config)
    solved: dict[str, Sequence[bool]] = {name: run_solved(path, problems) for name, path in runs.items()}
    if shortcut:
        solved["shortcut"] = shortcut_wins(problems, SearchIndex.open(config.index), config.similarity)[
            "strict"
        ]
    solved.update(extra or {})
    return basket_table(problems, solved)


__all__ = [
    "BASKET_INTENTS",
    "BasketRow",
    "BasketTable",
    "GroupScore",
    "basket_group",
    "basket_size",
    "basket_table",
    "eval_run_table",
    "run_solved",
]
