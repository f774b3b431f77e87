"""Ingest: the mapping from an :class:`~shoparena.records.episode.Episode` to a
:class:`~shoparena.records.corpus.CorpusRecord` (every input record becomes one record or one
:class:`~shoparena.records.corpus.Quarantined` entry naming the record and the field).

The episodes come from their owners: an arena run directory (a firehose race) or an ``eval run`` directory
opened once by :func:`shoparena.arena.layout.open_episode_run`, whose handle also gives the
:class:`~shoparena.records.episode.ScoringInputs` that score them, and ``--from`` files
(:func:`shoparena.arena.episodes.file_episodes`). The structural evidence (richness, proofs, forgery, the
format and message rules) is the arena's (:mod:`shoparena.arena.evidence`); here it is copied onto the record
beside the labels of both scoring profiles, the chat messages and their training mask, and the provenance. A
firehose miner's harness truth (kind, teacher) is copied onto the record and never read by the filter.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from shoparena.agent_sdk.prompt import SYSTEM_PROMPT as AGENTIC_SYSTEM_PROMPT
from shoparena.arena.episodes import CONTENT_ERRORS, content_quarantine, file_episodes
from shoparena.arena.evidence import chat_evidence, episode_evidence
from shoparena.arena.layout import EpisodeRun, open_episode_run, run_episodes
from shoparena.formats.native import trajectory_to_chat
from shoparena.records.corpus import (
    CorpusLabels,
    CorpusMessage,
    CorpusProvenance,
    CorpusRecord,
    Quarantined,
)
from shoparena.records.episode import Episode
from shoparena.records.judge import JudgeStatus
from shoparena.records.problem import Problem
from shoparena.records.tools import CATALOGUE_TOOLS
from shoparena.records.trajectory import Trajectory
from shoparena.scoring.bench import ScoringBench
from shoparena.suites.bench import BenchCache, run_bench

Emit = Callable[[CorpusRecord | Quarantined], None]


def corpus_labels(bench: ScoringBench, problem_id: str, traj: Trajectory) -> CorpusLabels:
    """Labels from both profiles (empty when the problem or the catalogue is unknown to the bench)."""
    problem = bench.problems.get(problem_id)
    verdicts = bench.score(traj, problem) if problem is not None else None
    if verdicts is None:
        return CorpusLabels()
    strict, loose = verdicts.strict, verdicts.shoppingbench
    return CorpusLabels(
        success=strict.success,
        success_shoppingbench=loose.success,
        gt=strict.gt,
        rule=strict.rule,
        format=strict.format_score,
    )


def env_tools(problem: Problem | None) -> str:
    """The tools ``shoparena.env`` exposes for ``problem`` (web problems add ``web_search``), as JSON."""
    from shoparena.records.problem import Intent

    return _env_tools(problem is not None and problem.intent is Intent.WEB)


@functools.cache
def _env_tools(web: bool) -> str:
    from shoparena.env.environment import ShopEnv
    from shoparena.records.tools import CORE_TOOLS, WEB_SEARCH

    names = [*CORE_TOOLS, WEB_SEARCH] if web else list(CORE_TOOLS)
    env = ShopEnv(None, tools=names)  # type: ignore[arg-type]  # schemas only; no tool runs
    return json.dumps([s.to_openai() for s in env.tool_schemas()], ensure_ascii=False, sort_keys=True)


def _text(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def to_corpus_messages(raw: list[dict[str, Any]], step_trainable: list[bool]) -> list[CorpusMessage]:
    """OpenAI-style dicts → contract messages; the k-th assistant turn is trainable iff step_trainable[k]."""
    out: list[CorpusMessage] = []
    k = 0
    for message in raw:
        role = message.get("role")
        calls = message.get("tool_calls") or None
        if calls:
            calls = [
                {
                    "id": str(c.get("id") or ""),
                    "type": "function",
                    "function": {
                        "name": str((c.get("function") or {}).get("name") or ""),
                        "arguments": _text((c.get("function") or {}).get("arguments")) or "{}",
                    },
                }
                for c in calls
                if isinstance(c, dict)
            ]
        trainable = False
        if role == "assistant":
            trainable = step_trainable[k] if k < len(step_trainable) else True
            k += 1
        out.append(
            CorpusMessage(
                role=role,
                content=_text(message.get("content")),
                reasoning_content=_text(message.get("reasoning_content")) or None,
                tool_calls=calls,
                tool_call_id=_text(message.get("tool_call_id")),
                name=_text(message.get("name")),
                trainable=trainable,
            )
        )
    return out


def _step_trainable(traj: Trajectory, matched: list[bool], final_llm: bool | None) -> list[bool]:
    """Per step: every catalogue call matched an LLM request, and a recommend came from the LLM."""
    flags: list[bool] = []
    queue = list(matched)
    for step in traj.steps:
        ok = True
        for call in step.tool_calls:
            if call.name in CATALOGUE_TOOLS:
                ok = ok and (queue.pop(0) if queue else False)
            elif call.name == "recommend_product" and final_llm is False:
                ok = False
        flags.append(ok)
    return flags


def _category(problem: Problem | None, traj: Trajectory) -> tuple[str, str]:
    if problem is not None:
        return problem.intent.value, str(problem.difficulty or "")
    return str(traj.meta.get("category") or "unknown"), str(traj.meta.get("difficulty") or "")


def corpus_provenance(episode: Episode) -> CorpusProvenance:
    """The record's provenance: where the episode was read and, for an arena run, its race, agent and
    judge verdict."""
    origin = episode.origin
    if origin.source_format != "arena_run":
        return CorpusProvenance(
            source_format=origin.source_format,
            source_path=origin.source_path,
            source_line=origin.source_line,
            validator=origin.dataset,
        )
    verdict, truth = episode.verdict, episode.miner
    return CorpusProvenance(
        source_format="arena_run",
        source_path=origin.source_path,
        source_line=origin.source_line,
        race_id=origin.race_id,
        eval_run_id=origin.arena_run_id,
        agent=origin.agent,
        agent_version=f"{origin.agent}@{origin.agent_sha256[:12] if origin.agent_sha256 else ''}",
        miner_hotkey_hash=truth.hotkey_hash if truth is not None else None,
        validator="shoparena",
        judge_status=verdict.status.value if verdict is not None else None,
        judge_model=(verdict.model or verdict.judge or None) if verdict is not None else None,
        judge_prompt_version=None,
        judge_parse_stage=verdict.parse_stage if verdict is not None else None,
        judge_explanation=verdict.explanation if verdict is not None else None,
        scorer_profile="strict",
    )


def record_from_episode(episode: Episode, scoring: ScoringBench) -> CorpusRecord:
    """Evidence, labels, messages and provenance of one episode (never raises for agent-controlled
    content of a trusted run; a file line's content errors are the caller's quarantine)."""
    traj, problem_id = episode.trajectory, episode.problem_id
    problem = scoring.problems.get(problem_id)
    provenance = corpus_provenance(episode)
    if traj.source_format == "chat":
        return _chat_record(episode, provenance, problem)
    succeeded = traj.status.value == "SUCCESS"
    labels = corpus_labels(scoring, problem_id, traj) if succeeded else CorpusLabels(success=False)
    evidence, matched, agent_model = episode_evidence(episode, labels.format)
    labels.agentic_richness = evidence.richness_nonce
    labels.richness_pending = evidence.richness_pending
    nonces, dispatches = evidence.nonce_counts, evidence.dispatches
    labels.nonce_valid_ratio = (
        round(nonces.get("valid", 0) / dispatches, 4) if dispatches and nonces else None
    )
    if agent_model is not None:
        provenance.agent_model = agent_model
    category, difficulty = _category(problem, traj)
    # The trusted log keeps no message texts, so a trajectory without its own system turn gets the built-in
    # agentic miner's: the same text the evaluator's native format sends, so a student is evaluated under
    # the prompt it was trained on.
    system = traj.system_prompt or AGENTIC_SYSTEM_PROMPT
    raw = trajectory_to_chat(traj, None, system_prompt=system) if traj.steps else []
    messages = to_corpus_messages(raw, _step_trainable(traj, matched, evidence.final_llm_emitted))
    verdict, truth = episode.verdict, episode.miner
    if verdict is not None and verdict.status is JudgeStatus.OK and verdict.score is not None:
        labels.judge_q = verdict.score
    return CorpusRecord(
        record_id=f"{episode.origin.run_id}:{problem_id}:{episode.rollout_idx}",
        run_id=episode.origin.run_id,
        problem_id=problem_id,
        rollout_idx=episode.rollout_idx,
        query=problem.query if problem is not None else traj.query,
        category=category,
        difficulty=difficulty,
        messages=messages,
        tools=env_tools(problem),
        evidence=evidence,
        labels=labels,
        provenance=provenance,
        gt_product_ids=list(problem.gt_ids) if problem is not None else [],
        miner_kind=truth.kind if truth is not None else "",
        teacher=truth.teacher if truth is not None else "",
    )


def _chat_record(episode: Episode, provenance: CorpusProvenance, problem: Problem | None) -> CorpusRecord:
    traj = episode.trajectory
    row = traj.meta.get("chat_row") or {}
    raw = episode.chat_messages or []
    tools = row.get("tools") or []
    openai_tools = [
        t
        if "function" in t
        else {"type": "function", "function": {k: v for k, v in t.items() if k != "type"}}
        for t in tools
        if isinstance(t, dict)
    ]
    category, difficulty = _category(problem, traj)
    query = next((str(m.get("content")) for m in raw if m.get("role") == "user"), traj.query)
    run_id, problem_id, rollout_idx = episode.origin.run_id, episode.problem_id, episode.rollout_idx
    return CorpusRecord(
        record_id=f"{run_id}:{problem_id}:{rollout_idx}",
        run_id=run_id,
        problem_id=problem_id,
        rollout_idx=rollout_idx,
        query=problem.query if problem is not None else query,
        category=category,
        difficulty=difficulty,
        messages=to_corpus_messages(raw, []),
        tools=json.dumps(openai_tools, ensure_ascii=False, sort_keys=True),
        evidence=chat_evidence(raw),
        provenance=provenance,
        gt_product_ids=list(problem.gt_ids) if problem is not None else [],
    )


# --- sources ------------------------------------------------------------------------------------------------


def ingest_episode(item: Episode | Quarantined, scoring: ScoringBench) -> CorpusRecord | Quarantined:
    """One episode → its record; a quarantine entry passes through. A ``--from`` line (or an eval run's
    envelope) whose content fails while its record is built is quarantined naming the line and the field;
    an arena run's episode is a trusted run's, so an error there is raised."""
    if isinstance(item, Quarantined):
        return item
    if item.origin.source_format == "arena_run":
        return record_from_episode(item, scoring)
    try:
        return record_from_episode(item, scoring)
    except CONTENT_ERRORS as exc:
        return content_quarantine(item.origin, exc)


def ingest_file(path: Path, scoring: ScoringBench, emit: Emit) -> None:
    """Each line of a file of envelopes / bare lists / SB rollouts / chat rows → one record or quarantine."""
    for item in file_episodes(path, f"file-{path.stem}"):
        emit(ingest_episode(item, scoring))


def load_run_context(run_dir: Path, cache: BenchCache) -> tuple[ScoringBench, list[str]]:
    """The bench that scores a run directory's episodes (its suite and index, opened once per path), with
    notes on what is missing.

    Raises:
        RunFileError: the run's config is torn, or names a suite or index that exists but cannot be read
            (the message names the config and the key). ManifestError: a torn manifest.
    """
    opened: list[str] = []
    run = open_episode_run(run_dir, opened)
    bench, notes = _run_bench(run, cache)
    return bench, notes + opened


def _run_bench(run: EpisodeRun, cache: BenchCache) -> tuple[ScoringBench, list[str]]:
    return run_bench(run.scoring_inputs(), config_path=run.config_path, where=run.path, cache=cache)


def ingest_run_dir(run_dir: Path, emit: Emit, cache: BenchCache) -> list[str]:
    """Every episode of an arena run directory (a firehose race) or an eval run directory → one record or
    quarantine; returns the notes on what is missing. The directory is opened once
    (:func:`~shoparena.arena.layout.open_episode_run`).

    Raises:
        RunFileError: see :meth:`ArenaRun.read_episodes <shoparena.arena.layout.ArenaRun.read_episodes>`.
    """
    opened: list[str] = []
    run = open_episode_run(run_dir, opened)
    bench, notes = _run_bench(run, cache)
    notes += opened
    for item in run_episodes(run, notes):
        emit(ingest_episode(item, bench))
    return notes


__all__ = [
    "corpus_labels",
    "corpus_provenance",
    "env_tools",
    "ingest_episode",
    "ingest_file",
    "ingest_run_dir",
    "load_run_context",
    "record_from_episode",
    "to_corpus_messages",
]
