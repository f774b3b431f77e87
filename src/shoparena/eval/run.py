"""``shoparena eval run``: a policy on a suite, n episodes per problem, both scoring profiles, resumable.

Run directory::

    identity.json    the config and the content of the suite, index, policy folder, kb and train corpus
                     (shoparena.runs.identity: another evaluation into this directory is refused)
    config.yaml      resolved EvalConfig
    manifest.json    the typed run manifest (EvalManifest, a shoparena.runs.RunManifest)
    output.jsonl     one ORO envelope per finished episode (the arena's trajectory format)
    episodes.jsonl   one EpisodeRecord per finished episode, line i describing envelope i
    leak/            the leak audit against --train-corpus (audit.json)
    summary.json     metrics per profile and category, decoding, suite hash and partition, shortcut floor

Both JSONL files are appended under one lock, envelope first; a killed run leaves at most a torn last line
or one envelope without its record, and reopening trims both back to the episodes that are complete, so a
re-run plays exactly the missing episodes.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from shoparena.env.episodes import suite_hash, suite_knowledge
from shoparena.env.knowledge import knowledge_path_for
from shoparena.eval.config import RESUMABLE_CHANGES, EvalConfig, EvalConfigError, load_problems
from shoparena.eval.layout import EvalManifest, EvalRun
from shoparena.eval.leak import LeakCheck, SuiteIdentity, check_leaks, partition_of
from shoparena.eval.metrics import Estimate, ProblemOutcome, metrics_by_category, proportion
from shoparena.eval.policies import EpisodeResult, EpisodeSpec, build_policy, resolve_render_profile
from shoparena.formats.oro import to_oro_envelope
from shoparena.formats.profiles import RenderProfileError
from shoparena.jsonl import append_line, repair_torn_tail, sha256_file
from shoparena.llm.types import BackendError
from shoparena.records.eval import EpisodeRecord, EvalSummary
from shoparena.records.infra import InfraFailure
from shoparena.records.problem import Problem
from shoparena.runs.envelopes import dumps_envelope
from shoparena.runs.files import (
    RunFileError,
    validate_record,
)
from shoparena.runs.identity import Restart, RunIdentity, RunKind, claim_run_dir
from shoparena.runs.infra import (
    InfraStopError,
    append_infra,
    infra_counts,
    pending_infra,
    read_infra,
    stop_if_all_infra,
)
from shoparena.runs.manifest import FileRef, load_or_new, write_manifest
from shoparena.scoring.bench import ScoringBench

if TYPE_CHECKING:
    from shoparena.search import SearchEngine

logger = logging.getLogger(__name__)

PROFILES = ("strict", "shoppingbench")


def _complete_lines(path: Path) -> list[bytes]:
    """Complete lines of a JSONL file; a torn last line (killed mid-write) is cut off the file first."""
    repair_torn_tail(path)
    if not path.exists():
        return []
    return [line for line in path.read_bytes().split(b"\n") if line]


def _episode(path: Path, line_no: int, line: bytes) -> EpisodeRecord:
    """One ``episodes.jsonl`` line, or :class:`RunFileError` naming the file, line and field."""
    try:
        value = json.loads(line)
    except ValueError as exc:
        raise RunFileError(f"{path}:{line_no}: torn or corrupt line, not JSON ({exc})") from None
    return validate_record(value, EpisodeRecord, path, where=str(line_no))


class EpisodeStore:
    """``output.jsonl`` + ``episodes.jsonl``, kept line-aligned, resumable."""

    def __init__(self, root: Path) -> None:
        run = EvalRun.at(root)
        self.output, self.episodes = run.envelope_log, run.episodes_path
        envelopes = _complete_lines(self.output)
        records = _complete_lines(self.episodes)
        keep = min(len(envelopes), len(records))
        if len(envelopes) != keep:  # an envelope whose record never got written: play it again
            self.output.write_bytes(b"".join(line + b"\n" for line in envelopes[:keep]))
        if len(records) != keep:
            self.episodes.write_bytes(b"".join(line + b"\n" for line in records[:keep]))
        self.records = [_episode(self.episodes, i + 1, line) for i, line in enumerate(records[:keep])]
        self._lock = threading.Lock()

    def done(self) -> set[tuple[str, int]]:
        return {(r.problem_id, r.sample_idx) for r in self.records}

    def append(self, envelope_line: str, record: EpisodeRecord) -> bool:
        """Write one episode (False when it is already recorded)."""
        with self._lock:
            if (record.problem_id, record.sample_idx) in self.done():
                return False
            append_line(self.output, envelope_line)  # envelope first: a record never lacks its envelope
            append_line(self.episodes, record.model_dump_json())
            self.records.append(record)
            return True


#: What an eval run writes at the top of its directory (``restart`` clears these and nothing else).
OWN_OUTPUTS = EvalRun.OWN_OUTPUTS


def _policy_path(policy: str) -> str | None:
    """The folder or file of an ``hf:DIR`` or ``miner:FILE`` policy (None: a name or URL)."""
    kind, sep, rest = policy.partition(":")
    return rest if sep and kind in ("hf", "miner") and Path(rest).exists() else None


def _input_paths(config: EvalConfig) -> dict[str, Path | str | None]:
    inputs: dict[str, Path | str | None] = {
        "suite": config.suite,
        "index": config.index,
        "policy": _policy_path(config.policy),
        "train_corpus": config.train_corpus,
    }
    inputs.update({f"kb.{i}": path for i, path in enumerate(config.kb)})
    # The suite's own web pages (its sidecar) are read too: other pages, other web episodes.
    sidecar = knowledge_path_for(config.suite)
    if sidecar.is_file():
        inputs["suite_knowledge"] = sidecar
    return inputs


def eval_identity(config: EvalConfig) -> RunIdentity:
    """The evaluation's identity: the settings that change an episode's outcome or the label (not
    :data:`RESUMABLE_CHANGES`), with the input paths replaced by their content."""
    settings = config.model_dump(
        mode="json", exclude={*RESUMABLE_CHANGES, "out", "suite", "index", "kb", "train_corpus"}
    )
    if _policy_path(config.policy) is not None:
        settings["policy"] = config.policy.partition(":")[0] + ":"
    return RunIdentity.of(RunKind.EVAL, settings, _input_paths(config))


def absolute_inputs(config: EvalConfig) -> EvalConfig:
    """``config`` with every input path (suite, index, kb, train corpus, a local policy) and ``out`` made
    absolute: ``config.yaml`` then names the same files whatever directory a later command (a resume, a
    ``corpus build`` of this run, ``view``) is typed in."""
    policy = config.policy
    local = _policy_path(policy)
    if local is not None:
        policy = f"{policy.partition(':')[0]}:{Path(local).absolute()}"
    return config.model_copy(
        update={
            "suite": config.suite.absolute(),
            "index": config.index.absolute(),
            "out": config.out.absolute(),
            "kb": [Path(p).absolute() for p in config.kb],
            "train_corpus": Path(config.train_corpus).absolute() if config.train_corpus else None,
            "policy": policy,
        }
    )


def _write_if_changed(path: Path, text: str) -> None:
    """Write ``text`` unless the file already holds it: a resume that did no work changes no file."""
    if not path.is_file() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def _check_policy(config: EvalConfig) -> None:
    """A policy that names a local file or folder must exist, checked before anything is written (its
    backend would fail only after the run directory is set up)."""
    kind, _, target = config.policy.partition(":")
    if kind == "hf" and not Path(target).is_dir():
        raise EvalConfigError(f"policy: {config.policy}: no such model folder")
    if kind == "miner" and ("/" in target or target.endswith(".py")) and not Path(target).is_file():
        raise EvalConfigError(f"policy: {config.policy}: no such miner file")


def episode_record(bench: ScoringBench, spec: EpisodeSpec, result: EpisodeResult) -> EpisodeRecord:
    """One finished episode scored under both profiles."""
    traj, usage = result.trajectory, result.usage
    scored = bench.score(traj, spec.problem)
    if scored is None:
        raise EvalConfigError(f"index: {bench.lookup!r}: no product lookup to score with")
    error = f"{traj.error.type}: {traj.error.message}"[:500] if traj.error is not None else None
    return EpisodeRecord(
        problem_id=spec.problem.problem_id,
        sample_idx=spec.sample_idx,
        decoding=spec.decoding,
        category=spec.problem.category_label,
        status=traj.status.value,
        termination_reason=traj.meta.get("termination_reason"),
        success_strict=bool(scored.strict.success),
        success_shoppingbench=bool(scored.shoppingbench.success),
        format_strict=float(scored.strict.format_score),
        format_shoppingbench=float(scored.shoppingbench.format_score),
        steps=len(traj.steps),
        prompt_tokens=usage.prompt_tokens,
        prefilled_tokens=usage.prefilled_tokens,
        prefix_misses=usage.prefix_misses,
        completion_tokens=usage.completion_tokens,
        tokens=usage.prompt_tokens + usage.completion_tokens,
        calls=usage.calls,
        failed_calls=usage.failed_calls,
        wall_s=round(result.wall_s, 3),
        model=usage.model,
        finish_reasons=dict(usage.finish_reasons),
        error=error,
    )


def problem_outcomes(
    problems: list[Problem], records: list[EpisodeRecord], config: EvalConfig, scoring_profile: str
) -> list[ProblemOutcome]:
    """Per-problem counts; episodes that never finished count as failures (denominator = the suite)."""
    by_problem: dict[str, list[EpisodeRecord]] = {}
    for r in records:
        by_problem.setdefault(r.problem_id, []).append(r)
    greedy_idx = next((i for i, mode in config.episode_plan() if mode == "greedy"), None)
    out = []
    for p in problems:
        rows = by_problem.get(p.problem_id, [])
        sampled = [r for r in rows if r.sample_idx < config.samples]
        success = [bool(getattr(r, f"success_{scoring_profile}")) for r in sampled]
        greedy_row = next((r for r in rows if r.sample_idx == greedy_idx), None)
        n = config.samples
        out.append(
            ProblemOutcome(
                problem_id=p.problem_id,
                category=p.category_label,
                n=n,
                c=sum(success),
                greedy=None
                if greedy_idx is None
                else bool(greedy_row and getattr(greedy_row, f"success_{scoring_profile}")),
                format_score=sum(getattr(r, f"format_{scoring_profile}") for r in sampled) / n,
                steps=sum(r.steps for r in sampled) / n,
                tokens=sum(r.completion_tokens for r in sampled) / n,
            )
        )
    return out


def shortcut_wins(problems: list[Problem], engine: SearchEngine, similarity: str) -> dict[str, list[bool]]:
    """Per scoring profile, whether the no-LLM ``shortcut`` miner (the full query's top hit) solves each."""
    from shoparena.suites.checks import shortcut_trajectory

    bench = ScoringBench(problems, engine, similarity)
    trajectories = [shortcut_trajectory(p, engine) for p in problems]
    return {
        scoring_profile: [
            bool(bench.verdict(p, t, scoring_profile).success)
            for p, t in zip(problems, trajectories, strict=True)
        ]
        for scoring_profile in PROFILES
    }


def shortcut_floor(
    problems: list[Problem], engine: SearchEngine, similarity: str
) -> dict[str, dict[str, Estimate]]:
    """ASR of the no-LLM ``shortcut`` miner (first hit of the full query), per profile and category."""
    out: dict[str, dict[str, Estimate]] = {}
    for scoring_profile, wins in shortcut_wins(problems, engine, similarity).items():
        groups: dict[str, list[bool]] = {"overall": wins}
        for p, w in zip(problems, wins, strict=True):
            groups.setdefault(p.category_label, []).append(w)
        out[scoring_profile] = {k: proportion(sum(v), len(v)) for k, v in groups.items()}
    return out


def _policy(config: EvalConfig, engine: SearchEngine, knowledge: Any, backend: Any) -> Any:
    """The in-process policy, or its Ray counterpart (one task per problem; eval.distributed)."""
    if config.executor != "ray":
        try:
            return build_policy(config, engine, knowledge, backend=backend)
        except BackendError as err:  # the engine is missing, or the model folder cannot be loaded
            raise EvalConfigError(f"policy: {config.policy}: {err}") from None
    if backend is not None:
        raise EvalConfigError(
            "--executor ray: Ray workers build their own backend from --policy; none may be passed"
        )
    from shoparena.eval.distributed import RayPolicy

    try:
        return RayPolicy(config)
    except ValueError as err:
        raise EvalConfigError(str(err)) from None


def run_eval(
    config: EvalConfig,
    *,
    restart: Restart = False,
    backend: Any = None,
    engine: SearchEngine | None = None,
    on_episode: Any = None,
) -> EvalSummary:
    """Run (or resume) an evaluation and write its run directory.

    Args:
        config: The evaluation.
        restart: Start ``config.out`` over (its episodes, leak audit and summary are cleared).
        backend: A ready chat backend for hf:/openai:/miner: policies (tests); else built from the spec.
        engine: A ready search engine (tests); else ``SearchIndex.open(config.index)``.
        on_episode: Called with each new :class:`EpisodeRecord` (tests use it to interrupt a run).

    Raises:
        RunDirError: ``config.out`` holds another kind of run or a different evaluation (unless
            ``restart``), or is, holds or lies in an input; nothing is written.
        EvalConfigError: the suite is empty or the policy cannot be built.
        LeakError: the suite leaks into ``--train-corpus`` and ``--allow-leak`` was not given.
    """
    try:
        config = resolve_render_profile(absolute_inputs(config))
    except RenderProfileError as exc:
        raise EvalConfigError(str(exc)) from None
    _check_policy(config)
    claim = claim_run_dir(
        config.out,
        eval_identity(config),
        own=OWN_OUTPUTS,
        input_paths=list(_input_paths(config).values()),
        restart=restart,
    )
    try:
        return _run_eval(config, backend, engine, on_episode)
    finally:
        claim.release()


def _run_eval(config: EvalConfig, backend: Any, engine: SearchEngine, on_episode: Any) -> EvalSummary:
    root = config.out
    problems = load_problems(config)
    sha = sha256_file(config.suite)
    identity = SuiteIdentity(
        path=str(config.suite),
        sha256=sha,
        content_hash=suite_hash(problems),
        problems=len(problems),
        partition=partition_of(config.suite, sha),
    )
    leak = check_leaks(
        config.suite,
        config.train_corpus,
        EvalRun.at(root).leak_dir,
        allow_leak=config.allow_leak,
        index_dir=config.index,
    )
    _write_if_changed(
        EvalRun.at(root).config_path, yaml.safe_dump(config.model_dump(mode="json"), sort_keys=False)
    )
    manifest = load_or_new(root, EvalManifest, kind="eval")
    manifest.inputs["suite"] = FileRef.of(config.suite)
    manifest.suite, manifest.label, manifest.decoding = identity, leak.status, config.decoding_record()
    run_id = manifest.run_id
    write_manifest(manifest, root)
    if engine is None:
        from shoparena.search import SearchIndex

        engine = SearchIndex.open(config.index)
    knowledge = (
        suite_knowledge(engine, config.suite, config.kb)
        if any(p.intent.value == "web" for p in problems)
        else None
    )
    store = EpisodeStore(root)
    bench = ScoringBench(problems, engine, config.similarity)
    plan = config.episode_plan()
    done = store.done()
    todo = [
        EpisodeSpec(p, idx, mode) for idx, mode in plan for p in problems if (p.problem_id, idx) not in done
    ]
    expected = len(problems) * len(plan)
    policy = _policy(config, engine, knowledge, backend)
    manifest.policy, manifest.episodes_expected = policy.describe(), expected
    write_manifest(manifest, root)
    wall = time.perf_counter()
    new_records: list[EpisodeRecord] = []
    try:
        progress = _progress(config.progress and bool(todo), expected, expected - len(todo))

        def on_done(spec: EpisodeSpec, result: EpisodeResult) -> None:
            if result.infra is not None:  # not an episode: kept apart, retried by the next run
                logger.warning(
                    "%s: infrastructure failure (%s): %s",
                    spec.key,
                    result.infra.reason.value,
                    result.infra.message[:200],
                )
                append_infra(root, result.infra)
                return
            result.trajectory.run_id = run_id
            record = episode_record(bench, spec, result)
            if store.append(dumps_envelope(to_oro_envelope(result.trajectory)), record):
                new_records.append(record)
                if progress is not None:
                    progress.advance(record)
                if on_episode is not None:
                    on_episode(record)

        try:
            policy.run(todo, on_done, run_id=run_id)
        finally:
            if progress is not None:
                progress.stop()
    finally:
        policy.close()
    elapsed = time.perf_counter() - wall
    summary = summarise(
        config,
        problems,
        store.records,
        identity,
        leak,
        policy.describe(),
        run_id,
        infra=pending_infra(read_infra(root), store.done()),
    )
    summary.scoring["title_backend"] = bench.backend
    # The floor over the same problems as the model's metrics (infra failures leave both, never one).
    unrun = {f.problem_id for f in pending_infra(read_infra(root), store.done())}
    summary.shortcut_floor = shortcut_floor(
        [p for p in problems if p.problem_id not in unrun] or problems, engine, config.similarity
    )
    new_tokens = sum(r.completion_tokens for r in new_records)
    summary.throughput = {
        "wall_s": round(elapsed, 3),
        "episodes_this_call": len(new_records),
        "episodes_per_s": round(len(new_records) / elapsed, 4) if elapsed > 0 else 0.0,
        "completion_tokens_per_s": round(new_tokens / elapsed, 2) if elapsed > 0 else 0.0,
    }
    manifest.episodes_finished = summary.episodes["finished"]
    write_manifest(manifest, root)
    saved = summary.dump()
    previous = _previous_throughput(EvalRun.at(root).summary_path)
    if not todo and previous is not None:  # nothing played: the file keeps the last call that did work
        saved["throughput"] = previous
    _write_if_changed(EvalRun.at(root).summary_path, json.dumps(saved, indent=2))
    stop_if_all_infra(f"eval run {root}", len(store.records), pending_infra(read_infra(root), store.done()))
    stop_if_no_completion(f"eval run {root}", store.records)
    return summary


def _previous_throughput(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    throughput = data.get("throughput") if isinstance(data, dict) else None
    return throughput if isinstance(throughput, dict) else None


def stop_if_no_completion(where: str, records: list[EpisodeRecord]) -> None:
    """Raise :class:`InfraStopError` when the policy called a model and not one call returned a completion:
    such a run measures the model server, not the policy (its summary is written; the episodes stay, since
    a refused request, a 4xx, is the policy's own)."""
    calls = sum(r.calls for r in records)
    if calls == 0 or any(r.calls > r.failed_calls for r in records):
        return
    errors = Counter((r.error or "no error recorded").split(":")[0] for r in records)
    sample = next((r.error for r in records if r.error), "")
    raise InfraStopError(
        f"{where}: not one of {calls} model call(s) returned a completion "
        f"({', '.join(f'{k} {v}' for k, v in errors.most_common(3))}: {' '.join(sample.split())[:160]}); "
        "this is not a measurement of the policy: fix the model server and re-run with --restart"
    )


def summarise(
    config: EvalConfig,
    problems: list[Problem],
    records: list[EpisodeRecord],
    identity: SuiteIdentity,
    leak: LeakCheck,
    policy: dict[str, Any],
    run_id: str,
    infra: list[InfraFailure] | None = None,
) -> EvalSummary:
    """The summary of a run directory's records (pure: no episodes are played).

    ``infra``: episodes not run for an infrastructure reason; their problems leave the metrics (never the
    policy's 0) until a re-run plays them.
    """
    plan = config.episode_plan()
    statuses = Counter(r.status for r in records)
    finished = {(r.problem_id, r.sample_idx) for r in records}
    expected = len(problems) * len(plan)
    infra = infra or []
    unrun = {f.problem_id for f in infra}
    problems = [p for p in problems if p.problem_id not in unrun]
    profiles = {
        profile: metrics_by_category(
            problem_outcomes(problems, records, config, profile),
            config.samples,
            seed=config.seed,
            resamples=config.bootstrap,
        )
        for profile in PROFILES
    }
    notes = []
    if leak.status == "leaked":
        notes.append("LEAKED: the suite shares leak clusters with the training corpus")
    missing = expected - len(finished) - len(infra)
    if missing:
        notes.append(f"{missing} episode(s) missing: counted as failures")
    if infra:
        counts = ", ".join(f"{k} {v}" for k, v in infra_counts(infra).items())
        notes.append(
            f"{len(infra)} episode(s) not run for infrastructure reasons ({counts}): their {len(unrun)} "
            "problem(s) are left out of the metrics; re-run the same command to retry them"
        )
    return EvalSummary(
        run_id=run_id,
        run_dir=str(config.out),
        label=leak.status,
        policy=policy,
        suite=identity,
        leak=leak,
        decoding=config.decoding_record(),
        scoring={"profiles": list(PROFILES), "similarity": config.similarity, "denominator": "suite"},
        episodes={
            "expected": expected,
            "finished": len(finished),
            "missing": missing,
            "infra": infra_counts(infra),
            "by_status": dict(statuses),
            "termination": dict(Counter(str(r.termination_reason) for r in records)),
        },
        profiles=profiles,
        prefix_cache=prefix_cache_totals(config, records),
        notes=notes,
    )


def prefix_cache_totals(config: EvalConfig, records: list[EpisodeRecord]) -> dict[str, Any]:
    """What the engine reused over a run's episodes: prompt tokens sent, prompt tokens computed (None when
    an episode's engine did not say), the ratio, and the turns that could not reuse the previous one."""
    prompt = sum(r.prompt_tokens for r in records)
    known = [r.prefilled_tokens for r in records if r.prefilled_tokens is not None]
    prefilled = sum(known) if records and len(known) == len(records) else None
    return {
        "enabled": config.prefix_cache,
        "prompt_tokens": prompt,
        "prefilled_tokens": prefilled,
        "reuse_factor": round(prompt / prefilled, 3) if prefilled else None,
        "misses": sum(r.prefix_misses for r in records),
    }


class _Progress:
    def __init__(self, total: int, completed: int) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.bar = Progress(
            TextColumn("eval"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("{task.fields[wins]}"),
        )
        self.task = self.bar.add_task("eval", total=total, completed=completed, wins="")
        self.wins = self.seen = 0
        self.bar.start()

    def advance(self, record: EpisodeRecord) -> None:
        self.seen += 1
        self.wins += record.success_strict
        self.bar.update(self.task, advance=1, wins=f"strict {self.wins}/{self.seen} this call")

    def stop(self) -> None:
        self.bar.stop()


def _progress(enabled: bool, total: int, completed: int) -> _Progress | None:
    return _Progress(total, completed) if enabled else None


def read_run(run_dir: str | Path) -> tuple[EvalSummary, list[EpisodeRecord], EvalConfig]:
    """``(summary, episode records, config)`` of a finished run directory; reads only, never repairs.

    Raises:
        EvalConfigError: no ``summary.json`` (not a finished eval run directory).
        RunFileError: ``summary.json``, ``config.yaml`` or ``episodes.jsonl`` missing, torn or not its record
            (names the file, line and field), or an episode (problem, sample) that repeats.
    """
    return EvalRun.at(run_dir).read()


__all__ = [
    "PROFILES",
    "EpisodeRecord",
    "EpisodeStore",
    "EvalManifest",
    "EvalSummary",
    "prefix_cache_totals",
    "problem_outcomes",
    "read_run",
    "run_eval",
    "shortcut_floor",
    "shortcut_wins",
    "summarise",
]
