"""Agents: the :class:`Agent` protocol, the rule-based ``planner`` baseline and a :class:`ScriptedAgent`."""

from __future__ import annotations

from collections.abc import Callable

from shoparena.agents.base import Agent, AgentAction, ScriptedAgent, tagged_step
from shoparena.agents.planner import PlannerAgent
from shoparena.agents.query_parser import ItemSpec, QuerySpec, VoucherSpec, parse_query
from shoparena.records.actors import ActorRole, actors

#: In-process agents available by name (``shoparena episodes run --agent NAME``): the builders of the
#: registry's agents (:mod:`shoparena.records.actors`, which describes them).
_BUILDERS: dict[str, Callable[[], Agent]] = {"planner": PlannerAgent}
AGENTS: dict[str, Callable[[], Agent]] = {name: _BUILDERS[name] for name in actors(ActorRole.AGENT)}


def get_agent(name: str) -> Agent:
    """A new agent by registry name.

    Raises:
        ValueError: for an unknown name (the message lists the known ones).
    """
    try:
        factory = AGENTS[name]
    except KeyError:
        raise ValueError(f"unknown agent {name!r}; known: {sorted(AGENTS)}") from None
    return factory()


__all__ = [
    "AGENTS",
    "Agent",
    "AgentAction",
    "ItemSpec",
    "PlannerAgent",
    "QuerySpec",
    "ScriptedAgent",
    "VoucherSpec",
    "get_agent",
    "parse_query",
    "tagged_step",
]
