"""``shoparena arena ...``: run agents in the sandboxed arena (other arena commands register here too)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from shoparena.arena.config import ArenaRunConfig
from shoparena.arena.inference import InferenceLimits
from shoparena.arena.race_rules import DecayShape, RaceConfig
from shoparena.arena.race_stage import RaceRunConfig
from shoparena.arena.run_judging import JudgeKind, ScoreVariant
from shoparena.cli._guards import refuse_output_over_input
from shoparena.cli._options import field_option
from shoparena.judge.llm_judge import BlacklistScope, FailureAccounting, LLMJudgeConfig
from shoparena.records.actors import ActorRole, describe, usage_line
from shoparena.records.race import DuplicateHotkeys, NoFinishers, RankBy, TailOnBurnUid, WeightConfig

arena_app = typer.Typer(
    help="ORO-compatible arena: sandboxed agent runs, proxy, races.", no_args_is_help=True
)
console = Console(width=None if Console().is_terminal else 240)  # never cut a table when piped
progress_console = Console(stderr=True)


@arena_app.command("run")
def run(
    agents: list[str] = typer.Option(
        ..., "--agents", help=f"Miner files or built-in miners ({describe(ActorRole.MINER)}); repeat, "
        "comma-separate, or list more after it."
    ),
    more_agents: list[str] | None = typer.Argument(None, help="More agents (e.g. --agents agentic subtask)."),
    suite: Path = typer.Option(..., exists=True, dir_okay=False, help="Suite file (ORO JSON or SB JSONL)."),
    out: Path = typer.Option(..., help="Run directory (re-running resumes it)."),
    index: Path | None = typer.Option(None, exists=True, file_okay=False, help="Search index directory."),
    backend: str | None = typer.Option(None, help=f"LLM backend spec: {describe(ActorRole.BACKEND)}."),
    model: str | None = field_option(ArenaRunConfig, "model"),
    workers: int | None = field_option(ArenaRunConfig, "workers", min=1),
    timeout: float = field_option(ArenaRunConfig, "timeout_s", "--timeout", min=0.1),
    run_timeout: float = field_option(ArenaRunConfig, "run_timeout_s", "--run-timeout", min=1),
    max_tokens: int = field_option(InferenceLimits, "max_tokens", min=1),
    stop: list[str] = field_option(InferenceLimits, "stop"),
    call_timeout: float = field_option(InferenceLimits, "call_timeout_s", "--call-timeout", min=0.1),
    allowed_model: list[str] = typer.Option([], help="Inference allowlist (repeat); none accepts any model."),
    strict_nonces: bool = typer.Option(False, help="403 on catalogue dispatches without a valid nonce."),
    require_isolation: bool = typer.Option(False, help="Fail instead of degrading when bwrap is unusable."),
    judge: str | None = typer.Option(
        None, "--judge", help="Then judge the run: rubric or llm (llm uses --backend)."
    ),
    race_bank: Path | None = typer.Option(
        None, "--race-bank", exists=True, dir_okay=False, help="Then race the agents on this hidden bank."
    ),
) -> None:
    """Run each agent on every suite problem, one sandbox per problem; print a summary table."""
    from shoparena.arena.config import ProxyConfig
    from shoparena.arena.miners import resolve_agent
    from shoparena.arena.run_directory import run_arena
    from shoparena.arena.sandbox import SandboxConfig

    try:
        agent_files = [
            resolve_agent(part.strip())
            for item in [*agents, *(more_agents or [])]
            for part in item.split(",")
            if part.strip()
        ]
    except ValueError as err:
        raise typer.BadParameter(str(err), param_hint="--agents") from None
    if judge is not None and judge not in ("rubric", "llm"):
        raise typer.BadParameter("--judge must be rubric or llm", param_hint="--judge")
    refuse_output_over_input(out, suite, index, race_bank, *agent_files, folder=True)
    config = ArenaRunConfig(
        agents=agent_files,
        suite=suite,
        index=index,
        out=out,
        backend=backend,
        model=model,
        workers=workers,
        timeout_s=timeout,
        run_timeout_s=run_timeout,
        proxy=ProxyConfig(
            allowed_models=allowed_model or None,
            strict_nonces=strict_nonces,
            inference=InferenceLimits(max_tokens=max_tokens, stop=stop, call_timeout_s=call_timeout),
        ),
        sandbox=SandboxConfig(timeout_s=timeout, require_isolation=require_isolation),
    )
    try:
        summary = run_arena(config, progress=_progress_printer())
    except RuntimeError as err:  # the backend's model failed to load: nothing ran
        console.print(f"[bold red]error[/]: {err}")
        raise typer.Exit(1) from None
    table = Table(title=f"arena run {summary.run_id}  ({summary.run_dir}; model {summary.model or '-'})")
    for col in ("agent", "problems", "SUCCESS", "FAILED", "TIMED_OUT", "infra (retried)",
                "no model reply", "inference (failed/total)", "success_rate (sb / strict)"):
        table.add_column(col)
    table.add_column("why FAILED / TIMED_OUT", overflow="fold")  # each record: output.jsonl
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
            ", ".join(f"{k} {v}" for k, v in agent.infra.items()) or "0",
            str(agent.no_model_reply),
            f"{agent.inference_failed}/{agent.inference_total}",
            rates,
            failure_text(agent.failures),
        )
    console.print(table)
    for warning in summary.isolation_warnings:
        console.print(f"[bold red]ISOLATION WARNING[/]: {warning}")
    for note in summary.notes:
        console.print(f"[yellow]note[/]: {note}")
    if judge is not None or race_bank is not None:
        from shoparena.arena.race_stage import RaceRunConfig, race_run
        from shoparena.arena.run_judging import judge_run
        from shoparena.cli.arena_tables import incentives_table, leaderboard_table

        report = judge_run(out, judge or "rubric", backend)
        console.print(incentives_table(report))
        if race_bank is not None:
            race_config = RaceRunConfig(judge=judge or "rubric", index=index, backend=backend,
                                        workers=workers, timeout_s=timeout, run_timeout_s=run_timeout)
            console.print(leaderboard_table(race_run([out], race_bank, out / "race", race_config)))


def failure_text(failures: dict[str, int], shown: int = 2, chars: int = 120) -> str:
    """The commonest failure reasons of one agent, one per line (``16× ModuleNotFoundError: ...``)."""
    lines = [f"{n}× {reason if len(reason) <= chars else reason[: chars - 1] + '…'}"
             for reason, n in list(failures.items())[:shown]]
    if len(failures) > shown:
        lines.append(f"+{sum(list(failures.values())[shown:])} more ({len(failures) - shown} other reasons)")
    return "\n".join(lines) or "-"


def _progress_printer():
    """One stderr line when an agent starts and about every tenth of its problems (the run can take minutes
    before the table)."""
    import time

    started: dict[str, float] = {}

    def show(agent: str, done: int, total: int, statuses: dict[str, int]) -> None:
        now = time.monotonic()
        if agent not in started:
            started[agent] = now
            resumed = f", {done} already recorded" if done else ""
            progress_console.print(f"{agent}: {total} problems{resumed}")
            return
        step = max(1, total // 10)
        if done % step and done != total:
            return
        counts = ", ".join(f"{k} {v}" for k, v in sorted(statuses.items()))
        progress_console.print(f"{agent}: {done}/{total} ({counts}) {now - started[agent]:.0f} s")

    return show


@arena_app.command("judge")
def judge_cmd(
    run_dir: Path = typer.Argument(..., exists=True, file_okay=False, help="An arena run directory."),
    judge: JudgeKind = typer.Option(JudgeKind.RUBRIC, "--judge", help="rubric (offline) or llm."),
    backend: str | None = typer.Option(
        None, help=f"Backend spec for --judge llm: {usage_line(ActorRole.BACKEND)}."
    ),
    scoring_profile: str = typer.Option(
        "strict", "--scoring-profile", "--profile", help="Scoring profile whose success_rate is the base."
    ),
    max_tokens: int = field_option(LLMJudgeConfig, "max_tokens", min=1,
                                   help="LLM judge: max new tokens per verdict."),
    guided: bool = field_option(LLMJudgeConfig, "guided", "--guided"),
    max_input_chars: int | None = field_option(LLMJudgeConfig, "max_input_chars", min=200),
    blacklist_scope: BlacklistScope = field_option(LLMJudgeConfig, "blacklist_scope"),
    abort_status: list[int] = field_option(LLMJudgeConfig, "abort_statuses", "--abort-status"),
    failure_accounting: FailureAccounting = field_option(RaceRunConfig, "failure_accounting"),
) -> None:
    """Judge every SUCCESS trajectory; write judge.jsonl, richness and final scores; print a table."""
    from shoparena.arena.run_judging import judge_run
    from shoparena.cli.arena_tables import incentives_table

    try:
        report = judge_run(run_dir, judge, backend, scoring_profile=scoring_profile,
                           llm_config=LLMJudgeConfig(max_tokens=max_tokens, guided=guided,
                                                     max_input_chars=max_input_chars,
                                                     blacklist_scope=blacklist_scope,
                                                     abort_statuses=abort_status),
                           failure_accounting=failure_accounting)
    except (FileNotFoundError, ValueError) as err:
        raise typer.BadParameter(str(err)) from None
    console.print(incentives_table(report))
    for note in report.notes + [f"{a.agent}: {n}" for a in report.agents for n in a.notes]:
        console.print(f"[yellow]note[/]: {note}")
    failed = [a for a in report.agents if a.score is not None and a.score.judge_unusable]
    if failed:  # docs/judge.md: a judge that could not judge gives no score, never a silent number
        worst = failed[0]
        counts = ", ".join(f"{k} {v}" for k, v in worst.verdict_statuses.items())
        typer.echo(
            f"error: arena judge {run_dir}: the judge failed for {len(failed)} agent(s) "
            f"({worst.agent}: {counts}); no final(judge) score; fix the judge and re-run",
            err=True,
        )
        raise typer.Exit(code=1)


@arena_app.command("calibrate")
def calibrate_cmd(
    run_a: Path = typer.Argument(..., exists=True, file_okay=False, help="Run judged by judge A."),
    run_b: Path = typer.Argument(..., exists=True, file_okay=False, help="Same run, judged by the other."),
    out: Path | None = typer.Option(None, "--out", help="Write the markdown report here too."),
) -> None:
    """Pair two judgings of one run by (agent, problem_id); print agreement, kappa, confusion matrix."""
    from shoparena.arena.run_judging import calibrate_runs
    from shoparena.judge.calibration import calibration_markdown
    from shoparena.runs.output import write_text_atomic

    refuse_output_over_input(out, run_a, run_b)

    try:
        report = calibrate_runs(run_a, run_b)
    except (FileNotFoundError, ValueError) as err:
        raise typer.BadParameter(str(err)) from None
    text = calibration_markdown(report)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(out, text)
    console.print(text, markup=False, highlight=False)


@arena_app.command("race")
def race_cmd(
    qualifying: list[Path] = typer.Option(..., "--qualifying", exists=True, file_okay=False,
                                          help="Qualifying run directories (repeat)."),
    race_bank: Path = typer.Option(..., "--race-bank", exists=True, dir_okay=False, help="Hidden bank."),
    out: Path = typer.Option(..., "--out", help="Race output directory."),
    index: Path | None = typer.Option(None, exists=True, file_okay=False, help="Search index directory."),
    backend: str | None = field_option(RaceRunConfig, "backend"),
    judge: JudgeKind = field_option(RaceRunConfig, "judge", help="rubric (offline) or llm (uses --backend)."),
    score: ScoreVariant = field_option(RaceRunConfig, "score"),
    failure_accounting: FailureAccounting = field_option(RaceRunConfig, "failure_accounting"),
    blacklist_scope: BlacklistScope = field_option(LLMJudgeConfig, "blacklist_scope"),
    abort_status: list[int] = field_option(LLMJudgeConfig, "abort_statuses", "--abort-status"),
    workers: int | None = field_option(RaceRunConfig, "workers", min=1),
    timeout: float = field_option(RaceRunConfig, "timeout_s", "--timeout", min=0.1,
                                  help="Per-problem timeout (s)."),
    problem_count: int | None = field_option(RaceRunConfig, "problem_count", min=1),
    problem_seed: int = field_option(RaceRunConfig, "problem_seed", help="Seed of the draw."),
    incumbent: str | None = typer.Option(None, help="Hotkey (agent name) of the current top miner."),
    incumbent_since: datetime | None = typer.Option(
        None, formats=["%Y-%m-%dT%H:%M:%S%z", "%Y-%m-%dT%H:%M:%SZ"], help="When the incumbent took the top."
    ),
    completed_at: datetime | None = typer.Option(
        None, formats=["%Y-%m-%dT%H:%M:%S%z", "%Y-%m-%dT%H:%M:%SZ"],
        help="The race's published completion time (default now); ages the incumbent's margin.",
    ),
    margin0: float = field_option(RaceConfig, "margin0", min=0),
    margin_min: float = field_option(RaceConfig, "margin_min", min=0),
    half_life_s: float = field_option(RaceConfig, "half_life_s", min=1e-9),
    decay_shape: DecayShape = field_option(RaceConfig, "decay_shape", help="exponential or linear."),
    linear_decay_s: float = field_option(RaceConfig, "linear_decay_s", min=1e-9),
    qualifying_floor: float = field_option(RaceConfig, "qualifying_floor", min=0),
    qualifying_ratio: float = field_option(RaceConfig, "qualifying_ratio", min=0, max=1),
    rank_by: RankBy = field_option(WeightConfig, "rank_by"),
    no_finishers: NoFinishers = field_option(WeightConfig, "no_finishers"),
    tail_on_burn_uid: TailOnBurnUid = field_option(WeightConfig, "tail_on_burn_uid"),
    duplicate_hotkeys: DuplicateHotkeys = field_option(WeightConfig, "duplicate_hotkeys"),
    t_top: float = field_option(WeightConfig, "t_top", min=0, max=1),
    t_burn: float = field_option(WeightConfig, "t_burn", min=0, max=1),
    burn_uid: int = field_option(WeightConfig, "burn_uid", min=0, help="UID that receives the burn."),
) -> None:
    """Race the qualifiers on the hidden bank; resolve the incumbent; write weights; print the leaderboard.

    Defaults follow ORO's validator (weights by race score, judge failures as ORO counts them); the
    options name shoparena's other choices (docs/arena.md, "ORO parity").
    """
    from pydantic import ValidationError

    from shoparena.arena.race_rules import Incumbent
    from shoparena.arena.race_stage import race_run
    from shoparena.cli.arena_tables import leaderboard_table

    if (incumbent is None) != (incumbent_since is None):
        raise typer.BadParameter("--incumbent and --incumbent-since go together")

    def aware(value: datetime | None) -> datetime | None:
        return value if value is None or value.tzinfo else value.replace(tzinfo=UTC)

    try:
        config = RaceRunConfig(
            race=RaceConfig(margin0=margin0, margin_min=margin_min, half_life_s=half_life_s,
                            decay_shape=decay_shape, linear_decay_s=linear_decay_s,
                            qualifying_floor=qualifying_floor, qualifying_ratio=qualifying_ratio),
            weights=WeightConfig(t_top=t_top, t_burn=t_burn, burn_uid=burn_uid, rank_by=rank_by,
                                 no_finishers=no_finishers, tail_on_burn_uid=tail_on_burn_uid,
                                 duplicate_hotkeys=duplicate_hotkeys),
            judge=judge,
            llm_judge=LLMJudgeConfig(blacklist_scope=blacklist_scope, abort_statuses=abort_status),
            failure_accounting=failure_accounting,
            score=score,
            index=index,
            backend=backend,
            workers=workers,
            timeout_s=timeout,
            completed_at=aware(completed_at),
            incumbent=Incumbent(hotkey=incumbent, top_at=aware(incumbent_since)) if incumbent else None,
            problem_count=problem_count,
            problem_seed=problem_seed,
        )
    except ValidationError as err:
        raise typer.BadParameter(str(err)) from None
    refuse_output_over_input(out, *qualifying, race_bank, folder=True)
    result = race_run(list(qualifying), race_bank, out, config)
    console.print(leaderboard_table(result))
    for note in result.notes:
        console.print(f"[yellow]note[/]: {note}")


def register(app: typer.Typer) -> None:
    app.add_typer(arena_app, name="arena")
