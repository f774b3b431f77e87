"""Rich tables of the arena's judge and race results (presentation lives in the CLI layer)."""

from __future__ import annotations

from rich.table import Table

from shoparena.arena.race_stage import RaceRunResult
from shoparena.arena.run_judging import IncentiveReport


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


def leaderboard_table(result: RaceRunResult) -> Table:
    """A Rich table of the race leaderboard (rank, scores, richness, u16 weight)."""
    decision = result.outcome.decision if result.outcome else None
    caption = None
    if decision is not None:
        caption = (
            f"incumbent protection: required {decision.required_score:.4f} "
            f"(top {decision.current_top_score:.4f} x (1 + {decision.margin:.4f})), challenger "
            f"{_fmt(decision.candidate_score)} -> {'promoted' if decision.promoted else 'kept'}"
        )
    table = Table(
        title=f"race {result.race.race_id} ({result.race.status.value}; score = {result.score})",
        caption=caption,
    )
    for col in (
        "rank",
        "hotkey",
        "type",
        "qualifying",
        "race",
        "base",
        "q",
        "coeff",
        "final(judge)",
        "richness",
        "final(richness)",
        "uid",
        "weight",
    ):
        table.add_column(col)
    for row in result.leaderboard:
        table.add_row(
            str(row.rank) if row.rank is not None else "-",
            row.hotkey,
            row.qualification_type or "not qualified",
            _fmt(row.qualifying_score),
            _fmt(row.race_score),
            _fmt(row.base),
            _fmt(row.reasoning_quality),
            _fmt(row.reasoning_coefficient),
            _fmt(row.final_judge),
            _fmt(row.agentic_richness),
            _fmt(row.final_richness),
            str(row.uid) if row.uid is not None else "-",
            str(row.weight),
        )
    return table


def incentives_table(report: IncentiveReport) -> Table:
    """A Rich table of :func:`judge_run`'s per-agent results."""
    table = Table(
        title=f"judge {report.judge}{f' ({report.judge_model})' if report.judge_model else ''}: "
        f"{report.run_dir}"
    )
    for col in (
        "agent",
        "problems",
        "judged",
        "verdicts",
        "base",
        "q",
        "coeff",
        "final(judge)",
        "richness",
        "A: pending",
        "B: nonce",
        "final(richness)",
    ):
        table.add_column(col)
    for a in report.agents:
        failed = a.score is not None and a.score.judge_unusable  # no score from a judge that could not judge
        table.add_row(
            a.agent,
            str(a.problems),
            str(a.judged),
            ", ".join(f"{k}:{v}" for k, v in a.verdict_statuses.items()) or "-",
            _fmt(a.success_rate),
            "judge failed" if failed else _fmt(a.reasoning_quality),
            "-" if failed else _fmt(a.reasoning_coefficient),
            "-" if failed else _fmt(a.score.final_judge if a.score else None),
            _fmt(a.richness.agentic_richness),
            _fmt(a.richness.pending_target),
            _fmt(a.richness.nonce_stamped),
            _fmt(a.score.final_richness if a.score else None),
        )
    return table


__all__ = ["incentives_table", "leaderboard_table"]
