"""Built-in miners: single ORO-style files (``agent_main(problem) -> list[step]``) shipped with shoparena.

Each file runs inside the sandbox and imports only the standard library and :mod:`shoparena.agent_sdk`.
``shoparena arena run --agents agentic subtask ...`` accepts these names as well as file paths. The names and
what each miner does are the registry's (:mod:`shoparena.records.actors`, role ``miner``); a name there has
its file here, ``NAME.py`` (``tests/test_actors.py``).
"""

from __future__ import annotations

from pathlib import Path

from shoparena.records.actors import ActorRole, actors

MINER_DIR = Path(__file__).resolve().parent

#: Built-in miner name → one-line description (the registry's).
BUILTIN_MINERS: dict[str, str] = {name: a.description for name, a in actors(ActorRole.MINER).items()}


def miner_path(name: str) -> Path:
    """The file of built-in miner ``name``.

    Raises:
        ValueError: ``name`` is not a built-in miner (the message lists them).
    """
    if name not in BUILTIN_MINERS:
        raise ValueError(f"unknown built-in miner {name!r}; known: {', '.join(BUILTIN_MINERS)}")
    return MINER_DIR / f"{name}.py"


def resolve_agent(spec: str | Path) -> Path:
    """An ``--agents`` entry as a file: an existing path wins, then a built-in miner name.

    Raises:
        ValueError: Neither an existing file nor a built-in name.
    """
    path = Path(spec)
    if path.is_file():
        return path
    if isinstance(spec, str) and spec in BUILTIN_MINERS:
        return miner_path(spec)
    raise ValueError(
        f"agent {str(spec)!r} is neither an existing file nor a built-in miner ({', '.join(BUILTIN_MINERS)})"
    )


__all__ = ["BUILTIN_MINERS", "MINER_DIR", "miner_path", "resolve_agent"]
