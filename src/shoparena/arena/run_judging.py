"""Judge an arena run directory: verdicts, richness and both final scores per agent.

:func:`judge_run` adds to a run directory (``shoparena arena run`` layout):

- ``agents/<name>/judge.jsonl``: one :class:`~shoparena.judge.records.JudgeVerdict` per SUCCESS envelope, in
  suite order (FAILED / TIMED_OUT envelopes are not judged, as in ORO; they are counted, never scored 0 by a
  judge);
- ``agents/<name>/incentives.json`` and ``incentives.json``: per agent the reasoning quality q, the
  coefficient, ``final_judge = round(success_rate x coeff, 4)`` (ORO v1.0.79's validator score), the
  agentic-richness variant ``final_richness = round(base x (0.3 + 0.7 x richness), 4)`` and the base.

Richness comes from :mod:`shoparena.arena.richness` (the proxy's trusted logs only), pooled over the agent's
SUCCESS problems.
"""

from __future__ import annotations

import json
from collections import Counter
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from shoparena.arena.layout import ArenaRun, open_arena_run
from shoparena.arena.proxy_log import read_trusted_log
from shoparena.arena.richness import ProblemRichness, RichnessSummary, pooled_richness, trajectory_richness
from shoparena.judge.calibration import CalibrationReport, calibrate
from shoparena.judge.coefficient import (
    ArenaScore,
    combine_scores,
    quality_scores,
    reasoning_coefficient,
    reasoning_quality,
)
from shoparena.judge.llm_judge import FailureAccounting
from shoparena.judge.records import JudgeVerdict
from shoparena.records.race import ArenaRunFile
from shoparena.records.unicode import dump_json
from shoparena.runs.files import iter_records
from shoparena.runs.manifest import ArenaManifest

ScoreVariant = Literal["judge", "richness", "base"]


class JudgeKind(StrEnum):
    """Which judge grades the trajectories."""

    RUBRIC = "rubric"
    LLM = "llm"


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
    failure_accounting: FailureAccounting = Field(
        default="verdicts",
        description="How judge failures counted (oro or verdicts); reports written before the option "
        "existed used verdicts.",
    )
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


def _suite_queries(run_dir: Path, config: ArenaRunFile) -> tuple[dict[str, str], list[str], str | None]:
    """(problem id → query, suite order, note) from the suite the run used (never agent-written text)."""
    suite = config.suite
    if not suite or not Path(suite).exists():
        return {}, [], f"suite {suite!r} not found: judge queries taken from the trajectories"
    from shoparena.arena.run_directory import load_problems

    problems, _, _ = load_problems(Path(suite))
    return {p.problem_id: p.query for p in problems}, [p.problem_id for p in problems], None


def _agent_version(name: str, manifest: ArenaManifest | None) -> tuple[str, str | None]:
    ref = manifest.agents.get(name) if manifest is not None else None
    if ref is None:
        return name, None
    return f"{name}@{ref.sha256[:12]}", ref.path


def judge_run(
    run_dir: str | Path,
    judge: JudgeKind | str = JudgeKind.RUBRIC,
    backend_spec: str | None = None,
    *,
    backend: Any = None,
    scoring_profile: str = "strict",
    llm_config: Any = None,
    failure_accounting: FailureAccounting = "oro",
) -> IncentiveReport:
    """Judge every SUCCESS trajectory of a run directory and write verdicts, richness and final scores.

    Args:
        run_dir: An ``arena run`` directory.
        judge: ``rubric`` (offline, mechanical) or ``llm``.
        backend_spec: Chat backend spec for the LLM judge (``transformers:DIR``, ``openai:URL#model``).
        backend: A ready backend for the LLM judge (tests); overrides ``backend_spec``.
        scoring_profile: Scoring profile of ``scores.json`` whose ``success_rate`` is the base (``strict`` =
            ORO).
        llm_config: :class:`~shoparena.judge.llm_judge.LLMJudgeConfig` for the LLM judge.
        failure_accounting: How judge failures count in q and the run-failure rule (``oro``: ORO's
            validator; ``verdicts``: failures left out of q, verdicts counted).

    Returns:
        The report (also written to ``incentives.json``).

    Raises:
        FileNotFoundError: ``run_dir`` has no ``config.yaml`` (not a run directory).
    """
    run = open_arena_run(run_dir)
    if not run.has_config():
        raise FileNotFoundError(f"{run.path}: not an arena run directory (no {run.config_path.name})")
    config = run.config()
    scores = json.loads(run.scores_path.read_text(encoding="utf-8")) if run.scores_path.exists() else {}
    queries, order, note = _suite_queries(run.path, config)
    judge_obj, judge_model = make_judge(judge, backend_spec, backend=backend, llm_config=llm_config)
    judging = _Judging(
        run, judge_obj, str(JudgeKind(judge).value), judge_model, queries, order, failure_accounting
    )
    entries = [judging.agent(name, scores, scoring_profile) for name in run.agents()]
    report = IncentiveReport(
        run_dir=str(run.path),
        run_id=run.manifest.run_id if run.manifest is not None else config.run_id,
        judge=judging.kind,
        judge_model=judge_model,
        profile=scoring_profile,
        failure_accounting=failure_accounting,
        agents=entries,
        notes=[note] if note else [],
    )
    run.incentives_path.write_text(dump_json(report, indent=2), encoding="utf-8")
    return report


class _Judging:
    """One judge over the agents of one run directory (suite order, trusted logs, richness)."""

    def __init__(
        self,
        run: ArenaRun,
        judge: Any,
        kind: str,
        judge_model: str | None,
        queries: dict[str, str],
        order: list[str],
        failure_accounting: FailureAccounting,
    ) -> None:
        self.run, self.judge, self.kind, self.judge_model = run, judge, kind, judge_model
        self.queries, self.rank = queries, {pid: i for i, pid in enumerate(order)}
        self.failure_accounting = failure_accounting

    def verdicts(
        self, name: str, envelopes: list[dict[str, Any]]
    ) -> tuple[list[JudgeVerdict], list[ProblemRichness], list[str]]:
        """Verdicts and richness of the agent's SUCCESS envelopes, with notes on the unreadable ones."""
        from shoparena.formats.oro import from_oro_envelope
        from shoparena.judge.inputs import build_judge_input

        if hasattr(self.judge, "new_run"):
            self.judge.new_run()
        verdicts: list[JudgeVerdict] = []
        richness_items: list[ProblemRichness] = []
        notes: list[str] = []
        for envelope in envelopes:
            if envelope.get("status") != "SUCCESS":
                continue
            pid = str(envelope.get("problem_id"))
            trusted = read_trusted_log(self.run.proxy_log_path(name, pid))
            richness_items.append(trajectory_richness(pid, trusted))
            try:
                trajectory = from_oro_envelope(envelope)
            except Exception as err:  # an unreadable envelope is reported, not judged as 0
                notes.append(f"{pid}: envelope unreadable ({err}); not judged")
                continue
            query = self.queries.get(pid, trajectory.query)
            verdicts.append(self.judge.judge(build_judge_input(query, trusted, trajectory), problem_id=pid))
        return verdicts, richness_items, notes

    def agent(self, name: str, scores: dict[str, Any], scoring_profile: str) -> AgentIncentives:
        """Judge one agent; writes its ``judge.jsonl`` and ``incentives.json``."""
        envelopes = self.run.envelopes(name)
        # Suite order, so judge.jsonl does not depend on completion order.
        envelopes.sort(
            key=lambda e: (self.rank.get(str(e.get("problem_id")), len(self.rank)), str(e.get("problem_id")))
        )
        verdicts, richness_items, agent_notes = self.verdicts(name, envelopes)
        self.run.write_verdicts(name, verdicts)
        statuses = Counter(str(e.get("status")) for e in envelopes)
        success_rate = ((scores.get(name) or {}).get(scoring_profile) or {}).get("success_rate")
        richness = pooled_richness(richness_items)
        failure_accounting = self.failure_accounting
        q = reasoning_quality(quality_scores(verdicts, failure_accounting))
        score = None
        if success_rate is not None:
            score = combine_scores(
                float(success_rate), verdicts, richness.agentic_richness, accounting=failure_accounting
            )
        else:
            agent_notes.append(
                f"no {scoring_profile!r} success_rate in scores.json: final scores not computed"
            )
        version, path = _agent_version(name, self.run.manifest)
        entry = AgentIncentives(
            agent=name,
            agent_version_id=version,
            agent_path=path,
            judge=self.kind,
            judge_model=self.judge_model,
            profile=scoring_profile,
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
        (self.run.agent_dir(name) / self.run.incentives_path.name).write_text(
            dump_json(entry, indent=2), encoding="utf-8"
        )
        return entry


def load_incentives(run_dir: str | Path) -> IncentiveReport | None:
    """The ``incentives.json`` of a run directory, or None when it has not been judged."""
    path = ArenaRun.at(run_dir).incentives_path
    if not path.exists():
        return None
    return IncentiveReport.model_validate_json(path.read_text(encoding="utf-8"))


def why_no_winner(run_dir: str | Path) -> str:
    """One sentence on why a finished race has no winner: the qualifying threshold and what the best
    candidate scored (with its success rate, judge quality and richness when the run was judged)."""
    run = ArenaRun.at(run_dir)
    doc = run.race()
    if doc is None:
        return "the race has not finished"
    qualifying = doc.qualifying
    scored = [c for c in (*qualifying.qualifiers, *qualifying.rejected) if c.qualifying_score is not None]
    if qualifying.qualifiers:
        finished = [q for q in doc.race.qualifiers if q.race_score is not None]
        if len(finished) == 1:  # ORO's weights: fewer than two finishers, the burn takes everything
            only = finished[0]
            return (
                f"only one miner finished the race ({only.hotkey or only.agent_version_id}, race score "
                f"{only.race_score:.4f}); with fewer than two finishers ORO's weights give it all to the burn"
            )
        notes = "; ".join(doc.notes)
        return "the qualifiers raced, but none finished with a race score" + (f" ({notes})" if notes else "")
    if not scored:
        return f"no miner had a qualifying score to compare with the threshold {qualifying.threshold:g}"
    best = max(scored, key=lambda c: c.qualifying_score or 0.0)
    name = best.hotkey or best.agent_version_id.split("@", 1)[0]
    detail = ""
    try:
        incentives = load_incentives(run_dir)
    except ValueError:  # a torn incentives.json: the threshold and the score still say why
        incentives = None
    entry = next((a for a in incentives.agents if a.agent == name), None) if incentives else None
    if entry is not None and entry.success_rate is not None:
        detail = (
            f" (success rate {entry.success_rate:.3f}, judge quality {entry.reasoning_quality:.2f} "
            f"× coefficient {entry.reasoning_coefficient:.4f}, richness {entry.richness.agentic_richness})"
        )
    return (
        f"no miner reached the qualifying threshold {qualifying.threshold:g}: the best, {name}, scored "
        f"{best.qualifying_score:.4f}{detail}"
    )


def load_run_verdicts(run_dir: str | Path) -> dict[str, JudgeVerdict]:
    """Every verdict of an arena run directory, keyed ``"<agent>/<problem_id>"``.

    Reads each agent's verdicts (written by ``shoparena arena judge``). A verdict without a problem id is
    keyed by its line number (``"<agent>/#<n>"``).

    Raises:
        FileNotFoundError: ``run_dir`` has no agents folder.
        ValueError: A line is not a JudgeVerdict (``RunFileError``), or an (agent, problem_id) repeats; the
            message names the file and line.
    """
    run = ArenaRun.at(run_dir)
    if not run.agents_dir.is_dir():
        raise FileNotFoundError(f"{run_dir}: not an arena run directory (no {run.agents_dir.name}/ folder)")
    verdicts: dict[str, JudgeVerdict] = {}
    for agent in run.agent_folders():
        path = run.judge_path(agent)
        if not path.is_file():
            continue
        for number, verdict in iter_records(path, JudgeVerdict):
            key = f"{agent}/{verdict.problem_id}" if verdict.problem_id else f"{agent}/#{number}"
            if key in verdicts:
                raise ValueError(f"{path}:{number}: JudgeVerdict.problem_id {verdict.problem_id!r} repeats")
            verdicts[key] = verdict
    return verdicts


def pair_run_verdicts(
    run_a: str | Path, run_b: str | Path
) -> tuple[dict[str, JudgeVerdict], dict[str, JudgeVerdict]]:
    """The verdicts of two judgings of the same trajectories, both keyed ``"<agent>/<problem_id>"``.

    ``judge_run`` overwrites the verdicts in place, so each judge runs on its own copy of the run
    directory. Keys present on one side only stay in the result: :func:`calibrate` counts them unpaired.
    """
    return load_run_verdicts(run_a), load_run_verdicts(run_b)


def calibrate_runs(run_a: str | Path, run_b: str | Path) -> CalibrationReport:
    """:func:`~shoparena.judge.calibration.calibrate` over two judged copies of one run, pairing by
    (agent, problem_id)."""
    return calibrate(*pair_run_verdicts(run_a, run_b))


__all__ = [
    "AgentIncentives",
    "IncentiveReport",
    "JudgeKind",
    "ScoreVariant",
    "calibrate_runs",
    "judge_run",
    "load_incentives",
    "load_run_verdicts",
    "make_judge",
    "pair_run_verdicts",
    "why_no_winner",
]
