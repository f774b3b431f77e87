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
    notes: list[str] = Field(default_factory=list, description="Rows left out, and why.")


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
    runs: Mapping[str, str | Path], logs: Mapping[str, str | Path] | None = None
) -> BasketTable:
    """The basket table of eval runs over one suite (the first run's problems), with the shortcut floor
    replayed and each trajectory file of ``logs`` (the reference planner's) scored strict on the same
    problems, on the first run's index and title backend. A row that cannot be recomputed (the index or a
    log gone) is left out and said in :attr:`BasketTable.notes`."""
    from shoparena.eval.compare import run_problems
    from shoparena.formats.io import read_trajectories
    from shoparena.scoring.bench import ScoringBench
    from shoparena.search import SearchIndex

    first = next(iter(runs.values()))
    summary, _, config = read_run(first)
    problems = run_problems(first, summary, config)
    solved: dict[str, Sequence[bool]] = {name: run_solved(path, problems) for name, path in runs.items()}
    notes: list[str] = []
    try:
        engine = SearchIndex.open(config.index)
    except (OSError, ValueError) as exc:
        notes.append(
            f"shortcut row left out, and every replayed one: the run's index cannot be opened ({exc})"
        )
        return basket_table(problems, solved).model_copy(update={"notes": notes})
    solved["shortcut"] = shortcut_wins(problems, engine, config.similarity)["strict"]
    bench = ScoringBench(problems, engine, config.similarity)
    for name, log in (logs or {}).items():
        try:
            verdicts = bench.score_run(list(read_trajectories(log)), "strict", problems).verdicts
        except (OSError, ValueError) as exc:
            notes.append(f"{name} row left out: {exc}")
            continue
        by_id = {v.problem_id: bool(v.success) for v in verdicts}
        solved[name] = [by_id.get(p.problem_id, False) for p in problems]
    return basket_table(problems, solved).model_copy(update={"notes": notes})


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
