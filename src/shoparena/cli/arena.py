"""``shoparena arena ...``: run agents in the sandboxed arena (other arena commands register here too)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

arena_app = typer.Typer(
    help="ORO-compatible arena: sandboxed agent runs, proxy, races.", no_args_is_help=True
)
console = Console()


@arena_app.command("run")
def run(
    agents: list[Path] = typer.Option(..., "--agents", exists=True, dir_okay=False, help="Miner files."),
    suite: Path = typer.Option(..., exists=True, dir_okay=False, help="Suite file (ORO JSON or SB JSONL)."),
    out: Path = typer.Option(..., help="Run directory (re-running resumes it)."),
    index: Path | None = typer.Option(None, exists=True, file_okay=False, help="Search index directory."),
    backend: str | None = typer.Option(None, help="LLM backend spec, e.g. openai:http://host/v1#model."),
    workers: int = typer.Option(3, min=1, help="Parallel sandboxes."),
    timeout: float = typer.Option(300.0, min=0.1, help="Per-problem timeout (s)."),
    run_timeout: float = typer.Option(1800.0, min=1, help="Whole-run limit per agent (s)."),
    allowed_model: list[str] = typer.Option([], help="Inference allowlist (repeat); none accepts any model."),
    strict_nonces: bool = typer.Option(False, help="403 on catalogue dispatches without a valid nonce."),
    require_isolation: bool = typer.Option(False, help="Fail instead of degrading when bwrap is unusable."),
) -> None:
    """Run each agent on every suite problem, one sandbox per problem; print a summary table."""
    from shoparena.arena.proxy import ProxyConfig
    from shoparena.arena.run import ArenaRunConfig, run_arena
    from shoparena.arena.sandbox import SandboxConfig

    config = ArenaRunConfig(
        agents=agents,
        suite=suite,
        index=index,
        out=out,
        backend=backend,
        workers=workers,
        timeout_s=timeout,
        run_timeout_s=run_timeout,
        proxy=ProxyConfig(allowed_models=allowed_model or None, strict_nonces=strict_nonces),
        sandbox=SandboxConfig(timeout_s=timeout, require_isolation=require_isolation),
    )
    summary = run_arena(config)
    table = Table(title=f"arena run {summary.run_id}  ({summary.run_dir})")
    for col in ("agent", "problems", "SUCCESS", "FAILED", "TIMED_OUT", "success_rate (sb / strict)"):
        table.add_column(col)
    for agent in summary.agents:
        rates = " / ".join(
            f"{agent.scores[p].get('success_rate', float('nan')):.3f}" if p in agent.scores else "-"
            for p in ("shoppingbench", "strict")
        )
        table.add_row(
            agent.agent,
            str(agent.problems),
            str(agent.success),
            str(agent.failed),
            str(agent.timed_out),
            rates,
        )
    console.print(table)
    for warning in summary.isolation_warnings:
        console.print(f"[bold red]ISOLATION WARNING[/]: {warning}")
    for note in summary.notes:
        console.print(f"[yellow]note[/]: {note}")


def register(app: typer.Typer) -> None:
    app.add_typer(arena_app, name="arena")
