"""Builders for scoring tests: products, problems, one-step trajectories and a fixed-value title backend."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from shoparena.records.catalog import Product
from shoparena.records.problem import Intent, Problem, RewardItem, Voucher, problem_id_for_query
from shoparena.records.trajectory import Step, ToolCall, Trajectory
from shoparena.scoring.similarity import REFERENCE_THRESHOLDS
from world import SHARED_DATA

SHARED = SHARED_DATA
SHARED_SUITES = sorted(SHARED.glob("shoppingbench/*.jsonl")) + sorted(SHARED.glob("oro/problem_suite_*.json"))


class FixedSimilarity:
    """Title backend returning a set value for different strings (1.0 for identical), reference thresholds."""

    name = "fixed"
    version = "test"
    comparable = False

    def __init__(self, value: float, thresholds: Mapping[str, float] = REFERENCE_THRESHOLDS) -> None:
        self.value = value
        self.thresholds = dict(thresholds)
        self.calls: list[tuple[str, str]] = []

    def similarity(self, a: str, b: str) -> float:
        self.calls.append((a, b))
        return 1.0 if a == b else self.value

    def batch(self, pairs: Sequence[tuple[str, str]], *, reference_vectors: Any = None) -> list[float]:
        return [self.similarity(a, b) for a, b in pairs]

    def threshold(self, key: str) -> float:
        return self.thresholds[key]


def product(pid: str, **kw: Any) -> Product:
    fields: dict[str, Any] = {
        "product_id": pid,
        "shop_id": "1",
        "category": "A > B",
        "title": f"title {pid}",
        "price": 10.0,
        "sold_count": 1,
    }
    fields.update(kw)
    return Product(**fields)


def problem(
    reward: list[dict[str, Any]],
    *,
    intent: Intent | None = None,
    voucher: dict[str, Any] | None = None,
    query: str = "q",
    **kw: Any,
) -> Problem:
    items = [RewardItem(**r) for r in reward]
    if intent is None:
        intent = Intent.VOUCHER if voucher else (Intent.SHOP if len(items) > 1 else Intent.PRODUCT)
    return Problem(
        problem_id=problem_id_for_query(query),
        query=query,
        intent=intent,
        reward=items,
        voucher=Voucher(**voucher) if voucher else None,
        **kw,
    )


def step(
    index: int = 1,
    *,
    calls: Sequence[tuple[str, dict[str, Any]]] = (),
    think: str = "t",
    response: str = "",
    timestamp: float | None = 1_700_000_000_000.0,
    content: str = "",
) -> Step:
    return Step(
        index=index,
        think=think,
        response=response,
        timestamp=timestamp,
        content=content,
        tool_calls=[ToolCall(name=n, parameters=p) for n, p in calls],
    )


def recommending(ids: str | Any, *, problem_id: str | None = None, query: str = "q", **kw: Any) -> Trajectory:
    """A one-step trajectory that recommends ``ids`` and terminates."""
    calls = [("recommend_product", {"product_ids": ids}), ("terminate", {"status": "success"})]
    return Trajectory(problem_id=problem_id, query=query, steps=[step(calls=calls)], **kw)
