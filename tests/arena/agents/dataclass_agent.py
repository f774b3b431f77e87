"""Frozen dataclass with postponed annotations: needs the module registered in sys.modules before exec."""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class Plan:
    query: str
    steps: int = 1


def agent_main(problem: dict) -> list:
    plan = Plan(problem["query"])
    return [
        {"completion": {"content": f"<response>{plan.query}</response>"}, "extra_info": {"step": plan.steps}}
    ]
