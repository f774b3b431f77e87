"""The incentive layer on arena run directories: judge verdicts, final scores, richness, races and weights.

:func:`judge_run` adds to a run directory (``shoparena arena run`` layout):

- ``agents/<name>/judge.jsonl``: one :class:`~shoparena.judge.records.JudgeVerdict` per SUCCESS envelope, in
  suite order (FAILED / TIMED_OUT envelopes are not judged, as in ORO; they are counted, never scored 0 by a
  judge);
- ``agents/<name>/incentives.json`` and ``incentives.json``: per agent the reasoning quality q, the
  coefficient, ``final_judge = round(success_rate x coeff, 4)`` (ORO v1.0.79's validator score), the
  agentic-richness variant ``final_richness = round(base x (0.3 + 0.7 x richness), 4)`` and the base.

Richness is Variant B of distillation spec §2, computed **only** from the proxy's trusted logs
(``proxy/<agent>/<problem>.jsonl``): valid-nonce catalogue dispatches / all catalogue dispatches, pooled over
the agent's SUCCESS problems; None when no dispatch carries a ``nonce_status`` (no proof, distinct from 0).

:func:`race_run` is the race stage: qualifiers from the qualifying runs' scores, a sandboxed run of the
qualifiers on the hidden bank, incumbent protection with the decaying margin (:mod:`shoparena.arena.race`),
ORO weights (:mod:`shoparena.arena.weights`); it writes ``race.json``, ``weights.json`` (byte-identical for
identical inputs) and ``leaderboard.json``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import random
from collections import Counter
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

import orjson
import yaml
from pydantic import BaseModel, ConfigDict, Field

from shoparena.arena.race import (
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
from shoparena.arena.runner import read_trusted_log, safe_name
from shoparena.arena.weights import WeightConfig, WeightVector, compute_weights
from shoparena.jsonl import read_jsonl_dicts
from shoparena.judge.coefficient import ArenaScore, combine_scores, reasoning_coefficient, reasoning_quality
from shoparena.judge.records import JudgeStatus, JudgeVerdict
from shoparena.records.tools import CATALOGUE_TOOLS

logger = logging.getLogger(__name__)

ScoreVariant = Literal["judge", "richness", "base"]


class JudgeKind(StrEnum):
    """Which judge grades the trajectories."""

    RUBRIC = "rubric"
    LLM = "llm"


class ProblemRichness(BaseModel):
    """Variant-B richness of one trajectory, from the trusted proxy log."""

    model_config = ConfigDict(extra="forbid")

    problem_id: str
    valid_count: int
    total_dispatch_count: int
    agentic_richness: float | None
    has_nonce_stamps: bool
    tool_breakdown: dict[str, int] = Field(default_factory=dict)
    nonce_statuses: dict[str, int] = Field(default_factory=dict)


class RichnessSummary(BaseModel):
    """Richness pooled over an agent's SUCCESS problems."""

    model_config = ConfigDict(extra="forbid")

    agentic_richness: float | None = Field(
        description="valid / catalogue dispatches; None when no dispatch carried a nonce_status."
    )
    valid_count: int = 0
    total_dispatch_count: int = 0
    has_nonce_stamps: bool = False
    tool_breakdown: dict[str, int] = Field(default_factory=dict)
    nonce_statuses: dict[str, int] = Field(default_factory=dict)


class AgentIncentives(BaseModel):
    """Judge, richness and final scores of one agent in one run directory."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = 1
    agent: str
    agent_version_id: str = Field(description="'<name>@<first 12 hex of the agent file sha256>'.")
    agent_path: str | None = None
    judge: str
    judge_model: str | None = None
    profile: str = Field(description="Scoring profile whose success_rate is the base.")
    problems: int
    envelope_statuses: dict[str, int]
    judged: int
    verdict_statuses: dict[str, int]
    success_rate: float | None = Field(description="None when the run was not scored (no scores.json).")
    reasoning_quality: float
    reasoning_coefficient: float
    score: ArenaScore | None = Field(default=None, description="Both final variants; None when unscored.")
    richness: RichnessSummary
    per_problem_richness: list[ProblemRichness] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)

    def final(self, variant: ScoreVariant) -> float | None:
        """The score a race uses: ``judge`` (ORO v1.0.79), ``richness`` (announced), or ``base``."""
        if self.score is None:
            return None
        if variant == "judge":
            return self.score.final_judge
        if variant == "richness":
            return self.score.final_richness
        return self.score.base


class IncentiveReport(BaseModel):
    """What :func:`judge_run` wrote (also ``incentives.json`` at the run's root)."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = 1
    run_dir: str
    run_id: str | None
    judge: str
    judge_model: str | None = None
    profile: str
    agents: list[AgentIncentives]
    notes: list[str] = Field(default_factory=list)

    def agent(self, name: str) -> AgentIncentives:
        """The entry of agent ``name``.

        Raises:
            KeyError: No such agent in the run.
        """
        for entry in self.agents:
            if entry.agent == name:
                return entry
        raise KeyError(f"IncentiveReport.agents has no agent {name!r}")


# --- judging -------------------------------------------------------------------------------------------


def trajectory_richness(problem_id: str, entries: list[dict[str, Any]]) -> ProblemRichness:
    """Variant-B richness of one problem from its trusted proxy entries (inference calls excluded)."""
    tools: Counter[str] = Counter()
    statuses: Counter[str] = Counter()
    valid = total = 0
    stamped = False
    for entry in entries:
        path = str(entry.get("path") or "")
        if not path.startswith("/search/"):
            continue
        tool = path[len("/search/") :]
        if tool not in CATALOGUE_TOOLS:
            continue
        total += 1
        tools[tool] += 1
        status = entry.get("nonce_status")
        if status is not None:
            stamped = True
            statuses[str(status)] += 1
            valid += status == "valid"
    return ProblemRichness(
        problem_id=problem_id,
        valid_count=valid,
        total_dispatch_count=total,
        agentic_richness=(round(valid / total, 4) if total else 0.0) if stamped else None,
        has_nonce_stamps=stamped,
        tool_breakdown=dict(sorted(tools.items())),
        nonce_statuses=dict(sorted(statuses.items())),
    )


def pooled_richness(items: list[ProblemRichness]) -> RichnessSummary:
    """Pool per-problem counts: valid / total over every stamped dispatch."""
    tools: Counter[str] = Counter()
    statuses: Counter[str] = Counter()
    for item in items:
        tools.update(item.tool_breakdown)
        statuses.update(item.nonce_statuses)
    valid = sum(i.valid_count for i in items)
    total = sum(i.total_dispatch_count for i in items)
    stamped = any(i.has_nonce_stamps for i in items)
    return RichnessSummary(
        agentic_richness=(round(valid / total, 4) if total else 0.0) if stamped else None,
        valid_count=valid,
        total_dispatch_count=total,
        has_nonce_stamps=stamped,
        tool_breakdown=dict(sorted(tools.items())),
        nonce_statuses=dict(sorted(statuses.items())),
    )


def _judge_model_name(spec: str | None) -> str:
    if not spec:
        return "judge"
    try:
        from shoparena.llm.factory import parse_backend_spec

        _, location, model = parse_backend_spec(spec)
    except ValueError:
        return spec.strip()
    return model or Path(location).name or spec


def make_judge(
    kind: JudgeKind | str, backend_spec: str | None = None, *, backend: Any = None, llm_config: Any = None
) -> tuple[Any, str | None]:
    """A judge and its model name: the offline rubric, or an :class:`LLMJudge` over one backend.

    Raises:
        ValueError: ``llm`` without a backend or spec, or an unknown kind.
    """
    kind = JudgeKind(kind)
    if kind is JudgeKind.RUBRIC:
        from shoparena.judge.rubric import RubricJudge

        return RubricJudge(), None
    from shoparena.judge.llm_judge import LLMJudge

    if backend is None:
        if not backend_spec:
            raise ValueError("judge 'llm' needs a backend spec (--backend SPEC)")
        from shoparena.llm.factory import backend_from_spec

        backend = backend_from_spec(backend_spec)
    model = _judge_model_name(backend_spec) if backend_spec else getattr(backend, "name", "judge")
    label = str(model) + (" (guided)" if getattr(llm_config, "guided", False) else "")
    return LLMJudge([(str(model), backend)], llm_config), label


def _suite_queries(run_dir: Path, config: dict[str, Any]) -> tuple[dict[str, str], list[str], str | None]:
    """(problem id → query, suite order, note) from the suite the run used (never agent-written text)."""
    suite = config.get("suite")
    if not suite or not Path(suite).exists():
        return {}, [], f"suite {suite!r} not found: judge queries taken from the trajectories"
    from shoparena.arena.run import load_problems

    problems, _, _ = load_problems(Path(suite))
    return {p.problem_id: p.query for p in problems}, [p.problem_id for p in problems], None


def _agent_version(name: str, manifest: dict[str, Any]) -> tuple[str, str | None]:
    info = (manifest.get("agents") or {}).get(name) or {}
    sha = str(info.get("sha256") or "")
    return (f"{name}@{sha[:12]}" if sha else name), info.get("path")


def judge_run(
    run_dir: str | Path,
    judge: JudgeKind | str = JudgeKind.RUBRIC,
    backend_spec: str | None = None,
    *,
    backend: Any = None,
    profile: str = "strict",
    llm_config: Any = None,
) -> IncentiveReport:
    """Judge every SUCCESS trajectory of a run directory and write verdicts, richness and final scores.

    Args:
        run_dir: An ``arena run`` directory.
        judge: ``rubric`` (offline, mechanical) or ``llm``.
        backend_spec: Chat backend spec for the LLM judge (``transformers:DIR``, ``openai:URL#model``).
        backend: A ready backend for the LLM judge (tests); overrides ``backend_spec``.
        profile: Scoring profile of ``scores.json`` whose ``success_rate`` is the base (``strict`` = ORO).
        llm_config: :class:`~shoparena.judge.llm_judge.LLMJudgeConfig` for the LLM judge.

    Returns:
        The report (also written to ``incentives.json``).

    Raises:
        FileNotFoundError: ``run_dir`` has no ``config.yaml`` (not a run directory).
    """
    from shoparena.formats.oro import from_oro_envelope
    from shoparena.judge.inputs import build_judge_input

    root = Path(run_dir)
    if not (root / "config.yaml").exists():
        raise FileNotFoundError(f"{root}: not an arena run directory (no config.yaml)")
    config = yaml.safe_load((root / "config.yaml").read_text(encoding="utf-8")) or {}
    manifest_path = root / "manifest.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8")) if manifest_path.exists() else {}
    scores_path = root / "scores.json"
    scores = json.loads(scores_path.read_text(encoding="utf-8")) if scores_path.exists() else {}
    queries, order, note = _suite_queries(root, config)
    notes = [note] if note else []
    judge_obj, judge_model = make_judge(judge, backend_spec, backend=backend, llm_config=llm_config)
    rank = {pid: i for i, pid in enumerate(order)}
    names = list(manifest.get("agents") or {}) or sorted(
        p.name for p in (root / "agents").iterdir() if p.is_dir()
    )
    entries: list[AgentIncentives] = []
    for name in names:
        agent_dir = root / "agents" / name
        envelopes = read_jsonl_dicts(agent_dir / "output.jsonl")
        # Suite order, so judge.jsonl does not depend on completion order.
        envelopes.sort(
            key=lambda e: (rank.get(str(e.get("problem_id")), len(rank)), str(e.get("problem_id")))
        )
        if hasattr(judge_obj, "new_run"):
            judge_obj.new_run()
        verdicts: list[JudgeVerdict] = []
        richness_items: list[ProblemRichness] = []
        agent_notes: list[str] = []
        for envelope in envelopes:
            if envelope.get("status") != "SUCCESS":
                continue
            pid = str(envelope.get("problem_id"))
            trusted = read_trusted_log(root / "proxy" / name / f"{safe_name(pid)}.jsonl")
            richness_items.append(trajectory_richness(pid, trusted))
            try:
                trajectory = from_oro_envelope(envelope)
            except Exception as err:  # an unreadable envelope is reported, not judged as 0
                agent_notes.append(f"{pid}: envelope unreadable ({err}); not judged")
                continue
            query = queries.get(pid, trajectory.query)
            verdicts.append(judge_obj.judge(build_judge_input(query, trusted, trajectory), problem_id=pid))
        with open(agent_dir / "judge.jsonl", "w", encoding="utf-8") as fh:
            for verdict in verdicts:
                fh.write(verdict.model_dump_json() + "\n")
        statuses = Counter(str(e.get("status")) for e in envelopes)
        profile_scores = (scores.get(name) or {}).get(profile) or {}
        success_rate = profile_scores.get("success_rate")
        richness = pooled_richness(richness_items)
        ok_scores = [v.score for v in verdicts if v.status is JudgeStatus.OK]
        q = reasoning_quality(ok_scores)
        score = None
        if success_rate is not None:
            score = combine_scores(float(success_rate), verdicts, richness.agentic_richness)
        else:
            agent_notes.append(f"no {profile!r} success_rate in scores.json: final scores not computed")
        version, path = _agent_version(name, manifest)
        entry = AgentIncentives(
            agent=name,
            agent_version_id=version,
            agent_path=path,
            judge=str(JudgeKind(judge).value),
            judge_model=judge_model,
            profile=profile,
            problems=len(envelopes),
            envelope_statuses=dict(sorted(statuses.items())),
            judged=len(verdicts),
            verdict_statuses=dict(sorted(Counter(v.status.value for v in verdicts).items())),
            success_rate=success_rate,
            reasoning_quality=q,
            reasoning_coefficient=reasoning_coefficient(q),
            score=score,
            richness=richness,
            per_problem_richness=richness_items,
            notes=agent_notes,
        )
        (agent_dir / "incentives.json").write_text(entry.model_dump_json(indent=2), encoding="utf-8")
        entries.append(entry)
    report = IncentiveReport(
        run_dir=str(root),
        run_id=manifest.get("run_id") or config.get("run_id"),
        judge=str(JudgeKind(judge).value),
        judge_model=judge_model,
        profile=profile,
        agents=entries,
        notes=notes,
    )
    (root / "incentives.json").write_text(report.model_dump_json(indent=2), encoding="utf-8")
    return report


def load_incentives(run_dir: str | Path) -> IncentiveReport | None:
    """The ``incentives.json`` of a run directory, or None when it has not been judged."""
    path = Path(run_dir) / "incentives.json"
    if not path.exists():
        return None
    return IncentiveReport.model_validate_json(path.read_text(encoding="utf-8"))


# --- races ---------------------------------------------------------------------------------------------


class RaceRunConfig(BaseModel):
    """Everything the race stage needs besides the qualifying runs, the bank and the output folder."""

    model_config = ConfigDict(extra="forbid")

    race: RaceConfig = Field(default_factory=RaceConfig)
    weights: WeightConfig = Field(
        default_factory=lambda: WeightConfig(rank_by="race_rank"),
        description="race_rank by default, so incumbent protection decides rank 1.",
    )
    judge: JudgeKind = JudgeKind.RUBRIC
    score: ScoreVariant = Field(default="judge", description="Which final score qualifies and races.")
    profile: str = "strict"
    index: Path | None = None
    backend: str | None = Field(default=None, description="Chat backend for miners (and an LLM judge).")
    workers: int = Field(default=3, ge=1)
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


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _race_suite(bank: Path, out_dir: Path, count: int | None, seed: int) -> Path:
    """The bank itself, or ``race_suite.json`` holding ``count`` problems drawn with ``seed``."""
    if count is None:
        return bank
    from shoparena.suites.loaders import load_suite, write_oro_suite

    problems, _ = load_suite(bank)
    if count < len(problems):
        picked = sorted(random.Random(seed).sample(range(len(problems)), count))
        problems = [problems[i] for i in picked]
    path = out_dir / "race_suite.json"
    write_oro_suite(problems, path)
    return path


def race_run(
    qualifying_run_dirs: list[str | Path],
    race_bank: str | Path,
    out_dir: str | Path,
    config: RaceRunConfig | None = None,
    *,
    backend: Any = None,
    search: Any = None,
    console: Any = None,
) -> RaceRunResult:
    """Run the race stage and write ``race.json``, ``weights.json`` and ``leaderboard.json`` in ``out_dir``.

    1. Qualifying: each qualifying run is judged if it has no ``incentives.json`` for the configured judge;
       each agent becomes a candidate (hotkey = agent name, version = name@sha) scored by ``config.score``;
       :func:`~shoparena.arena.race.select_qualifiers` applies the threshold (CANCELLED: no race, no weights).
    2. Race: the qualifiers run via :func:`~shoparena.arena.run.run_arena` on the hidden bank (or
       ``problem_count`` problems drawn from it with ``problem_seed``) in ``out_dir/race_run``, which is then
       judged; race_score = the same score variant.
    3. Resolution: :func:`~shoparena.arena.race.resolve_race` with the incumbent and the decaying margin,
       aged at ``completed_at``; weights from :func:`~shoparena.arena.weights.compute_weights`.

    Args:
        qualifying_run_dirs: ``arena run`` directories whose agents compete.
        race_bank: The hidden problem bank (ORO JSON or ShoppingBench JSONL, with ground truth).
        out_dir: Output folder (resumable: the race run resumes like any arena run).
        config: Race, weight, judge and run settings.
        backend: A ready chat backend for the miners (tests); else ``config.backend``.
        search: A ready search engine (tests); else ``config.index``.
        console: A Rich console to print the leaderboard on (None: print nothing).
    """
    from shoparena.arena.run import ArenaRunConfig, run_arena

    cfg = config or RaceRunConfig()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    bank = Path(race_bank)
    notes: list[str] = []
    judge_backend = backend if cfg.judge is JudgeKind.LLM else None

    candidates: list[Qualifier] = []
    files: dict[str, Path] = {}
    qual_entries: dict[str, AgentIncentives] = {}
    for run_dir in qualifying_run_dirs:
        report = load_incentives(run_dir)
        if report is None or report.judge != cfg.judge.value or report.profile != cfg.profile:
            report = judge_run(run_dir, cfg.judge, cfg.backend, backend=judge_backend, profile=cfg.profile)
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
    qualifying = select_qualifiers(candidates, cfg.race, cfg.incumbent)
    bank_sha = _sha256(bank)
    identity = {
        "qualifiers": sorted(q.agent_version_id for q in qualifying.qualifiers),
        "bank": bank_sha,
        "problem_count": cfg.problem_count,
        "problem_seed": cfg.problem_seed,
    }
    race_id = (
        cfg.race_id
        or "race-" + hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:12]
    )
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
        race_report = judge_run(race_dir, cfg.judge, cfg.backend, backend=judge_backend, profile=cfg.profile)
        manifest = json.loads((race_dir / "manifest.json").read_text(encoding="utf-8"))
        # run_arena names agents in the order given, so names line up with qualifiers.
        for qualifier, name in zip(qualifying.qualifiers, manifest["agents"], strict=True):
            race_entries[qualifier.agent_version_id] = race_report.agent(name)
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
    race_doc = {
        "race": race.model_dump(mode="json"),
        "qualifying": qualifying.model_dump(mode="json"),
        "outcome": outcome.model_dump(mode="json") if outcome else None,
        "config": cfg.model_dump(mode="json"),
        "bank": {"path": str(bank), "sha256": bank_sha},
        "qualifying_runs": [str(p) for p in qualifying_run_dirs],
        "notes": notes,
    }
    (out / "race.json").write_text(json.dumps(race_doc, indent=2), encoding="utf-8")
    (out / "weights.json").write_bytes(weights_document(race, weights, uid_map, cfg.weights))
    (out / "leaderboard.json").write_text(
        json.dumps([r.model_dump(mode="json") for r in rows], indent=2), encoding="utf-8"
    )
    if console is not None:
        console.print(leaderboard_table(result))
    return result


def weights_document(
    race: Race, weights: WeightVector | None, uid_map: dict[str, int], config: WeightConfig
) -> bytes:
    """Canonical ``weights.json`` bytes (sorted keys, no timestamps): identical inputs, identical bytes."""
    doc: dict[str, Any] = {
        "race_id": race.race_id,
        "status": race.status.value,
        "hotkey_to_uid": dict(sorted(uid_map.items())),
        "config": config.model_dump(mode="json"),
    }
    if weights is None:
        doc["skipped"] = True  # no RACE_COMPLETE race: validators skip the tick
    else:
        doc.update(weights.model_dump(mode="json"))
    return orjson.dumps(doc, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2) + b"\n"


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


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


def leaderboard_table(result: RaceRunResult) -> Any:
    """A Rich table of the race leaderboard (rank, scores, richness, u16 weight)."""
    from rich.table import Table

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


def incentives_table(report: IncentiveReport) -> Any:
    """A Rich table of :func:`judge_run`'s per-agent results."""
    from rich.table import Table

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
        "final(richness)",
    ):
        table.add_column(col)
    for a in report.agents:
        table.add_row(
            a.agent,
            str(a.problems),
            str(a.judged),
            ", ".join(f"{k}:{v}" for k, v in a.verdict_statuses.items()) or "-",
            _fmt(a.success_rate),
            _fmt(a.reasoning_quality),
            _fmt(a.reasoning_coefficient),
            _fmt(a.score.final_judge if a.score else None),
            _fmt(a.richness.agentic_richness),
            _fmt(a.score.final_richness if a.score else None),
        )
    return table


__all__ = [
    "AgentIncentives",
    "IncentiveReport",
    "JudgeKind",
    "LeaderboardRow",
    "ProblemRichness",
    "RaceRunConfig",
    "RaceRunResult",
    "RichnessSummary",
    "incentives_table",
    "judge_run",
    "leaderboard_table",
    "load_incentives",
    "make_judge",
    "pooled_richness",
    "race_run",
    "trajectory_richness",
    "weights_document",
]
