"""The layout of a pipeline run directory (``pipeline run``, ``make run``): the one module that spells its
names.

::

    identity.json  config.yaml  manifest.json (stages with their hashes and outputs)  summary.json
    <stage>/<stage hash>/...   each stage's own run directory (corpus, train, eval runs, firehose races)
    report.html

``pipeline.run`` writes it; the report reads it through :class:`PipelineRun` (stage outputs resolved inside
the run directory, wherever it was moved).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from shoparena.pipeline.outputs import OutputT
from shoparena.runs.files import RunFileError, read_json_record, validation_detail
from shoparena.runs.layout import RunHandle, register_run_kind
from shoparena.runs.rundir import from_run_relative

REPORT_HTML_NAME = "report.html"
#: The bank stage's problem bank (``bank/<hash>/bank.json``, its knowledge file beside it).
BANK_NAME = "bank.json"


class StageSummary(BaseModel):
    """One stage in ``summary.json``: how it ended, its hash and what it recorded."""

    model_config = ConfigDict(extra="forbid")

    status: str  # ran | resumed | unavailable | blocked | failed
    hash: str | None = None
    seconds: float = 0.0
    reason: str = ""
    outputs: dict[str, Any]


class PipelineSummary(BaseModel):
    """``summary.json`` of a pipeline run (written by ``pipeline.run`` at the end of every run)."""

    model_config = ConfigDict(extra="forbid")

    run_dir: str
    preset: str
    stages: dict[str, StageSummary]
    report: str | None = None  # report.html, when the command rendered one
    report_fingerprint: str | None = None  # what that render saw (an equal one skips the next render)
    seconds: float


@register_run_kind
class PipelineRun(RunHandle):
    """A pipeline run directory."""

    kinds = ("pipeline",)

    @property
    def report_html(self) -> Path:
        return self.path / REPORT_HTML_NAME

    def stage_outputs(self, stage: str) -> dict[str, Any] | None:
        """What ``stage`` recorded in the manifest (``./`` paths as written; None: it has not run)."""
        record = self.manifest.stages.get(stage) if self.manifest is not None else None
        return record.outputs if record is not None else None

    def stage_output(self, model: type[OutputT]) -> OutputT | None:
        """What the stage that writes ``model`` recorded, as ``model`` (``./`` paths as written; None: it has
        not run).

        Raises:
            RunFileError: the recorded outputs are not a ``model`` (names the manifest, stage and field).
        """
        outputs = self.stage_outputs(model.stage)
        if outputs is None:
            return None
        try:
            return model.model_validate(outputs)
        except ValidationError as exc:
            raise RunFileError(
                f"{self.manifest_path}: stage {model.stage}'s outputs are not a {model.__name__} "
                f"({validation_detail(exc)})"
            ) from None

    def resolve(self, value: Any) -> Any:
        """A recorded output with its ``./`` paths made paths inside this run directory."""
        return from_run_relative(value, self.path)

    def summary(self) -> PipelineSummary | None:
        """``summary.json`` (None when the run has not written one yet).

        Raises:
            RunFileError: it is torn or not a :class:`PipelineSummary` (names the file and the field).
        """
        return read_json_record(self.summary_path, PipelineSummary) if self.summary_path.is_file() else None


__all__ = ["BANK_NAME", "REPORT_HTML_NAME", "PipelineRun", "PipelineSummary", "StageSummary"]
