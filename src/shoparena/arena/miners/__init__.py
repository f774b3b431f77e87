"""Built-in miners: single ORO-style files (``agent_main(problem) -> list[step]``) shipped with shoparena.

Each file runs inside the sandbox and imports only the standard library and :mod:`shoparena.agent_sdk`.
``shoparena arena run --agents agentic subtask ...`` accepts these names as well as file paths.

| name | behaviour |
|---|---|
| ``agentic`` | the LLM emits every tool call; catalogue calls go out with the proxy's nonces |
| ``subtask`` | deterministic search loop; the LLM only picks and narrates (no nonces) |
| ``shortcut`` | no LLM: first hit of the query, recommend, terminate |
| ``crash`` | raises (FAILED, ``MinerCrash``) |
| ``hang`` | never returns (TIMED_OUT, ``TimeoutError``) |
| ``malformed`` | returns a list of non-step values (SUCCESS envelope that scores 0) |
| ``nonlist`` | returns a dict (FAILED, ``InvalidReturnType``) |
"""

from __future__ import annotations

from pathlib import Path

MINER_DIR = Path(__file__).resolve().parent

#: Built-in miner name → one-line description.
BUILTIN_MINERS: dict[str, str] = {
    "agentic": "LLM emits every tool call; catalogue calls dispatched with proxy nonces",
    "subtask": "deterministic search loop; LLM only picks among results / narrates",
    "shortcut": "no LLM: first hit of the query, recommend, terminate",
    "crash": "faulty: agent_main raises (FAILED, MinerCrash)",
    "hang": "faulty: never returns (TIMED_OUT)",
    "malformed": "faulty: returns non-step list items (SUCCESS envelope, scores 0)",
    "nonlist": "faulty: returns a dict (FAILED, InvalidReturnType)",
}


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
