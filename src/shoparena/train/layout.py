"""The layout of a training run directory (``train run``, the pipeline's SFT stage): the one module that
spells its names.

::

    identity.json  config.yaml  manifest.json (TrainManifest)  summary.json
    logs.jsonl     every TRL log line once, in step order
    checkpoints/   TRL checkpoints (resume)
    final/         the trained model folder, stamped with its render profile

``train.runner`` writes it through :class:`TrainRun`'s paths; readers open it with
:func:`shoparena.runs.layout.open_run`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import Field

from shoparena.runs.files import load_json
from shoparena.runs.layout import RunHandle, register_run_kind
from shoparena.runs.manifest import RunManifest

LOGS_NAME = "logs.jsonl"
CHECKPOINTS_DIR = "checkpoints"
FINAL_DIR = "final"


class TrainManifest(RunManifest):
    """``manifest.json`` of a training run."""

    method: str = ""
    model: str = Field(default="", description="The configured model (name, folder or hub id).")
    data_hash: str = Field(default="", description="sha256 prefix over the selected record ids and the view.")
    rows_used: int = 0
    final: str = ""
    render_profile: str = Field(default="", description="Render profile of the corpus rows trained on.")
    template_hash: str = Field(default="", description="sha256 prefix of the chat template trained with.")
    processes: int = Field(default=1, description="Training processes (a launcher's world size).")
    global_batch: int | None = Field(
        default=None, description="Rows per optimizer step: per-process batch x accumulation x processes."
    )


#: What a training run writes at the top of its directory (``restart`` clears these and nothing else).
OWN_OUTPUTS = (CHECKPOINTS_DIR, LOGS_NAME, FINAL_DIR, FINAL_DIR + ".tmp")


@register_run_kind
class TrainRun(RunHandle):
    """A training run directory (SFT, GRPO or KTO)."""

    kinds = ("train-sft", "train-grpo", "train-kto")
    manifest_model = TrainManifest
    manifest: TrainManifest | None

    @property
    def logs_path(self) -> Path:
        return self.path / LOGS_NAME

    @property
    def checkpoints_dir(self) -> Path:
        return self.path / CHECKPOINTS_DIR

    @property
    def final_dir(self) -> Path:
        """The trained model folder (written last, by rename)."""
        return self.path / FINAL_DIR

    def summary(self) -> dict[str, Any]:
        """``summary.json``: losses, steps, rows and throughput (a JSON object)."""
        return load_json(self.summary_path, what="training summary")

    def write_summary(self, summary: dict[str, Any]) -> Path:
        self.summary_path.write_text(json.dumps(summary, indent=2, default=str), encoding="utf-8")
        return self.summary_path


__all__ = ["OWN_OUTPUTS", "TrainManifest", "TrainRun"]
