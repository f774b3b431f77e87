"""Run directories: the typed manifest, resumable stages, ORO envelope logs (the lowest, rollout layer)."""

from shoparena.runs.identity import (
    RunDirError,
    RunIdentity,
    RunKind,
    RunLock,
    RunLockedError,
    claim_run_dir,
)
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
    "RunDirError",
    "RunIdentity",
    "RunKind",
    "RunLock",
    "RunLockedError",
    "RunManifest",
    "StageRecord",
    "claim_run_dir",
    "read_manifest",
    "write_manifest",
]
