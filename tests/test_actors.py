"""One registry says who can act (records.actors): the four tables that build actors are keyed by it, each
description is written once, and the CLI help is built from it."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer

from shoparena.records.actors import ACTORS, ActorRole, actor, actors, describe, usage_line

SRC = Path(__file__).resolve().parents[1] / "src" / "shoparena"


def test_every_table_builds_exactly_the_registrys_actors():
    from shoparena.agents import AGENTS
    from shoparena.arena.miners import BUILTIN_MINERS, MINER_DIR
    from shoparena.eval.policies import POLICY_KINDS
    from shoparena.llm.factory import SPEC_KINDS, backend_from_spec, parse_backend_spec

    assert list(AGENTS) == list(actors(ActorRole.AGENT))
    assert {n: a.description for n, a in actors(ActorRole.MINER).items()} == BUILTIN_MINERS
    assert all((MINER_DIR / f"{name}.py").is_file() for name in BUILTIN_MINERS)
    assert list(POLICY_KINDS) == list(actors(ActorRole.POLICY))
    assert [k.usage for k in POLICY_KINDS.values()] == [a.usage for a in actors(ActorRole.POLICY).values()]
    backends = actors(ActorRole.BACKEND)
    assert set(SPEC_KINDS) | {"planner"} == set(backends)
    for kind in SPEC_KINDS:  # every backend kind parses from its own usage
        location = "http://h/v1" if kind == "openai" else "/models/m"
        assert parse_backend_spec(f"{kind}:{location}#m")[0] == kind
    assert type(backend_from_spec("planner")).__name__ == "PlannerBackend"
    with pytest.raises(ValueError, match=r"unknown kind 'gguf' \(openai, transformers\)"):
        parse_backend_spec("gguf:x")


def test_each_description_is_written_once():
    sources = {p: p.read_text() for p in SRC.rglob("*.py")}
    for entry in ACTORS:
        homes = [p.relative_to(SRC).as_posix() for p, text in sources.items() if entry.description in text]
        assert homes == ["records/actors.py"], (entry.name, homes)


def test_an_unknown_actor_names_the_known_ones():
    with pytest.raises(ValueError, match="unknown miner 'x'; known: agentic, subtask"):
        actor(ActorRole.MINER, "x")
    assert usage_line(ActorRole.POLICY) == "planner | hf:DIR | openai:URL#model | miner:FILE"


def _help(app: typer.Typer, *path: str) -> dict[str, str]:
    command = typer.main.get_command(app)
    for name in path:
        command = command.commands[name]  # type: ignore[attr-defined]
    return {p.name: p.help or "" for p in command.params}


def test_the_cli_help_is_built_from_the_registry():
    from shoparena.cli.main import app

    policy = _help(app, "eval", "run")["policy"]
    assert usage_line(ActorRole.POLICY) in policy and describe(ActorRole.POLICY) in policy
    arena = _help(app, "arena", "run")
    assert describe(ActorRole.MINER) in arena["agents"] and describe(ActorRole.BACKEND) in arena["backend"]
    assert usage_line(ActorRole.BACKEND) in _help(app, "arena", "judge")["backend"]
    assert describe(ActorRole.AGENT) in _help(app, "episodes", "run")["agent"]
