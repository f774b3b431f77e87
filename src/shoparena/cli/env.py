"""``shoparena env ...``: the environment behind other frameworks' doors (HTTP server)."""

from __future__ import annotations

import math
from pathlib import Path

import typer
from rich.console import Console

from shoparena.integrations.config import (
    DEFAULT_IDLE_TIMEOUT_S,
    DEFAULT_MAX_BODY_BYTES,
    DEFAULT_MAX_CALLS_PER_STEP,
    DEFAULT_MAX_EPISODES_PER_PROBLEM,
    DEFAULT_MAX_SESSIONS,
    DEFAULT_PORT,
    DEFAULT_STEP_TIMEOUT_S,
)

env_app = typer.Typer(help="Serve ShopEnv to trainers in other processes or machines.", no_args_is_help=True)
console = Console(stderr=True)


@env_app.command("serve")
def serve(
    suite: Path = typer.Option(
        ..., "--suite", exists=True, dir_okay=False, help="SB JSONL or ORO suite JSON."
    ),
    index: Path = typer.Option(..., "--index", exists=True, file_okay=False, help="Search index directory."),
    kb: list[Path] = typer.Option([], "--kb", exists=True, dir_okay=False, help="Extra knowledge pages."),
    host: str = typer.Option("127.0.0.1", "--host", help="Bind address."),
    port: int = typer.Option(DEFAULT_PORT, "--port", min=0, max=65535, help="Port."),
    max_steps: int = typer.Option(30, "--max-steps", min=1, help="Step cap per episode."),
    scoring_profile: str = typer.Option(
        "strict", "--scoring-profile", "--profile", help="Scoring profile of the reward."
    ),
    similarity: str = typer.Option("lexical", "--similarity", help="Title similarity backend."),
    max_sessions: int = typer.Option(DEFAULT_MAX_SESSIONS, "--max-sessions", min=1, help="Open sessions."),
    idle_timeout_s: float = typer.Option(
        DEFAULT_IDLE_TIMEOUT_S, "--idle-timeout", help="Idle session expiry."
    ),
    step_timeout_s: float = typer.Option(DEFAULT_STEP_TIMEOUT_S, "--step-timeout", help="Seconds per step."),
    max_body_bytes: int = typer.Option(DEFAULT_MAX_BODY_BYTES, "--max-body", min=1, help="Request body cap."),
    max_calls_per_step: int = typer.Option(
        DEFAULT_MAX_CALLS_PER_STEP, "--max-calls-per-step", min=1, help="Calls run per step (more: dropped)."
    ),
    max_episodes_per_problem: int = typer.Option(
        DEFAULT_MAX_EPISODES_PER_PROBLEM,
        "--max-episodes-per-problem",
        min=0,
        help="Episodes started per problem (429 beyond; 0: no limit).",
    ),
    allow_host: list[str] = typer.Option(
        [], "--allow-host", help="Host name remote clients use (repeat; local names are always allowed)."
    ),
) -> None:
    """Serve reset / step / state over HTTP, one session per episode (client: agent_sdk.EnvClient)."""
    from shoparena.integrations.http import serve as serve_http
    from shoparena.integrations.tasks import ShopTaskSet, TaskSetError
    from shoparena.runs.ports import check_port_free

    for name, value in (("--step-timeout", step_timeout_s), ("--idle-timeout", idle_timeout_s)):
        if not math.isfinite(value) or value <= 0:  # nan passed the old check and disabled the timeout
            raise typer.BadParameter(f"{value} is not a positive number of seconds", param_hint=name)
    check_port_free(host, port)  # in use: one line, exit 2 (uvicorn's own exit is 3)

    try:
        tasks = ShopTaskSet.load(
            suite, index, kb=kb, scoring_profile=scoring_profile, similarity=similarity, max_steps=max_steps
        )
    except TaskSetError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(code=2) from None
    console.print(
        f"serving {len(tasks.problems)} problems on http://{host}:{port} (sessions <= {max_sessions})"
    )
    serve_http(
        tasks,
        host,
        port,
        max_sessions=max_sessions,
        idle_timeout_s=idle_timeout_s,
        step_timeout_s=step_timeout_s,
        max_body_bytes=max_body_bytes,
        max_calls_per_step=max_calls_per_step,
        max_episodes_per_problem=max_episodes_per_problem,
        allowed_hosts=frozenset(allow_host),
    )


def register(app: typer.Typer) -> None:
    app.add_typer(env_app, name="env")
