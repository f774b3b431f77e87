"""The race stage on judged arena runs: qualifiers, a sandboxed race run, incumbent protection, weights.

:func:`race_run`: qualifiers from the qualifying runs' scores, a sandboxed run of the qualifiers on the
hidden bank, incumbent protection with the decaying margin (:mod:`shoparena.arena.race_rules`), ORO weights
(:mod:`shoparena.arena.weights`); it writes ``race.json``, ``weights.json`` (byte-identical for identical
inputs) and ``leaderboard.json``.
"""

from __future__ import annotations

import hashlib
import json
import random
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from shoparena.arena.layout import LEADERBOARD_NAME, ArenaRun, race_path, race_suite_path, weights_path
from shoparena.arena.race_rules import (
    Incumbent,
    Qualifier,
    QualifyingResult,
    Race,
    RaceConfig,
    RaceOutcome,
    RaceStatus,
    resolve_race,
    select_qualifiers,
)
from shoparena.arena.run_judging import (
    AgentIncentives,
    IncentiveReport,
    JudgeKind,
    ScoreVariant,
    judge_run,
    load_incentives,
)
from shoparena.arena.weights import WeightConfig, WeightVector, compute_weights, weights_document
from shoparena.jsonl import sha256_file
from shoparena.judge.llm_judge import FailureAccounting, LLMJudgeConfig
from shoparena.records.race import RaceBank, RaceDocument
from shoparena.runs.files import write_json_record
from shoparena.runs.layout import open_run


class RaceRunConfig(BaseModel):
    """Everything the race stage needs besides the qualifying runs, the bank and the output folder."""

    model_config = ConfigDict(extra="forbid")

    race: RaceConfig = Field(default_factory=RaceConfig)
    weights: WeightConfig = Field(
        default_factory=WeightConfig,
        description="ORO's validator by default (ranks by race score, so the top share can go to a "
        "challenger the race's incumbent protection kept at rank 2); rank_by='race_rank' gives it to the "
        "race's rank 1.",
    )
    judge: JudgeKind = JudgeKind.RUBRIC
    llm_judge: LLMJudgeConfig = Field(default_factory=LLMJudgeConfig, description="Knobs of --judge llm.")
    failure_accounting: FailureAccounting = Field(
        default="oro",
        description="How judge failures count: oro (0.0 in q, model calls counted) or verdicts (left out "
        "of q, verdicts counted).",
    )
    score: ScoreVariant = Field(default="judge", description="Which final score qualifies and races.")
    scoring_profile: str = Field(default="strict", description="Profile whose success rate is the base.")
    index: Path | None = None
    backend: str | None = Field(default=None, description="Chat backend for miners (and an LLM judge).")
    workers: int | None = Field(
        default=None, ge=1, description="Parallel sandboxes (default: two per usable CPU, within memory)."
    )
    timeout_s: float = Field(default=300.0, gt=0)
    run_timeout_s: float | None = Field(default=1800.0, gt=0)
    race_id: str | None = Field(default=None, description="Default: a hash of the race's inputs.")
    completed_at: datetime | None = Field(
        default=None, description="The race's published completion time (default: now, UTC)."
    )
    incumbent: Incumbent | None = None
    problem_count: int | None = Field(default=None, ge=1, description="Problems drawn from the bank.")
    problem_seed: int = 0
    hotkey_to_uid: dict[str, int] | None = Field(
        default=None, description="Metagraph; default: hotkeys sorted, UIDs 1..N (UID 0 burns)."
    )


class LeaderboardRow(BaseModel):
    """One line of ``leaderboard.json``."""

    model_config = ConfigDict(extra="forbid")

    rank: int | None
    hotkey: str
    agent_version_id: str
    qualification_type: str | None
    qualified: bool
    qualifying_score: float | None
    race_score: float | None
    base: float | None = None
    reasoning_quality: float | None = None
    reasoning_coefficient: float | None = None
    final_judge: float | None = None
    agentic_richness: float | None = None
    final_richness: float | None = None
    uid: int | None = None
    weight: int = 0


class RaceRunResult(BaseModel):
    """What :func:`race_run` wrote."""

    model_config = ConfigDict(extra="forbid")

    out_dir: str
    race: Race
    qualifying: QualifyingResult
    outcome: RaceOutcome | None
    weights: WeightVector | None
    leaderboard: list[LeaderboardRow]
    score: ScoreVariant
    notes: list[str] = Field(default_factory=list)


def _race_suite(bank: Path, out_dir: Path, count: int | None, seed: int) -> Path:
    """The bank itself, or ``race_suite.json`` holding ``count`` problems drawn with ``seed``."""
    if count is None:
        return bank
    from shoparena.suites.loaders import load_suite, write_oro_suite

    problems, _ = load_suite(bank)
    if count < len(problems):
        picked = sorted(random.Random(seed).sample(range(len(problems)), count))
        problems = [problems[i] for i in picked]
    path = race_suite_path(out_dir)
    write_oro_suite(problems, path)
    return path


def _candidates(
    qualifying_run_dirs: list[str | Path], cfg: RaceRunConfig, judge_backend: Any, notes: list[str]
) -> tuple[list[Qualifier], dict[str, Path], dict[str, AgentIncentives]]:
    """Every agent of the qualifying runs with its qualifying score (judged again when the runs were judged
    otherwise), its file and its entry; an agent without a readable file is noted and skipped."""
    candidates: list[Qualifier] = []
    files: dict[str, Path] = {}
    qual_entries: dict[str, AgentIncentives] = {}
    for run_dir in qualifying_run_dirs:
        report = load_incentives(run_dir)
        if (
            report is None
            or report.judge != cfg.judge.value
            or report.profile != cfg.scoring_profile
            or report.failure_accounting != cfg.failure_accounting
        ):
            report = _judge(run_dir, cfg, judge_backend)
        for entry in report.agents:
            if entry.agent_path is None or not Path(entry.agent_path).exists():
                notes.append(f"{run_dir}: agent {entry.agent} has no readable file; skipped")
                continue
            candidates.append(
                Qualifier(
                    hotkey=entry.agent,
                    agent_version_id=entry.agent_version_id,
                    qualifying_score=entry.final(cfg.score),
                )
            )
            files[entry.agent_version_id] = Path(entry.agent_path)
            qual_entries[entry.agent_version_id] = entry
    return candidates, files, qual_entries


def _race_id(qualifying: QualifyingResult, bank_sha: str, cfg: RaceRunConfig) -> str:
    """A hash of the race's inputs: the qualifiers, the bank and the problem draw."""
    identity = {
        "qualifiers": sorted(q.agent_version_id for q in qualifying.qualifiers),
        "bank": bank_sha,
        "problem_count": cfg.problem_count,
        "problem_seed": cfg.problem_seed,
    }
    return "race-" + hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:12]


def _race_entries(
    out: Path,
    bank: Path,
    cfg: RaceRunConfig,
    files: dict[str, Path],
    qualifying: QualifyingResult,
    race_id: str,
    *,
    backend: Any,
    search: Any,
    judge_backend: Any,
) -> dict[str, AgentIncentives]:
    """The qualifiers run on the race suite (``OUT/race_run``, an arena run) and judged: each one's entry by
    agent version id."""
    from shoparena.arena.run_directory import ArenaRunConfig, run_arena

    race_entries: dict[str, AgentIncentives] = {}
    suite = _race_suite(bank, out, cfg.problem_count, cfg.problem_seed)
    race_dir = out / "race_run"
    agents = [files[q.agent_version_id] for q in qualifying.qualifiers]
    run_arena(
        ArenaRunConfig(
            agents=agents,
            suite=suite,
            index=cfg.index,
            out=race_dir,
            backend=cfg.backend,
            workers=cfg.workers,
            timeout_s=cfg.timeout_s,
            run_timeout_s=cfg.run_timeout_s,
            run_id=race_id,
        ),
        backend=backend,
        search=search,
    )
    race_report = _judge(race_dir, cfg, judge_backend)
    # run_arena names agents in the order given, so names line up with qualifiers.
    for qualifier, name in zip(qualifying.qualifiers, open_run(race_dir, ArenaRun).agents(), strict=True):
        race_entries[qualifier.agent_version_id] = race_report.agent(name)
    return race_entries


def race_run(
    qualifying_run_dirs: list[str | Path],
    race_bank: str | Path,
    out_dir: str | Path,
    config: RaceRunConfig | None = None,
    *,
    backend: Any = None,
    search: Any = None,
) -> RaceRunResult:
    """Run the race stage and write ``race.json``, ``weights.json`` and ``leaderboard.json`` in ``out_dir``.

    1. Qualifying: each qualifying run is judged if it has no ``incentives.json`` for the configured judge;
       each agent becomes a candidate (hotkey = agent name, version = name@sha) scored by ``config.score``;
       :func:`~shoparena.arena.race_rules.select_qualifiers` applies the threshold (CANCELLED: no race, no
       weights).
    2. Race: the qualifiers run via :func:`~shoparena.arena.run_directory.run_arena` on the hidden bank (or
       ``problem_count`` problems drawn from it with ``problem_seed``) in ``out_dir/race_run``, which is then
       judged; race_score = the same score variant.
    3. Resolution: :func:`~shoparena.arena.race_rules.resolve_race` with the incumbent and the decaying
       margin, aged at ``completed_at``; weights from :func:`~shoparena.arena.weights.compute_weights`.

    Args:
        qualifying_run_dirs: ``arena run`` directories whose agents compete.
        race_bank: The hidden problem bank (ORO JSON or ShoppingBench JSONL, with ground truth).
        out_dir: Output folder (resumable: the race run resumes like any arena run).
        config: Race, weight, judge and run settings.
        backend: A ready chat backend for the miners (tests); else ``config.backend``.
        search: A ready search engine (tests); else ``config.index``.
    """

    cfg = config or RaceRunConfig()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    bank = Path(race_bank)
    notes: list[str] = []
    judge_backend = backend if cfg.judge is JudgeKind.LLM else None

    candidates, files, qual_entries = _candidates(qualifying_run_dirs, cfg, judge_backend, notes)
    qualifying = select_qualifiers(candidates, cfg.race, cfg.incumbent)
    bank_sha = sha256_file(bank)
    race_id = cfg.race_id or _race_id(qualifying, bank_sha, cfg)
    completed_at = cfg.completed_at or datetime.now(UTC).replace(microsecond=0)
    # The metagraph: every candidate's hotkey (qualified or not) on UIDs 1..N; UID 0 is the burn.
    hotkeys = sorted({c.hotkey for c in candidates if c.hotkey})
    uid_map = cfg.hotkey_to_uid or {h: i for i, h in enumerate(hotkeys, start=1)}

    outcome: RaceOutcome | None = None
    weights: WeightVector | None = None
    race_entries: dict[str, AgentIncentives] = {}
    if qualifying.status is RaceStatus.CANCELLED:
        race = Race(
            race_id=race_id,
            status=RaceStatus.CANCELLED,
            qualifiers=qualifying.rejected,
            problem_seed=cfg.problem_seed,
            problem_count=cfg.problem_count,
        )
        notes.append(f"race cancelled: no scored candidate reached the threshold {qualifying.threshold}")
    else:
        race_entries = _race_entries(
            out,
            bank,
            cfg,
            files,
            qualifying,
            race_id,
            backend=backend,
            search=search,
            judge_backend=judge_backend,
        )
        raced = [
            q.model_copy(update={"race_score": race_entries[q.agent_version_id].final(cfg.score)})
            for q in qualifying.qualifiers
        ]
        race = Race(
            race_id=race_id,
            status=RaceStatus.RACE_COMPLETE,
            qualifiers=raced,
            completed_at=completed_at,
            problem_seed=cfg.problem_seed,
            problem_count=cfg.problem_count,
        )
        outcome = resolve_race(race, cfg.incumbent, cfg.race)
        ranked_ids = {q.agent_version_id for q in outcome.ranking}
        race = race.model_copy(
            update={
                "qualifiers": outcome.ranking + [q for q in raced if q.agent_version_id not in ranked_ids]
            }
        )
        weights = compute_weights(race, uid_map, config=cfg.weights)
        notes += _weight_notes(outcome, weights)

    rows = _leaderboard(race, qualifying, race_entries, qual_entries, weights, uid_map, cfg.score)
    result = RaceRunResult(
        out_dir=str(out),
        race=race,
        qualifying=qualifying,
        outcome=outcome,
        weights=weights,
        leaderboard=rows,
        score=cfg.score,
        notes=notes,
    )
    race_doc = RaceDocument(
        race=race,
        qualifying=qualifying,
        outcome=outcome,
        config=cfg.model_dump(mode="json"),
        bank=RaceBank(path=str(bank), sha256=bank_sha),
        qualifying_runs=[str(p) for p in qualifying_run_dirs],
        notes=notes,
    )
    write_json_record(race_path(out), race_doc)
    weights_path(out).write_bytes(weights_document(race, weights, uid_map, cfg.weights))
    (out / LEADERBOARD_NAME).write_text(
        json.dumps([r.model_dump(mode="json") for r in rows], indent=2), encoding="utf-8"
    )
    return result


def _judge(run_dir: str | Path, cfg: RaceRunConfig, backend: Any) -> IncentiveReport:
    return judge_run(
        run_dir,
        cfg.judge,
        cfg.backend,
        backend=backend,
        scoring_profile=cfg.scoring_profile,
        llm_config=cfg.llm_judge,
        failure_accounting=cfg.failure_accounting,
    )


def _weight_notes(outcome: RaceOutcome, weights: WeightVector | None) -> list[str]:
    """Say where the validator's weights part from the race's own result."""
    if weights is None:
        return ["race complete without finishers: no weights written (ORO submits nothing)"]
    if weights.top_hotkey and outcome.top_hotkey and weights.top_hotkey != outcome.top_hotkey:
        return [
            f"the top share goes to {weights.top_hotkey} (highest race score, as ORO's validator ranks); "
            f"the race's rank 1 is {outcome.top_hotkey} (incumbent protection)"
        ]
    return []


def _leaderboard(
    race: Race,
    qualifying: QualifyingResult,
    race_entries: dict[str, AgentIncentives],
    qual_entries: dict[str, AgentIncentives],
    weights: WeightVector | None,
    uid_map: dict[str, int],
    variant: ScoreVariant,
) -> list[LeaderboardRow]:
    rows: list[LeaderboardRow] = []
    qualified_ids = {q.agent_version_id for q in qualifying.qualifiers}
    listed = list(race.qualifiers) if race.status is RaceStatus.RACE_COMPLETE else []
    seen = {x.agent_version_id for x in listed}
    listed += [q for q in qualifying.rejected if q.agent_version_id not in seen]
    for q in listed:
        entry = race_entries.get(q.agent_version_id) or qual_entries.get(q.agent_version_id)
        score = entry.score if entry else None
        uid = uid_map.get(q.hotkey or "")
        rows.append(
            LeaderboardRow(
                rank=q.race_rank,
                hotkey=q.hotkey or "",
                agent_version_id=q.agent_version_id,
                qualification_type=q.qualification_type.value
                if q.agent_version_id in qualified_ids
                else None,
                qualified=q.agent_version_id in qualified_ids,
                qualifying_score=q.qualifying_score,
                race_score=q.race_score,
                base=score.base if score else None,
                reasoning_quality=entry.reasoning_quality if entry else None,
                reasoning_coefficient=entry.reasoning_coefficient if entry else None,
                final_judge=score.final_judge if score else None,
                agentic_richness=entry.richness.agentic_richness if entry else None,
                final_richness=score.final_richness if score else None,
                uid=uid,
                weight=_weight_of(weights, uid),
            )
        )
    return rows


def _weight_of(weights: WeightVector | None, uid: int | None) -> int:
    if weights is None or uid is None or uid >= len(weights.weights):
        return 0
    return weights.weights[uid]


__all__ = ["LeaderboardRow", "RaceRunConfig", "RaceRunResult", "race_run"]
