"""What each pipeline stage hands the stages after it: one record per stage, stored in the run's manifest.

A stage function returns its record; :func:`shoparena.pipeline.dag.run_dag` stores
:meth:`StageOutput.record` (paths made relative to the run directory by :class:`shoparena.runs.RunDir`)
and, on resume, reads it back into the same class, so a later stage reads ``ctx.input(PartitionsOutput)
.heldout_path`` instead of spelling ``ctx.inputs["partitions"]["pools"]["heldout"]["path"]``.

The records dump to exactly the JSON objects the stages returned before they were typed (same keys, same
order, numbers of the type they were computed with: ``int | float`` fields keep an int an int), so a run
directory written before reads back and resumes. Every record allows extra keys: a manifest written by a
newer checkout still reads.
"""

from __future__ import annotations

from typing import Any, ClassVar, TypeVar

from pydantic import BaseModel, ConfigDict

from shoparena.eval.compare import McNemar, PairedDifference
from shoparena.records.corpus import CorpusFunnel

#: A count or a rate as the stage computed it (an int stays an int in the manifest).
Number = int | float


class StageOutput(BaseModel):
    """A stage's recorded outputs. ``stage`` names the stage that writes it (how :meth:`StageContext.input`
    finds it); the base class, with any keys, is what a test's stand-in stage records."""

    model_config = ConfigDict(extra="allow")

    stage: ClassVar[str] = ""

    def record(self) -> dict[str, Any]:
        """The manifest's JSON object: the keys the stage set (an unset optional key is left out)."""
        return self.model_dump(mode="json", exclude_unset=True)


OutputT = TypeVar("OutputT", bound=StageOutput)


class CatalogOutput(StageOutput):
    stage: ClassVar[str] = "catalog"
    path: str
    summary: dict[str, Any]


class IndexOutput(StageOutput):
    stage: ClassVar[str] = "index"
    path: str
    stats: dict[str, Any]


class BankOutput(StageOutput):
    stage: ClassVar[str] = "bank"
    path: str
    report: dict[str, Any]


class PoolOutput(StageOutput):
    path: str
    problems: int
    kind: str


class PartitionsOutput(StageOutput):
    stage: ClassVar[str] = "partitions"
    path: str
    pools: dict[str, PoolOutput]
    public: list[str]

    @property
    def heldout_path(self) -> str:
        """The held-out pool's problem file (the partitions stage refuses a bank without one)."""
        return self.pools["heldout"].path

    def training_side_paths(self) -> list[str]:
        """Every pool's problem file but the held-out and hidden ones, sorted (what the student may see)."""
        return sorted(pool.path for name, pool in self.pools.items() if name not in ("heldout", "hidden"))


class ScoreBlock(StageOutput):
    asr: Number
    n: int
    successes: int


class ReferenceScore(ScoreBlock):
    per_category: dict[str, ScoreBlock]


class ReferenceOutput(StageOutput):
    stage: ClassVar[str] = "reference"
    path: str
    executor: str
    counts: dict[str, Any]
    scores: dict[str, ReferenceScore]


class RaceSummary(StageOutput):
    race_id: str
    status: str
    suite: str
    winner: str
    trajectories: int
    weights: dict[str, Number]
    #: Why the race has no winner (empty when it has one, and in manifests written before it was recorded).
    reason: str = ""


class FirehoseOutput(StageOutput):
    stage: ClassVar[str] = "firehose"
    path: str
    race_dirs: list[str]
    races: list[RaceSummary]
    trajectories: int


class JudgedAgent(StageOutput):
    race: str
    agent: str
    judged: int
    reasoning_quality: Number | None
    final_judge: Number | None


class JudgeOutput(StageOutput):
    stage: ClassVar[str] = "judge"
    judge: str
    agents: list[JudgedAgent]


class CorpusOutput(StageOutput):
    stage: ClassVar[str] = "corpus"
    path: str
    funnel: CorpusFunnel


class ModelOutput(StageOutput):
    stage: ClassVar[str] = "model"
    path: str


class TrainOutput(StageOutput):
    """A training run (the ``sft`` stage, and :func:`shoparena.pipeline.stages.train_policy`'s result)."""

    stage: ClassVar[str] = "sft"
    path: str
    final: str
    train_loss: Number | None
    global_step: int | None
    rows: dict[str, Any]


class PairedVerdicts(StageOutput):
    """The student against another policy on the held-out problems (strict, greedy: ``eval.compare``)."""

    greedy: McNemar
    greedy_asr: PairedDifference


class EvalOutput(StageOutput):
    """An evaluation run (``eval_base``; :class:`StudentEvalOutput` adds the comparisons)."""

    stage: ClassVar[str] = "eval_base"
    path: str
    policy: str
    label: str
    strict_overall: dict[str, Any]


class StudentEvalOutput(EvalOutput):
    stage: ClassVar[str] = "eval_student"
    vs_base: PairedVerdicts | None = None
    vs_shortcut: PairedVerdicts | None = None


__all__ = [
    "BankOutput",
    "CatalogOutput",
    "CorpusOutput",
    "EvalOutput",
    "FirehoseOutput",
    "IndexOutput",
    "JudgeOutput",
    "JudgedAgent",
    "ModelOutput",
    "PairedVerdicts",
    "PartitionsOutput",
    "PoolOutput",
    "RaceSummary",
    "ReferenceOutput",
    "ReferenceScore",
    "ScoreBlock",
    "StageOutput",
    "StudentEvalOutput",
    "TrainOutput",
]
