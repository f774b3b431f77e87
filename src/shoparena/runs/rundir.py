"""A run directory with resumable stages.

Layout: ``identity.json`` (kind, config and input hashes: :mod:`shoparena.runs.identity`, checked before
anything is written), ``run.lock``, ``config.yaml`` (resolved config), ``manifest.json`` (versions, git sha,
stages with their config hashes and outputs), stage outputs, ``summary.json``. A stage whose config hash
matches a completed record is skipped on re-run, so running the same command twice resumes instead of
redoing work.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel

from shoparena.runs.identity import Restart, RunIdentity, claim_run_dir
from shoparena.runs.manifest import (
    CONFIG_NAME,
    SUMMARY_NAME,
    RunManifest,
    StageRecord,
    load_or_new,
    write_manifest,
)


def config_hash(payload: Any) -> str:
    """Stable hash of a JSON-serialisable stage configuration."""
    blob = json.dumps(payload, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


#: Prefix of a stage output path stored relative to its run directory (see :func:`run_relative`).
RUN_RELATIVE = "./"


def _as_strings(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _as_strings(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_as_strings(v) for v in value]
    return str(value) if isinstance(value, Path) else value


def run_relative(value: Any, root: Path) -> Any:
    """``value`` (a stage's outputs) with every string that names an existing path inside ``root`` stored as
    ``./<path relative to root>``: the manifest then finds its outputs from any working directory, and a
    copied or moved run directory still points into itself (never into another run)."""
    if isinstance(value, dict):
        return {k: run_relative(v, root) for k, v in value.items()}
    if isinstance(value, list):
        return [run_relative(v, root) for v in value]
    if not isinstance(value, str) or not value or value.startswith(RUN_RELATIVE) or "\n" in value:
        return value
    try:
        path = Path(value)
        if not path.exists():
            return value
        inner = path.resolve().relative_to(root.resolve())
    except (OSError, ValueError):  # not a path, or a path outside the run
        return value
    return RUN_RELATIVE + inner.as_posix()


def from_run_relative(value: Any, root: Path) -> Any:
    """The inverse of :func:`run_relative`: ``./x`` becomes the path ``root / x``; anything else unchanged."""
    if isinstance(value, dict):
        return {k: from_run_relative(v, root) for k, v in value.items()}
    if isinstance(value, list):
        return [from_run_relative(v, root) for v in value]
    if isinstance(value, str) and value.startswith(RUN_RELATIVE):
        return root / value[len(RUN_RELATIVE) :]
    return value


class RunDir:
    """A resumable run directory: ``config.yaml`` (the resolved config) and ``manifest.json``.

    A subclass with its own manifest sets :attr:`manifest_model` and reuses this setup.
    """

    #: The manifest class read back (or created) in ``manifest.json``.
    manifest_model: type[RunManifest] = RunManifest

    def __init__(
        self,
        path: str | Path,
        *,
        kind: str,
        config: BaseModel,
        identity: RunIdentity | None = None,
        own: Iterable[str] = (),
        input_paths: Iterable[str | Path | None] = (),
        restart: Restart = False,
    ) -> None:
        """Claim ``path`` (:func:`shoparena.runs.identity.claim_run_dir`: refused before any write when it
        holds another kind of run, another config or inputs, or an input), then write the config.

        Args:
            identity: What the run is (default: the kind alone, for a run whose stage hashes already decide
                what a changed config re-runs, as the pipeline's do).
            own: The top-level names this run writes (what ``restart`` clears).
        """
        self.path = Path(path)
        if identity is None:
            identity = RunIdentity.of(kind, {}, {})
        self.claim = claim_run_dir(self.path, identity, own=own, input_paths=input_paths, restart=restart)
        self.resumed = self.claim.resumed
        self.config = config
        (self.path / CONFIG_NAME).write_text(
            yaml.safe_dump(config.model_dump(mode="json"), sort_keys=False), encoding="utf-8"
        )
        self.manifest = load_or_new(self.path, self.manifest_model, kind=kind)
        self._save_manifest()

    def close(self) -> None:
        """Release the directory's lock (a finished or failed run; the process's end does it too)."""
        self.claim.release()

    def _save_manifest(self) -> None:
        write_manifest(self.manifest, self.path)

    def done(self, stage: str, stage_config: Any) -> StageRecord | None:
        """The completed record of ``stage`` if its config is unchanged, else None (the stage must run)."""
        record = self.manifest.stages.get(stage)
        if record is not None and record.config_hash == config_hash(stage_config):
            # Stage outputs come back as paths from here (they are stored relative to the run directory).
            outputs = from_run_relative(record.outputs, self.path)
            return record.model_copy(update={"outputs": _as_strings(outputs)})
        return None

    def complete(
        self,
        stage: str,
        stage_config: Any,
        started: float,
        outputs: dict[str, Any],
        *,
        invalidate_later: bool = True,
    ) -> StageRecord:
        """Record ``stage`` as done. A linear run (``invalidate_later``) forgets every stage recorded after
        it; a stage DAG passes False because its stage hashes already carry their inputs' hashes."""
        record = StageRecord(
            name=stage,
            config_hash=config_hash(stage_config),
            completed_at=time.time(),
            seconds=round(time.time() - started, 3),
            outputs=run_relative(outputs, self.path),
        )
        self.manifest.stages[stage] = record
        if not invalidate_later:
            self._save_manifest()
            return record
        # Later stages depend on this one: a redone stage invalidates everything recorded after it.
        names = list(self.manifest.stages)
        for later in names[names.index(stage) + 1 :]:
            del self.manifest.stages[later]
        self._save_manifest()
        return record

    def write_summary(self, summary: dict[str, Any]) -> Path:
        path = self.path / SUMMARY_NAME
        path.write_text(json.dumps(summary, indent=2, default=str), encoding="utf-8")
        return path
