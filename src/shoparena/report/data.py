"""What the report reads from a pipeline run directory: tolerant of missing stages, never of garbage silently.

Sources (see docs/CORPUS_CONTRACT in the coordination notes and the stage outputs of ``shoparena.pipeline``):
``manifest.json`` and ``config.yaml`` (provenance), the ``reference`` stage's scores, the corpus directory's
``report.json`` (funnel, richness by miner kind, judge bins), the firehose's race results, and the evaluation
run directories' ``summary.json`` (per category ASR with intervals, pass@k).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shoparena.corpus.layout import CorpusRun
from shoparena.eval.baskets import BasketTable
from shoparena.eval.compare import Comparison
from shoparena.eval.layout import EvalRun
from shoparena.formats.native import trajectory_to_chat
from shoparena.jsonl import iter_jsonl
from shoparena.pipeline.layout import PipelineRun
from shoparena.pipeline.outputs import (
    CorpusOutput,
    EvalOutput,
    FirehoseOutput,
    OutputT,
    RaceSummary,
    ReferenceOutput,
    StageOutput,
    StudentEvalOutput,
)
from shoparena.records.corpus import CorpusReport
from shoparena.records.eval import Estimate, EvalSummary
from shoparena.records.trajectory import Trajectory
from shoparena.runs.files import RunFileError, load_json, load_yaml
from shoparena.runs.layout import open_run
from shoparena.runs.rundir import from_run_relative

#: The stage outputs the report reads, one record class per stage (``pipeline.outputs``).
REPORTED_OUTPUTS: tuple[type[StageOutput], ...] = (
    ReferenceOutput,
    FirehoseOutput,
    CorpusOutput,
    EvalOutput,
    StudentEvalOutput,
)


@dataclass
class ReportData:
    run_dir: Path
    manifest: dict[str, Any] = field(default_factory=dict)
    config: dict[str, Any] = field(default_factory=dict)
    stages: dict[str, dict[str, Any]] = field(default_factory=dict)
    stage_outputs: dict[str, StageOutput] = field(default_factory=dict)  # stage -> its record, when readable
    corpus_report: CorpusReport | None = None
    races: list[RaceSummary] | None = None
    evals: dict[str, EvalSummary] = field(default_factory=dict)  # base / student: their summary.json
    examples: list[tuple[str, list[dict[str, Any]]]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    comparison: Comparison | None = None  # base vs student, paired (eval.compare), when both ran
    comparison_error: str = ""
    missing: dict[str, str] = field(default_factory=dict)  # stage -> which output of a stage that ran is gone
    baskets: BasketTable | None = None  # student, base, shortcut, planner by intent and basket size

    def output(self, model: type[OutputT]) -> OutputT | None:
        """The record the stage that writes ``model`` recorded; None when it has not run (or its record is
        unreadable: then :attr:`missing` says why)."""
        record = self.stage_outputs.get(model.stage)
        return record if isinstance(record, model) else None


def estimate(est: Estimate) -> tuple[float, float, float]:
    """``(value, ci_low, ci_high)`` of an estimate."""
    return est.value, est.ci_low, est.ci_high


def _read_json(path: Path) -> Any:
    """A JSON file a stage wrote; None when it is absent, :class:`RunFileError` when torn or not UTF-8."""
    return load_json(path) if path.is_file() else None


def _dir_of(run: Path, output: StageOutput | None) -> Path | None:
    """The folder of a stage output's ``path`` (a file's parent), found inside ``run``; None if absent."""
    value = getattr(output, "path", None)
    if not value:
        return None
    path = stage_path(run, value)
    if path is None:
        return None
    return path if path.is_dir() else path.parent


def _races_with_reasons(run: Path, firehose: FirehoseOutput) -> list[RaceSummary]:
    """The firehose's races, each race without a winner with the reason it has none (read from its race
    directory when the manifest was written before reasons were recorded)."""
    from shoparena.arena.run_judging import why_no_winner

    races = []
    for i, race in enumerate(firehose.races):
        if not race.winner and not race.reason and i < len(firehose.race_dirs):
            race_dir = stage_path(run, firehose.race_dirs[i])
            if race_dir is not None and race_dir.is_dir():
                race = race.model_copy(update={"reason": why_no_winner(race_dir)})
        races.append(race)
    return races


def stage_path(run: Path, value: str) -> Path | None:
    """A stage output path as the manifest records it, found inside ``run`` whatever the working directory.

    ``./x`` is relative to the run directory (:func:`shoparena.runs.rundir.run_relative`). A bare relative
    path is from a run recorded before that (relative to the directory the pipeline started in): it is
    looked up only inside ``run`` (by its trailing components), never in the working directory, so the
    report never shows another run's data. None when it is not there.
    """
    path = from_run_relative(value, run)
    if not isinstance(path, str):
        return path
    candidate = Path(path)
    if candidate.is_absolute():
        return candidate if candidate.exists() else None
    parts = candidate.parts
    for start in range(len(parts)):
        inside = run.joinpath(*parts[start:])
        if inside.exists():
            return inside
    return None


def _read_stage_outputs(data: ReportData, pipeline: PipelineRun | None) -> None:
    """Each reported stage's record; one that is not its record is told in :attr:`ReportData.missing`."""
    if pipeline is None:  # another kind of run: the report refuses it after loading
        return
    for model in REPORTED_OUTPUTS:
        try:
            record = pipeline.stage_output(model)
        except RunFileError as exc:
            data.missing[model.stage] = str(exc)
            continue
        if record is not None:
            data.stage_outputs[model.stage] = record


def load_report_data(run_dir: str | Path, examples: int = 3) -> ReportData:
    run = Path(run_dir)
    layout = PipelineRun.at(run)
    if not layout.has_manifest():
        raise FileNotFoundError(f"{run}: no {layout.manifest_path.name} (not a run directory)")
    handle = open_run(run)  # a torn, foreign or list-shaped manifest: one line naming the file and field
    data = ReportData(run_dir=run, manifest=_read_json(layout.manifest_path) or {})
    config_path = layout.config_path
    if config_path.exists():
        config = load_yaml(config_path, what="pipeline config")
        data.config = config if isinstance(config, dict) else {}
    data.stages = data.manifest.get("stages", {})
    _read_stage_outputs(data, handle if isinstance(handle, PipelineRun) else None)

    corpus_dir = _dir_of(run, data.output(CorpusOutput))
    if corpus_dir is not None:
        corpus = CorpusRun.at(corpus_dir)
        data.corpus_report = corpus.report() if corpus.has_report() else None
    if data.output(CorpusOutput) is not None and data.corpus_report is None:
        name = CorpusRun.at(run).report_path.name
        data.missing["corpus"] = f"stage corpus ran, but its {name} is not in {run} (moved or deleted)"
    firehose = data.output(FirehoseOutput)
    data.races = _races_with_reasons(run, firehose) if firehose is not None else None
    eval_dirs = {}
    for model, label in ((EvalOutput, "base"), (StudentEvalOutput, "student")):
        eval_dirs[label] = eval_dir = _dir_of(run, data.output(model))
        summary = EvalRun.at(eval_dir) if eval_dir is not None else None
        if summary is not None and summary.summary_path.is_file():
            try:
                data.evals[label] = summary.summary()
            except RunFileError as exc:  # not an EvalSummary: its section says so, naming the field
                data.missing[model.stage] = str(exc)
        elif data.output(model) is not None:
            name = EvalRun.at(run).summary_path.name
            data.missing[model.stage] = (
                f"stage {model.stage} ran, but its {name} is not in {run} (moved, deleted)"
            )
    base_dir, student_dir = eval_dirs["base"], eval_dirs["student"]
    if "base" in data.evals and "student" in data.evals and base_dir and student_dir:
        from shoparena.eval.compare import CompareError, compare_runs
        from shoparena.eval.config import EvalConfigError

        try:
            data.comparison = compare_runs(base_dir, student_dir)
        except (CompareError, EvalConfigError, OSError, ValueError) as exc:
            data.comparison_error = str(exc)
        data.baskets = _basket_table(data, base_dir, student_dir)
    data.examples = _examples(data, corpus_dir, examples)
    return data


def _basket_table(data: ReportData, base_dir: Path, student_dir: Path) -> BasketTable | None:
    """Student, base, the shortcut floor and the reference planner on the held-out problems, by intent and
    basket size (``eval.baskets``; rows it cannot recompute are in the table's notes); None when the runs
    cannot be read back."""
    from shoparena.eval.baskets import eval_run_table
    from shoparena.eval.compare import CompareError
    from shoparena.eval.config import EvalConfigError

    reference = data.output(ReferenceOutput)
    log = stage_path(data.run_dir, reference.path) if reference is not None else None
    try:
        return eval_run_table({"student": student_dir, "base": base_dir}, {"planner": log} if log else None)
    except (CompareError, EvalConfigError, RunFileError, OSError, ValueError, KeyError) as exc:
        data.missing.setdefault("baskets", f"by basket size: {exc}")
        return None


def _examples(
    data: ReportData, corpus_dir: Path | None, limit: int
) -> list[tuple[str, list[dict[str, Any]]]]:
    """Conversations to show: kept corpus rows when a corpus exists, else the reference planner's episodes."""
    if limit <= 0:
        return []
    out: list[tuple[str, list[dict[str, Any]]]] = []
    if corpus_dir is not None:
        path = CorpusRun.at(corpus_dir).view_file("sft", "train", "jsonl")
        if path.exists():
            for line_no, row in iter_jsonl(path):
                if isinstance(row, ValueError):
                    raise RunFileError(f"{path}:{line_no}: torn or corrupt line ({row})")
                if isinstance(row, dict) and row.get("outcome") == "kept":
                    out.append(
                        (f"corpus {row.get('record_id', '')} ({row.get('category', '')})", row["messages"])
                    )
                if len(out) >= limit:
                    return out
    reference = data.output(ReferenceOutput)
    reference_path = stage_path(data.run_dir, reference.path) if reference is not None else None
    if reference_path is not None and reference_path.is_file():
        from shoparena.formats.io import read_trajectories

        for traj in read_trajectories(reference_path):
            out.append(
                (f"reference planner on {traj.problem_id} ({traj.status.value})", trajectory_messages(traj))
            )
            if len(out) >= limit:
                break
    return out


def trajectory_messages(traj: Trajectory) -> list[dict[str, Any]]:
    """A trajectory as the report shows it: :func:`shoparena.formats.native.trajectory_to_chat`'s messages
    (the one trajectory → chat), read for a person: no system turn, a step's reasoning as the assistant's text
    with its answer as a second assistant turn after the step's tool results, each tool turn labelled with the
    name of the call it answers."""
    names: dict[Any, Any] = {}
    out: list[dict[str, Any]] = []
    answer = ""  # the current step's answer, shown after its tool results
    for message in trajectory_to_chat(traj):
        role = message.get("role")
        if role == "assistant":
            if answer:
                out.append({"role": "assistant", "content": answer})
            calls = message.get("tool_calls") or []
            names.update((call["id"], call["function"]["name"]) for call in calls)
            reasoning, content = message.get("reasoning_content") or "", message.get("content") or ""
            out.append({"role": "assistant", "content": reasoning or content, "tool_calls": calls})
            answer = content if reasoning else ""
        elif role == "tool":
            out.append(
                {
                    "role": "tool",
                    "name": names.get(message.get("tool_call_id")),
                    "content": message["content"],
                }
            )
        elif role != "system":
            out.append(message)
    if answer:
        out.append({"role": "assistant", "content": answer})
    return out
