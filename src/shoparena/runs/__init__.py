"""Run directories: the typed manifest, resumable stages, ORO envelope logs (the lowest, rollout layer)."""

from shoparena.runs.manifest import (
    FileRef,
    ManifestError,
    RunManifest,
    StageRecord,
    read_manifest,
    write_manifest,
)
from shoparena.runs.rundir import RunDir

__all__ = [
    "FileRef",
    "ManifestError",
    "RunDir",
    "RunManifest",
    "StageRecord",
    "read_manifest",
    "write_manifest",
]
