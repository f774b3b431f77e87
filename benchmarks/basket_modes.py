"""Success by intent and basket size, and how multi-item baskets fail, for eval runs over one suite.

Usage: python benchmarks/basket_modes.py --suite SUITE.json RUN_DIR [RUN_DIR ...]

RUN_DIR is an ``eval run`` directory (its ``episodes.jsonl`` and ``output.jsonl``). A basket's size is the
number of reward slots of its problem. For shop and voucher problems of three or more items it counts the
episodes that search the same query twice in a row ("repeat"), that search fewer distinct queries than the
basket has items ("too few") and that never recommend ("no answer": the step cap). Used for the issue-29
pilot tables in docs/fidelity.md.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from itertools import pairwise
from pathlib import Path


def _size(problem: dict) -> int:
    reward = problem["reward"]
    return len(reward) if isinstance(reward, list) else 1


def _calls(record: dict) -> tuple[list[str], str | None]:
    """The episode's ``find_product`` queries in order and its last recommendation (None if none)."""
    queries: list[str] = []
    recommended = None
    for turn in record["dialogue"]:
        for call in (turn["completion"].get("message") or {}).get("tool_call") or []:
            if call["name"] == "find_product":
                queries.append(str(call["parameters"].get("q")))
            elif call["name"] == "recommend_product":
                recommended = str(call["parameters"].get("product_ids"))
    return queries, recommended


def summarise(run: Path, suite: dict[str, dict]) -> tuple[Counter, Counter]:
    success: Counter = Counter()
    modes: Counter = Counter()
    solved = {}
    for line in (run / "episodes.jsonl").read_text().splitlines():
        episode = json.loads(line)
        solved[episode["problem_id"]] = bool(episode["success_strict"])
    for line in (run / "output.jsonl").read_text().splitlines():
        record = json.loads(line)
        problem = suite[record["problem_id"]]
        category, size = problem["category"], _size(problem)
        group = (category, "1-2" if size <= 2 else "3+")
        for key in (group, (category, "all"), ("overall", "all")):
            success[(*key, "solved")] += solved[record["problem_id"]]
            success[(*key, "problems")] += 1
        if category in ("Shop", "Voucher") and size >= 3:
            queries, recommended = _calls(record)
            modes["episodes"] += 1
            modes["repeat"] += any(a == b for a, b in pairwise(queries))
            modes["too few"] += len(dict.fromkeys(queries)) < size
            modes["no answer"] += recommended is None
    return success, modes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", type=Path, required=True, help="The suite file the runs evaluated.")
    parser.add_argument("runs", type=Path, nargs="+", help="eval run directories")
    args = parser.parse_args()
    suite = {p["problem_id"]: p for p in json.loads(args.suite.read_text())}
    for run in args.runs:
        success, modes = summarise(run, suite)
        groups = sorted({k[:2] for k in success})
        cells = [f"{c} {s}: {success[(c, s, 'solved')]}/{success[(c, s, 'problems')]}" for c, s in groups]
        print(f"{run}\n  " + ", ".join(cells))
        print(f"  3+-item shop/voucher baskets: {dict(modes)}")


if __name__ == "__main__":
    main()
