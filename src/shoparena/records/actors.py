"""Who can act: the one registry of in-process agents, chat backends, built-in miners and evaluable policy
kinds, with one description each.

The code that builds each one stays with its layer (``agents.AGENTS``, ``llm.factory``,
``arena.miners``, ``eval.policies.POLICY_KINDS``); those tables are keyed by this registry and take their
descriptions and usages from it (``tests/test_actors.py`` fails when one names an actor the registry does not,
or misses one), and the CLI's help and error messages are built from it (:func:`usage_line`,
:func:`describe`). Like tau2-bench's one registry of agents, users and domains.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict


class ActorRole(StrEnum):
    """What kind of actor an entry is (the table that builds it)."""

    AGENT = "agent"  # an in-process agent (``episodes run --agent``), agents.AGENTS
    BACKEND = "backend"  # a chat backend spec (``--backend``, ``--miner-backend``), llm.factory
    MINER = "miner"  # a built-in ORO miner file (``arena run --agents``, ``miner:NAME``), arena.miners
    POLICY = "policy"  # a kind of ``eval run --policy`` spec, eval.policies.POLICY_KINDS


class Actor(BaseModel):
    """One actor: its name in its role's table, how it is written on a command line, what it does."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    role: ActorRole
    name: str
    usage: str
    description: str


ACTORS: tuple[Actor, ...] = (
    Actor(
        role=ActorRole.AGENT,
        name="planner",
        usage="planner",
        description="the rule-based planner: parses the request, searches, compares, recommends (no model)",
    ),
    Actor(
        role=ActorRole.BACKEND,
        name="openai",
        usage="openai:URL#model",
        description="an OpenAI-compatible HTTP server (vLLM, llama.cpp, eval serve), or a bare http(s) URL",
    ),
    Actor(
        role=ActorRole.BACKEND,
        name="transformers",
        usage="transformers:DIR",
        description="a transformers model folder in process (alias hf:DIR)",
    ),
    Actor(
        role=ActorRole.BACKEND,
        name="planner",
        usage="planner",
        description="the rule-based planner behind the chat protocol (planner:xml: tagged text)",
    ),
    Actor(
        role=ActorRole.MINER,
        name="agentic",
        usage="agentic",
        description="LLM emits every tool call; catalogue calls dispatched with proxy nonces",
    ),
    Actor(
        role=ActorRole.MINER,
        name="subtask",
        usage="subtask",
        description="deterministic search loop; LLM only picks among results / narrates",
    ),
    Actor(
        role=ActorRole.MINER,
        name="shortcut",
        usage="shortcut",
        description="no LLM: first hit of the query, recommend, terminate",
    ),
    Actor(
        role=ActorRole.MINER,
        name="crash",
        usage="crash",
        description="faulty: agent_main raises (FAILED, MinerCrash)",
    ),
    Actor(role=ActorRole.MINER, name="hang", usage="hang", description="faulty: never returns (TIMED_OUT)"),
    Actor(
        role=ActorRole.MINER,
        name="malformed",
        usage="malformed",
        description="faulty: returns non-step list items (SUCCESS envelope, scores 0)",
    ),
    Actor(
        role=ActorRole.MINER,
        name="nonlist",
        usage="nonlist",
        description="faulty: returns a dict (FAILED, InvalidReturnType)",
    ),
    Actor(
        role=ActorRole.POLICY,
        name="planner",
        usage="planner",
        description="the rule-based planner agent, in process (a baseline, no model)",
    ),
    Actor(
        role=ActorRole.POLICY,
        name="hf",
        usage="hf:DIR",
        description="a transformers folder in process; concurrent episodes' turns share one batch",
    ),
    Actor(
        role=ActorRole.POLICY,
        name="openai",
        usage="openai:URL#model",
        description="an OpenAI-compatible server (vLLM, `shoparena eval serve`, llama.cpp) over HTTP",
    ),
    Actor(
        role=ActorRole.POLICY,
        name="miner",
        usage="miner:FILE",
        description="an arena agent file (or built-in miner name) in the sandbox, through the trusted proxy",
    ),
)


def actors(role: ActorRole) -> dict[str, Actor]:
    """The actors of one role by name, in registry order."""
    return {a.name: a for a in ACTORS if a.role is role}


def actor(role: ActorRole, name: str) -> Actor:
    """One actor.

    Raises:
        ValueError: ``name`` is not an actor of ``role`` (the message lists the known ones).
    """
    known = actors(role)
    if name not in known:
        raise ValueError(f"unknown {role.value} {name!r}; known: {', '.join(known)}")
    return known[name]


def usage_line(role: ActorRole, sep: str = " | ") -> str:
    """How the actors of ``role`` are written, joined (policies: ``planner | hf:DIR | ... | miner:FILE``)."""
    return sep.join(a.usage for a in actors(role).values())


def describe(role: ActorRole) -> str:
    """One line per actor of ``role``: ``usage: description`` (CLI help)."""
    return "; ".join(f"{a.usage}: {a.description}" for a in actors(role).values())


__all__ = ["ACTORS", "Actor", "ActorRole", "actor", "actors", "describe", "usage_line"]
