"""Every run directory is opened through one typed handle: :func:`open_run` reads ``manifest.json`` and
returns the handle its ``kind`` names.

A handle knows its directory's layout: the file names live in the module of the layer that writes the kind
(``arena.layout`` for arena runs and firehose races, ``eval.layout`` for eval runs, ``corpus.layout``,
``train.layout``, ``pipeline.layout``), and readers ask the handle (``run.agents()``, ``run.verdicts(agent)``,
``run.summary()``, ...) instead of joining names themselves. ``tests/test_run_layout_owner.py`` fails when a
run-directory file name is spelt in a second module.

The owners register their handle class here (:func:`register_run_kind`) when their module is imported, so this
layer never imports upwards. A kind whose owner is not imported opens as the generic handle of its family
that this layer knows (:class:`EnvelopeLogRun` for the runs whose trajectories are one envelope log: episodes
and eval runs; :class:`RunHandle` for the rest), which is all a lower layer can use of it anyway.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar, TypeVar

from shoparena.records.episode import ScoringInputs
from shoparena.runs.envelopes import envelope_log_path
from shoparena.runs.files import RunFileError, read_yaml_record
from shoparena.runs.manifest import (
    CONFIG_NAME,
    SUMMARY_NAME,
    ManifestError,
    RunManifest,
    manifest_from_data,
    manifest_path,
    read_manifest,
    read_manifest_data,
)

H = TypeVar("H", bound="RunHandle")


class RunHandle:
    """An opened run directory: its path, its manifest (None for a directory opened without one, by a
    writer or a reader that tolerates it) and the files every run has (``config.yaml``, ``summary.json``).

    Subclasses set :attr:`kinds` (the manifest kinds they open) and :attr:`manifest_model` (the model the
    manifest is read as).
    """

    kinds: ClassVar[tuple[str, ...]] = ()
    manifest_model: ClassVar[type[RunManifest]] = RunManifest

    def __init__(self, path: str | Path, manifest: RunManifest | None = None) -> None:
        self.path = Path(path)
        self.manifest = manifest

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self.path)!r})"

    @classmethod
    def at(cls: type[H], path: str | Path) -> H:
        """The layout of ``path`` without reading its manifest (a writer, or a directory that has none)."""
        return cls(path, None)

    @classmethod
    def open(cls: type[H], path: str | Path) -> H:
        """``path`` with its manifest read as :attr:`manifest_model`.

        Raises:
            ManifestError: no manifest, a torn one, or one of a kind this class does not open.
        """
        return cls._checked(path, read_manifest(path, cls.manifest_model))

    @classmethod
    def _checked(cls: type[H], path: str | Path, manifest: RunManifest) -> H:
        if cls.kinds and manifest.kind not in cls.kinds:
            wanted = " or ".join(cls.kinds)
            raise ManifestError(
                f"{manifest_path(path)}: kind: a {manifest.kind!r} run directory, not {wanted}"
            )
        return cls(path, manifest)

    @property
    def kind(self) -> str:
        return self.manifest.kind if self.manifest is not None else (self.kinds[0] if self.kinds else "")

    @property
    def run_id(self) -> str:
        """The manifest's run id (the directory name when there is no manifest)."""
        return self.manifest.run_id if self.manifest is not None else self.path.name

    @property
    def manifest_path(self) -> Path:
        return manifest_path(self.path)

    @property
    def config_path(self) -> Path:
        """The resolved config the run was started with."""
        return self.path / CONFIG_NAME

    @property
    def summary_path(self) -> Path:
        return self.path / SUMMARY_NAME

    def has_manifest(self) -> bool:
        return self.manifest_path.is_file()

    def need(self, path: Path, what: str) -> Path:
        """``path`` when it is a file, else :class:`RunFileError` naming it and what it holds."""
        if not path.is_file():
            raise RunFileError(f"{path}: missing ({what})")
        return path


class EnvelopeLogRun(RunHandle):
    """A run whose trajectories are one ORO envelope log (``runs.envelopes``): episodes and eval runs."""

    kinds = ("episodes", "eval")

    @property
    def envelope_log(self) -> Path:
        return envelope_log_path(self.path)

    def scoring_inputs(self) -> ScoringInputs | None:
        """The suite, index and similarity of ``config.yaml`` (keys an episodes run and an eval run both
        write; the owner's handle reads them from its own config model). None: no config."""
        if not self.config_path.is_file():
            return None
        return read_yaml_record(self.config_path, ScoringInputs)


#: kind → handle class; filled by the owners' modules (:func:`register_run_kind`).
_HANDLES: dict[str, type[RunHandle]] = {}
#: What a kind opens as while its owner is not imported.
_FAMILIES: dict[str, type[RunHandle]] = {"episodes": EnvelopeLogRun, "eval": EnvelopeLogRun}


def register_run_kind(cls: type[H]) -> type[H]:
    """Class decorator: ``open_run`` opens every kind in ``cls.kinds`` as ``cls``. A kind has one owner."""
    for kind in cls.kinds:
        owner = _HANDLES.get(kind)
        if owner is not None and owner.__qualname__ != cls.__qualname__:
            raise ValueError(
                f"run kind {kind!r} is already opened by {owner.__module__}.{owner.__qualname__}"
            )
        _HANDLES[kind] = cls
    return cls


def handle_class(kind: str) -> type[RunHandle]:
    """The handle class of ``kind`` (the generic one of its family while its owner is not imported)."""
    return _HANDLES.get(kind) or _FAMILIES.get(kind) or RunHandle


def open_run(path: str | Path, expect: type[H] = RunHandle) -> H:  # type: ignore[assignment]
    """The run directory ``path`` as the handle of its manifest's ``kind``.

    Args:
        expect: A handle class the run must be (a subclass of): a reader that needs arena races passes
            ``ArenaRun`` and gets a one-line error for an eval run instead of a wrong read.

    Raises:
        ManifestError: no ``manifest.json``, a torn one, or a kind that is not ``expect`` (names the file).
    """
    data = read_manifest_data(path)  # read once: the header picks the handle, which validates the same object
    where = manifest_path(path)
    header = manifest_from_data(data, RunManifest, where)
    cls = handle_class(header.kind)
    if not issubclass(cls, expect):
        wanted = " or ".join(expect.kinds) or expect.__name__
        raise ManifestError(f"{where}: kind: a {header.kind!r} run directory, not {wanted}")
    return cls._checked(path, manifest_from_data(data, cls.manifest_model, where))


__all__ = [
    "EnvelopeLogRun",
    "RunHandle",
    "handle_class",
    "open_run",
    "register_run_kind",
]
