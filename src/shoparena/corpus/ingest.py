"""Ingest: every input record becomes one :class:`~shoparena.records.corpus.CorpusRecord` or one
:class:`~shoparena.records.corpus.Quarantined` entry naming the record and the field.

Sources:

- arena run directories (``shoparena arena run`` / ``arena firehose`` layout): envelopes, the proxy's trusted
  per-problem logs, ``judge.jsonl`` verdicts, and the suite + index of ``config.yaml`` to score each
  trajectory under both profiles; a firehose's ``agents/<name>/miner.json`` gives the harness truth (miner
  kind, teacher), copied onto the record and never read by the filter;
- files of ORO envelopes (also bare dialogue lists), ShoppingBench rollouts, SN15 chat rows (``--from``),
  detected per line by :func:`shoparena.formats.io.parse_trajectory_value`; their evidence comes from the
  agent-written ``extra_info.proxy_calls`` (envelopes) or from the messages (chat rows).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson

from shoparena.agent_sdk.prompt import SYSTEM_PROMPT as AGENTIC_SYSTEM_PROMPT
from shoparena.arena.layout import ArenaRun
from shoparena.arena.proxy_log import (
    is_inference,
    llm_requested,
    pending_target_walk,
    summaries,
)
from shoparena.corpus.structure import forgery_findings, message_rule, richness_evidence
from shoparena.formats._common import FormatError
from shoparena.formats.io import parse_trajectory_value
from shoparena.formats.native import trajectory_to_chat
from shoparena.formats.oro import all_proxy_calls
from shoparena.jsonl import iter_jsonl, iter_raw_lines
from shoparena.records.corpus import (
    CorpusLabels,
    CorpusMessage,
    CorpusProvenance,
    CorpusRecord,
    Quarantined,
    StructuralEvidence,
)
from shoparena.records.judge import JudgeStatus
from shoparena.records.problem import Problem
from shoparena.records.proxy_log import ProxyLogEntry, proxy_entries
from shoparena.records.race import ArenaRunFile
from shoparena.records.tools import CATALOGUE_TOOLS
from shoparena.records.trajectory import Trajectory
from shoparena.runs.files import RunFileError
from shoparena.runs.layout import EnvelopeLogRun, open_run
from shoparena.scoring.bench import ScoringBench
from shoparena.scoring.lookup import MemoLookup
from shoparena.suites.bench import BenchCache

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


def _format(traj: Trajectory) -> tuple[bool, str]:
    from shoparena.scoring.format_reward import step_format
    from shoparena.scoring.profiles import get_profile

    strict = get_profile("strict")
    for step in traj.steps:
        if step_format(step, strict) < 1.0:
            return False, f"steps[{step.index - 1}]: fails the strict format check"
    return True, ""


def _category(problem: Problem | None, traj: Trajectory) -> tuple[str, str]:
    if problem is not None:
        return problem.intent.value, str(problem.difficulty or "")
    return str(traj.meta.get("category") or "unknown"), str(traj.meta.get("difficulty") or "")


def record_from_trajectory(
    traj: Trajectory,
    *,
    run_id: str,
    problem_id: str,
    rollout_idx: int,
    trusted: Sequence[ProxyLogEntry | Mapping[str, Any]] | None,
    scoring: ScoringBench,
    provenance: CorpusProvenance,
) -> CorpusRecord:
    """Evidence, labels and messages of one parsed trajectory (never raises for agent-controlled content).

    ``trusted`` is the proxy's log for this problem (raw objects are read as
    :class:`~shoparena.records.proxy_log.ProxyLogEntry`); None for trajectories from files, whose evidence is
    the agent-written ``extra_info.proxy_calls``.
    """
    problem = scoring.problems.get(problem_id)
    status = traj.status.value
    if traj.source_format == "chat":
        return _chat_record(traj, run_id, problem_id, rollout_idx, provenance, problem)
    claimed = summaries(proxy_entries(all_proxy_calls(traj)))
    walk = None  # the flat log's walk, which the richness reuses
    if trusted is not None:
        trusted = summaries(proxy_entries(trusted))
        log, source = trusted, "trusted_proxy"
        walk = pending_target_walk([trusted])
        richness_a, matched, inference = walk
        forged = forgery_findings(trusted, claimed)
    else:
        log, source = claimed, "envelope"
        per_step = [proxy_entries(s.proxy_calls) for s in traj.steps]
        richness_a, matched, inference = pending_target_walk(per_step)
        forged = forgery_findings(claimed, [])
    # Proofs are the proxy's own findings: only a trusted log carries them.
    richness_b, nonces, dispatches, richness_proof = richness_evidence(
        log, proofs=trusted is not None, walk=walk
    )
    has_call_log = bool(log) or trusted is not None
    recommended = traj.last_recommendation() is not None
    final_llm = llm_requested(log, "recommend_product") if recommended else False
    succeeded = status == "SUCCESS"
    labels = corpus_labels(scoring, problem_id, traj) if succeeded else CorpusLabels(success=False)
    if not traj.steps:
        format_ok, format_detail = False, "no steps"
    elif labels.format is not None:  # the strict scorer already checked every step (mean of step scores)
        format_ok = labels.format >= 1.0
        format_detail = "" if format_ok else "a step fails the strict format check"
    else:
        format_ok, format_detail = _format(traj)
    evidence = StructuralEvidence(
        envelope_status=status,
        has_dialogue=not traj.dialogue_is_null and bool(traj.steps),
        log_source=source,  # type: ignore[arg-type]
        inference_calls=inference if has_call_log else None,
        dispatches=dispatches,
        nonce_counts=nonces,
        richness_nonce=richness_b,
        richness_proof=richness_proof,
        richness_pending=richness_a if dispatches else None,
        dispatch_matched=matched,
        forged=forged,
        final_llm_emitted=final_llm,
        format_ok=format_ok,
        format_detail=format_detail,
    )
    labels.agentic_richness = richness_b
    labels.richness_pending = evidence.richness_pending
    labels.nonce_valid_ratio = (
        round(nonces.get("valid", 0) / dispatches, 4) if dispatches and nonces else None
    )
    models = [str(e.json_data.get("model")) for e in log if is_inference(e) and e.json_data is not None]
    provenance.agent_model = models[0] if models else provenance.agent_model
    category, difficulty = _category(problem, traj)
    # The trusted log keeps no message texts, so a trajectory without its own system turn gets the built-in
    # agentic miner's: the same text the evaluator's native format sends, so a student is evaluated under
    # the prompt it was trained on.
    system = traj.system_prompt or AGENTIC_SYSTEM_PROMPT
    raw = trajectory_to_chat(traj, None, system_prompt=system) if traj.steps else []
    messages = to_corpus_messages(raw, _step_trainable(traj, matched, final_llm))
    return CorpusRecord(
        record_id=f"{run_id}:{problem_id}:{rollout_idx}",
        run_id=run_id,
        problem_id=problem_id,
        rollout_idx=rollout_idx,
        query=problem.query if problem is not None else traj.query,
        category=category,
        difficulty=difficulty,
        messages=messages,
        tools=env_tools(problem),
        evidence=evidence,
        labels=labels,
        provenance=provenance,
        gt_product_ids=list(problem.gt_ids) if problem is not None else [],
    )


def _chat_record(
    traj: Trajectory,
    run_id: str,
    problem_id: str,
    rollout_idx: int,
    provenance: CorpusProvenance,
    problem: Problem | None,
) -> CorpusRecord:
    row = traj.meta.get("chat_row") or {}
    raw = row.get("messages_raw") or []
    ok, detail = message_rule(raw)
    calls = [c for m in raw if m.get("role") == "assistant" for c in (m.get("tool_calls") or [])]
    names = [str((c.get("function") or {}).get("name")) for c in calls if isinstance(c, dict)]
    dispatches = sum(1 for n in names if n in CATALOGUE_TOOLS)
    evidence = StructuralEvidence(
        envelope_status="CHAT",
        has_dialogue=any(m.get("role") == "assistant" for m in raw),
        log_source="messages",
        dispatches=dispatches,
        final_llm_emitted="recommend_product" in names,
        message_rule_ok=ok,
        message_rule_detail=detail,
    )
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
        evidence=evidence,
        provenance=provenance,
        gt_product_ids=list(problem.gt_ids) if problem is not None else [],
    )


# --- files -------------------------------------------------------------------------------------------------


def _problem_id_of(traj: Trajectory, obj: Any, line_no: int) -> str:
    from shoparena.records.problem import problem_id_for_query

    if traj.problem_id:
        return str(traj.problem_id)
    if isinstance(obj, dict) and obj.get("id"):
        return str(obj["id"])
    return problem_id_for_query(traj.query) if traj.query else f"line{line_no}"


def ingest_file(path: Path, scoring: ScoringBench, emit: Emit) -> None:
    """Each line of a file of envelopes / bare lists / SB rollouts / chat rows → one record or quarantine."""
    _ingest_lines(path, f"file-{path.stem}", scoring, emit)


def _ingest_lines(path: Path, run_id: str, scoring: ScoringBench, emit: Emit) -> None:
    """Each JSON line of ``path`` → one record or quarantine (a line that is not JSON is quarantined)."""
    counts: dict[str, int] = {}
    for line_no, raw in iter_raw_lines(path):
        try:
            obj = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            emit(_line_quarantine(path, line_no, "", f"invalid JSON: {exc}"))
            continue
        emit(_ingest_value(obj, path, line_no, run_id, counts, scoring))


def _line_quarantine(source: Path, line_no: int, field: str, reason: str) -> Quarantined:
    """A quarantine entry for an input line that is not a usable record at all."""
    return Quarantined(source=str(source), line=line_no, record=f"line {line_no}", field=field, reason=reason)


def _ingest_value(
    obj: Any, path: Path, line_no: int, run_id: str, counts: dict[str, int], scoring: ScoringBench
) -> CorpusRecord | Quarantined:
    label = f"line {line_no}"
    if isinstance(obj, dict) and isinstance(obj.get("id"), str):
        label = f"line {line_no} (id {obj['id']})"
    elif isinstance(obj, dict) and isinstance(obj.get("problem_id"), str):
        label = f"line {line_no} (problem {obj['problem_id']})"
    try:
        traj = parse_trajectory_value(obj, line_no=line_no)
        if traj.source_format == "chat":
            traj.meta["chat_row"]["messages_raw"] = obj["messages"]
        pid = _problem_id_of(traj, obj, line_no)
        idx = counts.get(pid, 0)
        counts[pid] = idx + 1
        prov = CorpusProvenance(source_format=traj.source_format, source_path=str(path), source_line=line_no)
        if isinstance(obj, dict) and isinstance(obj.get("source"), dict):
            prov.validator = str(obj["source"].get("dataset") or "") or None
        return record_from_trajectory(
            traj,
            run_id=run_id,
            problem_id=pid,
            rollout_idx=idx,
            trusted=None,
            scoring=scoring,
            provenance=prov,
        )
    except FormatError as exc:
        return Quarantined(
            source=str(path), line=line_no, record=label, field=exc.path or "(record)", reason=exc.detail
        )
    except (ValueError, TypeError, KeyError, AttributeError, IndexError) as exc:
        # Pydantic validation of agent content that slipped past the adapter: still a reasoned quarantine.
        return Quarantined(
            source=str(path),
            line=line_no,
            record=label,
            field=_error_field(exc),
            reason=f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}",
        )


def _error_field(exc: Exception) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors):
        try:
            first = errors()[0]
            return ".".join(str(p) for p in first.get("loc", ())) or "(record)"
        except Exception:
            return "(record)"
    return "(record)"


# --- arena run directories ---------------------------------------------------------------------------------


def _read_jsonl(path: Path) -> Iterator[tuple[int, Any]]:
    if not path.exists():
        return
    for line_no, raw in iter_raw_lines(path):
        try:
            yield line_no, orjson.loads(raw)
        except orjson.JSONDecodeError:
            yield line_no, None


def load_run_context(run_dir: Path, cache: BenchCache) -> tuple[ScoringBench, list[str]]:
    """Problems of the run's suite and its index (opened once per path), with notes on what is missing.

    Raises:
        RunFileError: ``config.yaml`` is torn or not an arena run config, or names a suite or index that
            exists but cannot be read (the message names the config and the key).
    """
    return _run_context(ArenaRun.at(run_dir), cache)


def _run_context(run: ArenaRun, cache: BenchCache) -> tuple[ScoringBench, list[str]]:
    notes: list[str] = []
    config_path = run.config_path
    if run.has_config():
        config = run.config()
    else:
        config = ArenaRunFile()
        notes.append(f"{config_path}: missing; trajectories are not scored")
    context = ScoringBench(similarity=config.similarity)
    suite = config.suite
    if suite and Path(suite).exists():
        try:
            context.add_problems(cache.suite(suite))
        except (ValueError, OSError) as exc:
            raise RunFileError(f"{config_path}: suite: {suite}: {_first_line(exc)}") from None
    else:
        notes.append(f"{run.path}: suite {suite!r} not readable; trajectories are not scored")
    index = config.index
    if index and Path(index).exists():
        try:
            # Products are read once per id for the whole run (both profiles, every miner's trajectory).
            context.lookup = MemoLookup(cache.index(index))
        except (ValueError, OSError) as exc:
            raise RunFileError(
                f"{config_path}: index: {index} is not an index ({_first_line(exc)})"
            ) from None
    else:
        notes.append(f"{run.path}: index {index!r} not readable; trajectories are not scored")
    return context, notes


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _trusted_log(path: Path) -> tuple[list[ProxyLogEntry], str | None]:
    """The trusted log of one problem and what is wrong with it: missing, or a torn / foreign line. The
    proxy creates the file when the episode starts, so a missing or damaged one is lost evidence (never
    read as an empty log, which would make an honest trajectory look forged)."""
    values = []
    try:  # opened, not looked up first: one system call fewer per problem
        for line_no, value in iter_jsonl(path):  # parsed once (was: checked, then read again)
            if not isinstance(value, dict):
                return [], f"{path.name}:{line_no}: torn or not an object"
            values.append(value)
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return [], f"{path.name}: missing"
    return summaries(proxy_entries(values)), None


def _agents(run: ArenaRun) -> tuple[list[str], list[str]]:
    """(agents the manifest lists, agent folders it does not list). Without a manifest, every folder."""
    folders = run.agent_folders()
    if run.manifest is None:
        return folders, []
    listed = list(run.manifest.agents)
    for agent in listed:
        if not run.output_path(agent).is_file():
            raise RunFileError(
                f"{run.manifest_path}: agents.{agent}: listed, but {run.output_path(agent)} does not exist"
            )
    return listed, [a for a in folders if a not in run.manifest.agents]


def _ingest_envelope_run(run: EnvelopeLogRun, context: ScoringBench, emit: Emit) -> list[str]:
    """An ``eval run`` directory: each envelope of its log (a policy's scored episodes, the input of
    rejection sampling) → one record or quarantine, evidence from the envelope as for ``--from`` files."""
    source = run.need(run.envelope_log, "an eval run directory without its episodes")
    _ingest_lines(source, f"{run.run_id}/{run.kind}", context, emit)
    return []


def _open_source_run(run_dir: Path, notes: list[str]) -> ArenaRun | EnvelopeLogRun:
    """The run directory as its handle: an arena run (a firehose race) or an eval run; an arena directory
    without a manifest is read by its folders (noted)."""
    run = ArenaRun.at(run_dir)
    if not run.has_manifest():  # torn or foreign: an error below, not a guess from the folder names
        notes.append(f"{run.manifest_path}: missing; run id from the folder name, agents/ listed")
        return run
    handle = open_run(run_dir)
    if handle.kind == "eval" and isinstance(handle, EnvelopeLogRun):
        return handle
    if not isinstance(handle, ArenaRun):
        raise RunFileError(
            f"{handle.manifest_path}: kind: a {handle.kind!r} run directory; corpus build reads "
            "arena runs (firehose races) and eval runs"
        )
    return handle


def ingest_run_dir(run_dir: Path, emit: Emit, cache: BenchCache) -> list[str]:
    """Every envelope of every agent of an arena run directory → one record or quarantine.

    An agent folder the manifest does not list is still counted: each of its lines is quarantined with the
    reason. A verdict line that is not a :class:`~shoparena.records.judge.JudgeVerdict` is an error
    (:class:`RunFileError`), like a torn ``race.json`` or ``miner.json``.
    """
    context, notes = _run_context(ArenaRun.at(run_dir), cache)
    run = _open_source_run(Path(run_dir), notes)
    if isinstance(run, EnvelopeLogRun):
        return notes + _ingest_envelope_run(run, context, emit)
    race_doc = run.race()  # written by `arena firehose` (and the race stage)
    race = race_doc.race.race_id if race_doc is not None else None
    agents, unlisted = _agents(run)
    if not agents and not unlisted:
        notes.append(f"{run.path}: no agents (no agents/ folder): nothing ingested")
    for agent in unlisted:
        _quarantine_unlisted(run, agent, emit)
    for agent in agents:
        _ingest_agent(run, agent, race, context, emit)
    return notes


def _quarantine_unlisted(run: ArenaRun, agent: str, emit: Emit) -> None:
    source = run.output_path(agent)
    if not source.is_file():
        return
    for line_no, _ in iter_raw_lines(source):
        emit(
            Quarantined(
                source=str(source),
                line=line_no,
                record=f"{agent} line {line_no}",
                field="agent",
                reason=f"agent {agent!r} is not listed in {run.manifest_path}",
            )
        )


def _ingest_agent(run: ArenaRun, agent: str, race: str | None, context: ScoringBench, emit: Emit) -> None:
    """Every envelope of one agent → one record (scored, judged, with the trusted log's evidence) or
    quarantine."""
    truth = run.miner_truth(agent)
    verdicts = run.verdicts(agent)
    agent_ref = run.manifest.agents.get(agent) if run.manifest is not None else None
    counts: dict[str, int] = {}
    source = run.output_path(agent)
    for line_no, obj in _read_jsonl(source):
        if obj is None:
            emit(_line_quarantine(source, line_no, "", "invalid JSON"))
            continue
        pid = obj.get("problem_id") if isinstance(obj, dict) else None
        if not isinstance(pid, str) or not pid:
            emit(_line_quarantine(source, line_no, "problem_id", "missing or not a string"))
            continue
        try:
            traj = parse_trajectory_value(obj, line_no=line_no)
        except FormatError as exc:
            emit(
                Quarantined(
                    source=str(source),
                    line=line_no,
                    record=f"{agent}/{pid}",
                    field=exc.path or "(record)",
                    reason=exc.detail,
                )
            )
            continue
        trusted, log_problem = _trusted_log(run.proxy_log_path(agent, pid))
        idx = counts.get(pid, 0)
        counts[pid] = idx + 1
        verdict = verdicts.get(pid)
        prov = CorpusProvenance(
            source_format="arena_run",
            source_path=str(source),
            source_line=line_no,
            race_id=race,
            eval_run_id=run.run_id,
            agent=agent,
            agent_version=f"{agent}@{agent_ref.sha256[:12] if agent_ref else ''}",
            miner_hotkey_hash=truth.hotkey_hash if truth is not None else None,
            validator="shoparena",
            judge_status=verdict.status.value if verdict is not None else None,
            judge_model=(verdict.model or verdict.judge or None) if verdict is not None else None,
            judge_prompt_version=None,
            judge_parse_stage=verdict.parse_stage if verdict is not None else None,
            judge_explanation=verdict.explanation if verdict is not None else None,
            scorer_profile="strict",
        )
        record = record_from_trajectory(
            traj,
            run_id=f"{run.run_id}/{agent}",
            problem_id=pid,
            rollout_idx=idx,
            trusted=trusted,
            scoring=context,
            provenance=prov,
        )
        record.evidence.proxy_log_problem = log_problem
        if verdict is not None and verdict.status is JudgeStatus.OK and verdict.score is not None:
            record.labels.judge_q = verdict.score
        record.miner_kind = truth.kind if truth is not None else ""
        record.teacher = truth.teacher if truth is not None else ""
        emit(record)


__all__ = [
    "corpus_labels",
    "env_tools",
    "ingest_file",
    "ingest_run_dir",
    "record_from_trajectory",
    "to_corpus_messages",
]
