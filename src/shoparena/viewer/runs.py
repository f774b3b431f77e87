"""Run directories as the trajectory viewer shows them, read through the typed records only.

Each directory is opened with :func:`shoparena.runs.layout.open_run` (its ``manifest.json`` names the kind);
three kinds are shown:

* **corpus** (``corpus.layout.CorpusRun``): each ``records.CorpusRecord`` — its messages, labels, the
  judge's explanation and the richness proof of each catalogue dispatch (``evidence.dispatch_matched``);
* **eval** (``eval.layout.EvalRun``): the episode records, the envelopes as ``records.Trajectory``
  (``formats.io``), re-scored under ``strict`` for the verdict's checks when the run's suite and index are
  still there;
* **arena** (``arena.layout.ArenaRun``): each agent's trajectories with its judge verdicts, the strict
  outcome and the category (suite and index from the run's config) and the verdict's checks.

A **pipeline** directory (``pipeline run``, ``make run``) is opened as the runs it holds, each named by its
role: ``arena <race id>`` per firehose race, ``corpus``, ``base`` and ``student``.

:class:`ViewerRow` is the light summary listed in the page; :func:`episode_detail` builds the full view of one
row (conversation, checks, judge, richness) only when the page opens it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from shoparena.arena.layout import ArenaRun
from shoparena.corpus.layout import CorpusRun
from shoparena.eval.layout import EvalRun
from shoparena.formats.io import read_trajectories
from shoparena.formats.native import trajectory_to_chat
from shoparena.pipeline.layout import PipelineRun
from shoparena.pipeline.outputs import CorpusOutput, EvalOutput, FirehoseOutput, StudentEvalOutput
from shoparena.records.corpus import CorpusRecord
from shoparena.records.trajectory import Trajectory
from shoparena.runs.files import RunFileError
from shoparena.runs.layout import RunHandle, open_run
from shoparena.scoring.bench import ScoringBench

CATALOGUE_TOOLS = ("find_product", "view_product_information", "recommend_product", "web_search")


class ViewerError(ValueError):
    """A directory the viewer cannot read (one line naming it)."""


class ViewerRow(BaseModel):
    """One trajectory as the page lists it."""

    model_config = ConfigDict(extra="forbid")

    key: str = Field(description="Unique in the page: run index, then the item's position.")
    run: str = Field(description="The run's label (its directory name, made unique).")
    kind: Literal["corpus", "eval", "arena"]
    problem_id: str
    rollout: int = 0
    agent: str = ""
    category: str = ""
    query: str = ""
    outcome: str = Field(description="success / failure, or the corpus outcome (kept, low_richness, ...).")
    success: bool | None = None
    scores: dict[str, Any] = Field(default_factory=dict, description="Labels and scores shown as columns.")
    steps: int = 0


@dataclass(slots=True)
class _Item:
    row: ViewerRow
    record: CorpusRecord | None = None
    trajectory: Trajectory | None = None
    judge: dict[str, Any] | None = None
    run: LoadedRun | None = None


@dataclass(slots=True)
class LoadedRun:
    """One run directory, read."""

    path: Path
    label: str
    kind: str
    number: int = 0  # position on the command line: the first part of each row's key
    items: list[_Item] = field(default_factory=list)
    suite: Path | None = None
    index: Path | None = None
    similarity: str = "lexical"
    #: The suite's sha256 as the run recorded it (eval runs): a re-score against another content says so.
    suite_sha256: str | None = None
    _bench: ScoringBench | bool | None = None  # False: the suite or index is gone

    def add(
        self,
        *,
        record: CorpusRecord | None = None,
        trajectory: Trajectory | None = None,
        judge: dict[str, Any] | None = None,
        **row: Any,
    ) -> None:
        """List one trajectory: its row (``row``: the :class:`ViewerRow` fields that vary; key, run and kind
        come from here) and what its detail view is built from."""
        listed = ViewerRow(key=f"{self.number}-{len(self.items)}", run=self.label, kind=self.kind, **row)
        self.items.append(_Item(listed, record=record, trajectory=trajectory, judge=judge, run=self))

    def verdict(self, trajectory: Trajectory) -> dict[str, Any] | None:
        """The strict verdict of a trajectory (None when the suite or index is gone); when the suite's
        content is no longer what the run recorded, ``suite_changed`` says so (the row keeps the run's)."""
        if self._bench is None:
            self._bench = _open_bench(self.suite, self.index, self.similarity) or False
        verdict = _strict_verdict(self._bench, trajectory) if self._bench else None
        if verdict is not None and self.suite_sha256 and self.suite is not None:
            from shoparena.jsonl import sha256_file

            now = sha256_file(self.suite)
            if now != self.suite_sha256:
                verdict["suite_changed"] = (
                    f"re-scored against {self.suite}, changed since the run (sha256 {now[:12]}, the run "
                    f"recorded {self.suite_sha256[:12]}): this verdict may differ from the row's"
                )
        return verdict


def _open_bench(suite: Path | None, index: Path | None, similarity: str) -> ScoringBench | None:
    """The run's scoring bench, or None when its suite or index is gone."""
    if suite is None or index is None or not suite.is_file() or not index.is_dir():
        return None
    from shoparena.suites.bench import open_bench

    try:
        return open_bench(suite, index, similarity)
    except (ValueError, OSError):  # the index is not there any more (a directory without its files)
        return None


def _strict_verdict(bench: ScoringBench, trajectory: Trajectory) -> dict[str, Any] | None:
    problem = bench.problems.get(trajectory.problem_id)
    if problem is None:
        return None
    verdict = bench.verdict(problem, trajectory, "strict")
    return verdict.model_dump(mode="json", include={"success", "rule", "product", "checks", "notes"})


def _handle(path: Path) -> RunHandle:
    """The run directory's handle (its manifest names the kind)."""
    try:
        handle = open_run(path)
    except RunFileError as exc:
        reason = str(exc).splitlines()[0]
        raise ViewerError(
            f"{path}: not a run directory the viewer reads (pipeline, corpus, eval or arena run): {reason}"
        ) from None
    if not isinstance(handle, CorpusRun | EvalRun | ArenaRun | PipelineRun):
        raise ViewerError(
            f"{path}: a {handle.kind!r} run directory; the viewer reads pipeline, corpus, eval and arena runs"
        )
    return handle


def _run_folder(pipeline: PipelineRun, value: str) -> Path:
    path = Path(pipeline.resolve(value))
    return path if path.is_dir() or not path.suffix else path.parent


def pipeline_parts(path: Path, pipeline: PipelineRun) -> list[tuple[Path, str]]:
    """``(directory, role)`` of each run a pipeline directory holds, in pipeline order: each firehose race
    (``arena <race id>``), the corpus, the base and the student evaluations.

    Raises:
        ViewerError: none of them has run yet, or one is no longer in the directory (names it).
    """
    try:
        firehose = pipeline.stage_output(FirehoseOutput)
        roles = ((CorpusOutput, "corpus"), (EvalOutput, "base"), (StudentEvalOutput, "student"))
        outputs = [(pipeline.stage_output(model), role) for model, role in roles]
    except RunFileError as exc:
        raise ViewerError(str(exc).splitlines()[0]) from None
    parts: list[tuple[Path, str]] = []
    if firehose is not None:
        for i, race_dir in enumerate(firehose.race_dirs):
            race_id = firehose.races[i].race_id if i < len(firehose.races) else Path(race_dir).name
            parts.append((_run_folder(pipeline, race_dir), f"arena {race_id}"))
    parts += [(_run_folder(pipeline, output.path), role) for output, role in outputs if output is not None]
    if not parts:
        raise ViewerError(
            f"{path}: a pipeline run directory with no arena, corpus or evaluation run yet (`shoparena "
            "pipeline run` writes them; the viewer also opens each stage's directory on its own)"
        )
    for folder, role in parts:
        if not folder.is_dir():
            raise ViewerError(f"{path}: its {role} run {folder} is not there (moved or deleted)")
    return parts


def _corpus(run: LoadedRun, corpus: CorpusRun) -> None:
    try:
        records = list(corpus.records())
    except RunFileError as exc:
        raise ViewerError(str(exc)) from None
    for _, record in records:
        labels = record.labels
        run.add(
            record=record,
            problem_id=record.problem_id,
            rollout=record.rollout_idx,
            agent=record.provenance.agent or record.miner_kind or "",
            category=record.category,
            query=record.query,
            outcome=record.outcome,
            success=labels.success,
            scores={
                "label": record.structural_label,
                "rule": labels.rule,
                "judge_q": labels.judge_q,
                "richness": labels.agentic_richness,
            },
            steps=sum(1 for m in record.messages if m.role == "assistant"),
        )


def _eval(run: LoadedRun, evaluation: EvalRun) -> None:
    summary, records, config = evaluation.read()
    run.suite, run.index, run.similarity = Path(config.suite), Path(config.index), config.similarity
    run.suite_sha256 = summary.suite.sha256 if summary.suite is not None else None
    trajectories = list(read_trajectories(evaluation.envelope_log))
    for record, traj in zip(records, trajectories, strict=False):
        run.add(
            trajectory=traj,
            problem_id=record.problem_id,
            rollout=record.sample_idx,
            agent=record.model or record.decoding,
            category=record.category,
            query=traj.query,
            outcome="success" if record.success_strict else "failure",
            success=record.success_strict,
            scores={
                "strict": record.success_strict,
                "shoppingbench": record.success_shoppingbench,
                "format": record.format_strict,
                "termination": record.termination_reason,
            },
            steps=record.steps,
        )


def _arena(run: LoadedRun, arena: ArenaRun) -> None:
    if arena.has_config():
        config = arena.config()
        run.suite = Path(config.suite) if config.suite else None
        run.index = Path(config.index) if config.index else None
        run.similarity = config.similarity
    for agent in arena.agent_folders():
        judged = arena.verdicts(agent)
        if not arena.output_path(agent).is_file():
            continue
        for traj in read_trajectories(arena.output_path(agent)):
            judge = judged.get(traj.problem_id)
            detail = (
                judge.model_dump(mode="json", include={"status", "score", "explanation", "gates"})
                if judge
                else None
            )
            outcome, success, category = _arena_outcome(run, traj)
            run.add(
                trajectory=traj,
                judge=detail,
                problem_id=traj.problem_id,
                rollout=traj.rollout_idx,
                agent=agent,
                category=category,
                query=traj.query,
                outcome=outcome,
                success=success,
                scores={
                    "strict": success,
                    "judge": judge.score if judge else None,
                    # only when it is news: a judge that could not judge (the row's judge is then empty)
                    "judge_status": judge.status if judge and judge.status != "ok" else None,
                },
                steps=len(traj.steps),
            )


def _arena_outcome(run: LoadedRun, traj: Trajectory) -> tuple[str, bool | None, str]:
    """(outcome, strict success, category) of an arena trajectory: ``success`` / ``failure`` as the strict
    scorer rates a returned envelope, else the envelope's status (``failed``, ``timed_out``); the category
    from the run's suite (the envelope's own when the suite is gone)."""
    if run._bench is None:
        run._bench = _open_bench(run.suite, run.index, run.similarity) or False
    problem = run._bench.problems.get(traj.problem_id) if run._bench else None
    category = problem.category_label if problem is not None else str(traj.meta.get("category") or "")
    if traj.status.value != "SUCCESS" or problem is None:
        return traj.status.value.lower(), (False if traj.status.value != "SUCCESS" else None), category
    verdict = _strict_verdict(run._bench, traj) if run._bench else None
    if verdict is None:
        return "success", None, category
    success = bool(verdict["success"])
    return ("success" if success else "failure"), success, category


def _expand(paths: list[str | Path]) -> list[tuple[Path, str, RunHandle]]:
    """Each directory with its label and handle; a pipeline directory becomes the runs it holds, labelled by
    role (prefixed with its own name when several directories are given)."""
    expanded: list[tuple[Path, str, RunHandle]] = []
    for raw in paths:
        path = Path(raw)
        if not path.is_dir():
            raise ViewerError(f"{path}: not a directory")
        handle = _handle(path)
        name = path.resolve().name or str(path)
        if not isinstance(handle, PipelineRun):
            expanded.append((path, name, handle))
            continue
        for folder, role in pipeline_parts(path, handle):
            expanded.append((folder, role if len(paths) == 1 else f"{name} {role}", _handle(folder)))
    return expanded


def load_runs(paths: list[str | Path]) -> list[LoadedRun]:
    """Read each run directory (labels are the directory names, or a pipeline's roles, made unique)."""
    runs: list[LoadedRun] = []
    seen: dict[str, int] = {}
    for number, (path, name, handle) in enumerate(_expand(paths)):
        seen[name] = seen.get(name, 0) + 1
        label = name if seen[name] == 1 else f"{name} ({seen[name]})"
        run = LoadedRun(path=path, label=label, kind=handle.kind, number=number)
        try:
            if isinstance(handle, CorpusRun):
                _corpus(run, handle)
            elif isinstance(handle, EvalRun):
                _eval(run, handle)
            else:
                _arena(run, handle)
        except ViewerError:
            raise
        except (ValueError, OSError, KeyError) as exc:
            reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise ViewerError(f"{path}: cannot read this {run.kind} run: {reason}") from None
        runs.append(run)
    return runs


def _dispatches(messages: list[dict[str, Any]], matched: list[bool]) -> list[dict[str, Any]]:
    names = [
        (call.get("function") or {}).get("name", "")
        for m in messages
        if m.get("role") == "assistant"
        for call in m.get("tool_calls") or []
    ]
    catalogue = [n for n in names if n in CATALOGUE_TOOLS]
    return [
        {"index": i + 1, "tool": catalogue[i] if i < len(catalogue) else "?", "proved": bool(ok)}
        for i, ok in enumerate(matched)
    ]


def episode_detail(item: _Item) -> dict[str, Any]:
    """The full view of one row: conversation, verdict checks, judge, richness."""
    detail: dict[str, Any] = {"row": item.row.model_dump(mode="json"), "checks": None, "judge": item.judge}
    detail["richness"] = None
    if item.record is not None:
        record = item.record
        messages = [m.model_dump(mode="json", exclude_none=True) for m in record.messages]
        detail["messages"] = messages
        prov = record.provenance
        if prov.judge_status or prov.judge_explanation:
            detail["judge"] = {
                "status": prov.judge_status,
                "score": record.labels.judge_q,
                "explanation": prov.judge_explanation,
            }
        ev = record.evidence
        detail["richness"] = {
            "log_source": ev.log_source,
            "richness_proof": ev.richness_proof,
            "richness_nonce": ev.richness_nonce,
            "nonce_counts": ev.nonce_counts,
            "dispatches": _dispatches(messages, ev.dispatch_matched),
            "forged": ev.forged,
        }
        detail["labels"] = record.labels.model_dump(mode="json")
    elif item.trajectory is not None:
        detail["messages"] = trajectory_to_chat(item.trajectory, system_prompt=item.trajectory.system_prompt)
        if item.run is not None:
            detail["checks"] = item.run.verdict(item.trajectory)
    return detail


__all__ = ["LoadedRun", "ViewerError", "ViewerRow", "episode_detail", "load_runs", "pipeline_parts"]
