"""The one ``manifest.json`` model of every run directory (episodes, arena, index, partition, quickstart).

Every stage writes a :class:`RunManifest` (or a subclass adding its own typed fields, defined in the stage's
layer) and reads it back as a model through :func:`read_manifest`. Common header: ``kind``, ``run_id``,
``created``, ``versions``, hashed ``inputs``, resumable ``stages``, ``notes``. Writes are atomic (temporary
file + rename), so a killed run leaves the old or the new manifest, never half of one; a manifest that is
empty or torn anyway (copied, truncated by hand) is a :class:`ManifestError`, or is rebuilt by
:func:`load_or_new` when the stage can rebuild it.
"""

from __future__ import annotations

import json
import logging
import platform
import secrets
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

import shoparena
from shoparena.jsonl import sha256_file
from shoparena.runs.files import RunFileError, write_json_record

log = logging.getLogger(__name__)

MANIFEST_NAME = "manifest.json"
#: The resolved config and the summary every run directory writes beside its manifest.
CONFIG_NAME = "config.yaml"
SUMMARY_NAME = "summary.json"

M = TypeVar("M", bound="RunManifest")


class ManifestError(RunFileError):
    """A ``manifest.json`` is missing, empty, torn or of another kind; names the file."""


def new_run_id() -> str:
    """A fresh run id: 12 lowercase hex digits (random)."""
    return secrets.token_hex(6)


def utc_now_iso() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def git_sha() -> str | None:
    """The checkout's HEAD commit, or None outside a git checkout."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            cwd=Path(__file__).resolve().parent,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


class Versions(BaseModel):
    """What produced a run directory."""

    model_config = ConfigDict(extra="forbid")

    shoparena: str = shoparena.__version__
    python: str = Field(default_factory=lambda: sys.version.split()[0])
    platform: str = Field(default_factory=platform.platform)
    git_sha: str | None = None

    @classmethod
    def current(cls) -> Versions:
        return cls(git_sha=git_sha())


class FileRef(BaseModel):
    """A file written or read, with its sha256 (``path`` as recorded: relative to the run directory when the
    file lives in it)."""

    model_config = ConfigDict(extra="forbid")

    path: str
    sha256: str

    @classmethod
    def of(cls, path: str | Path, *, name: str | None = None) -> FileRef:
        return cls(path=name if name is not None else str(path), sha256=sha256_file(path))


class StageRecord(BaseModel):
    """One completed stage of a resumable run (skipped on re-run while its config hash is unchanged)."""

    model_config = ConfigDict(extra="forbid")

    name: str
    config_hash: str
    completed_at: float
    seconds: float
    outputs: dict[str, Any] = Field(default_factory=dict)


class RunManifest(BaseModel):
    """``manifest.json`` of a run directory. Stage-specific manifests subclass it with typed fields."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = 1
    kind: str = Field(description="episodes, arena, index, partition, quickstart, ...")
    run_id: str = Field(default_factory=new_run_id)
    created: str = Field(default_factory=utc_now_iso, description="UTC, ISO 8601, first creation.")
    versions: Versions = Field(default_factory=Versions.current)
    inputs: dict[str, FileRef] = Field(default_factory=dict, description="Input files with their sha256.")
    stages: dict[str, StageRecord] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list)


class EpisodesManifest(RunManifest):
    """``manifest.json`` of an ``episodes run`` directory (beside ``output.jsonl``)."""

    kind: str = "episodes"
    agent: str = ""
    suite_size: int = 0
    suite_hash: str = Field(default="", description="sha256 over the problems' content hashes, in order.")


class ArenaAgentRef(FileRef):
    """One agent file of an arena run (its envelopes: ``agents/<name>/output.jsonl``)."""


class ArenaProxyInfo(BaseModel):
    model_config = ConfigDict(extra="forbid")

    allowed_models: list[str] | None = None
    strict_nonces: bool = False
    backend: str | None = None
    served_model: str | None = Field(
        default=None, description="The run's model: what every inference call was served as."
    )
    inference: dict[str, Any] = Field(
        default_factory=dict, description="Generation limits and per-call timeout (InferenceLimits)."
    )


class ArenaManifest(RunManifest):
    """``manifest.json`` of an ``arena run`` directory. ``inputs["suite"]`` is the suite file."""

    kind: str = "arena"
    suite_problems: int = 0
    agents: dict[str, ArenaAgentRef] = Field(default_factory=dict, description="Run order = race order.")
    isolation: dict[str, Any] = Field(default_factory=dict, description="The sandbox's isolation report.")
    proxy: ArenaProxyInfo = Field(default_factory=ArenaProxyInfo)


def manifest_path(run_dir: str | Path) -> Path:
    """``run_dir/manifest.json`` (a path already naming a ``.json`` file is returned as is)."""
    path = Path(run_dir)
    return path if path.suffix == ".json" else path / MANIFEST_NAME


def read_manifest(run_dir: str | Path, model: type[M] = RunManifest) -> M:  # type: ignore[assignment]
    """Read ``run_dir/manifest.json`` as ``model``; with the base :class:`RunManifest`, the common header of
    any kind of run (stage-specific fields are left out).

    Raises:
        ManifestError: missing, empty, torn (not JSON), or not a ``model`` (names the first bad field).
    """
    return manifest_from_data(read_manifest_data(run_dir, model.__name__), model, manifest_path(run_dir))


def read_manifest_data(run_dir: str | Path, what: str = RunManifest.__name__) -> dict[str, Any]:
    """``run_dir/manifest.json`` as a JSON object, read once (a reader that picks the model by its ``kind``
    validates it with :func:`manifest_from_data`).

    Raises:
        ManifestError: missing, empty, torn (not JSON) or not an object.
    """
    path = manifest_path(run_dir)
    if not path.exists():
        raise ManifestError(f"{path}: no manifest")
    raw = path.read_bytes()
    if not raw.strip():
        raise ManifestError(f"{path}: empty manifest (a run killed while writing it?)")
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise ManifestError(f"{path}: torn or corrupt manifest, not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise ManifestError(f"{path}: not a {what}: expected an object, got {type(data).__name__}")
    return data


def manifest_from_data(data: dict[str, Any], model: type[M], path: Path) -> M:
    """A manifest object (:func:`read_manifest_data`) as ``model``.

    Raises:
        ManifestError: not a ``model`` (names ``path`` and the first bad field).
    """
    if model is RunManifest:
        data = {k: v for k, v in data.items() if k in RunManifest.model_fields}
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "<root>"
        raise ManifestError(f"{path}: not a {model.__name__}: {where}: {err['msg']}") from None


def write_manifest(manifest: RunManifest, run_dir: str | Path, *, indent: int = 2) -> Path:
    """Write the manifest atomically (temporary file, fsync, rename); returns its path."""
    return write_json_record(manifest_path(run_dir), manifest, indent=indent)


def load_or_new(run_dir: str | Path, model: type[M], **fields: Any) -> M:
    """The run directory's manifest as ``model`` (resume), or a new one built from ``fields``.

    A manifest that is empty, torn or unreadable is rebuilt with a warning: the outputs beside it carry the
    progress (completed problems), the manifest only describes the run. A manifest of another ``kind`` is an
    error: a directory is never shared by two kinds of run.
    """
    path = manifest_path(run_dir)
    if path.exists():
        try:
            manifest = read_manifest(path, model)
        except ManifestError as exc:
            if path.read_bytes().strip() and _kind_of(path) not in (None, fields.get("kind")):
                kind = _kind_of(path)
                wanted = fields.get("kind")
                raise ManifestError(f"{path}: belongs to a {kind!r} run, not {wanted!r}") from None
            log.warning("%s; rebuilding it", exc)
        else:
            if "kind" in fields and manifest.kind != fields["kind"]:
                raise ManifestError(f"{path}: belongs to a {manifest.kind!r} run, not {fields['kind']!r}")
            return manifest
    return model(**fields)


def _kind_of(path: Path) -> str | None:
    try:
        data = json.loads(path.read_bytes())
    except ValueError:
        return None
    kind = data.get("kind") if isinstance(data, dict) else None
    return kind if isinstance(kind, str) else None


__all__ = [
    "CONFIG_NAME",
    "MANIFEST_NAME",
    "SUMMARY_NAME",
    "ArenaAgentRef",
    "ArenaManifest",
    "ArenaProxyInfo",
    "EpisodesManifest",
    "FileRef",
    "ManifestError",
    "RunManifest",
    "StageRecord",
    "Versions",
    "git_sha",
    "load_or_new",
    "manifest_path",
    "new_run_id",
    "read_manifest",
    "utc_now_iso",
    "write_manifest",
]
