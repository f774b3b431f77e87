"""What a run directory is: its kind and the hash of its resolved config and its inputs' content.

``identity.json`` (:class:`RunIdentity`) is written the first time a command claims a directory and checked on
every later claim, before the command writes anything (:func:`claim_run_dir`):

* the same kind, config and inputs: the run resumes;
* another kind (also read from a directory's ``manifest.json``), an output that is or lies inside one of the
  inputs (or holds one), a file, a symbolic link, a non-empty directory that no run wrote: refused, nothing
  written (:func:`refuse_foreign_destination` is the same rule for a destination that is not a run);
* the same kind with another config or other inputs: refused with a one-line :class:`RunDirError` that names
  what differs, unless ``restart`` clears the directory's own outputs (never anything else) first; a run
  that failed before writing any result (no summary, none of its own outputs) is started over without it.

Inputs are identified by content (:func:`fingerprint`), never by position or path, so a race rebuilt in place
or another race at the same path is a different input, and a moved input is the same one. :class:`RunLock`
keeps two processes out of one directory (an ``flock`` on ``run.lock``, released by the kernel when its holder
dies, so a stale lock never blocks; the file names the holder's pid for the message).
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import os
import shutil
from collections.abc import Iterable, Mapping
from enum import StrEnum
from pathlib import Path
from typing import IO, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from shoparena.jsonl import HASH_BLOCK, sha256_file
from shoparena.records.unicode import dump_json, escape_lone_surrogates
from shoparena.runs.manifest import CONFIG_NAME, MANIFEST_NAME, SUMMARY_NAME

IDENTITY_NAME = "identity.json"
LOCK_NAME = "run.lock"

#: Names never hashed as part of an input directory: scratch, resume state and copies that do not change
#: what the input holds (a corpus's ``work/`` and ``publish/`` staging, a training run's ``checkpoints/``),
#: and the bookkeeping of this module.
_SKIP_NAMES = frozenset({"work", "checkpoints", "publish", LOCK_NAME, "__pycache__"})
_SKIP_SUFFIXES = (".tmp",)


class RunKind(StrEnum):
    """The kinds of run directory (``manifest.json``'s ``kind`` and ``identity.json``'s)."""

    EPISODES = "episodes"
    ARENA = "arena"
    FIREHOSE = "firehose"
    INDEX = "index"
    PARTITION = "partition"
    CORPUS = "corpus"
    TRAIN_SFT = "train-sft"
    TRAIN_GRPO = "train-grpo"
    TRAIN_KTO = "train-kto"
    EVAL = "eval"
    PIPELINE = "pipeline"
    PUBLISH = "publish"


class RunDirError(ValueError):
    """A run directory that cannot be used as asked; the message is one line naming the directory."""


class RunIdentity(BaseModel):
    """``identity.json``: the kind, and what the run's outputs are a function of."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = 1
    kind: RunKind
    config_hash: str
    inputs_hash: str
    config: dict[str, Any] = Field(
        default_factory=dict, description="The resolved config hashed (for naming what differs)."
    )
    inputs: dict[str, str] = Field(default_factory=dict, description="Input name -> content fingerprint.")

    @classmethod
    def of(
        cls, kind: RunKind | str, config: Mapping[str, Any], inputs: Mapping[str, str | Path | None]
    ) -> RunIdentity:
        """The identity of a run of ``kind`` over ``config`` (JSON-able, without input paths and ``out``)
        and ``inputs`` (name -> path, fingerprinted by content; None: not given)."""
        # A lone surrogate (an argument the shell could not decode) is recorded as its escape.
        config = escape_lone_surrogates(json.loads(json.dumps(dict(config), sort_keys=True, default=str)))
        prints = {name: fingerprint(path) for name, path in inputs.items() if path is not None}
        return cls(
            kind=RunKind(kind),
            config_hash=_digest(config),
            inputs_hash=_digest(prints),
            config=config,
            inputs=prints,
        )

    def differences(self, other: RunIdentity) -> list[str]:
        """What ``other`` (the new run) changes: dotted config keys with old -> new values, then inputs."""
        out = []
        old, new = _flatten(self.config), _flatten(other.config)
        for key in sorted(old.keys() | new.keys()):
            if old.get(key, _MISSING) != new.get(key, _MISSING):
                out.append(f"{key}: {_short(old.get(key, _MISSING))} -> {_short(new.get(key, _MISSING))}")
        for name in sorted(self.inputs.keys() | other.inputs.keys()):
            if name not in other.inputs:
                out.append(f"input {name}: removed")
            elif name not in self.inputs:
                out.append(f"input {name}: added")
            elif self.inputs[name] != other.inputs[name]:
                out.append(f"input {name}: other content")
        if not out and self.config_hash != other.config_hash:
            out.append("config: other content")
        return out


_MISSING = "<unset>"


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, dict) and value:
        flat: dict[str, Any] = {}
        for key, item in value.items():
            flat.update(_flatten(item, f"{prefix}{key}."))
        return flat
    return {prefix.rstrip("."): value}


def _short(value: Any) -> str:
    text = json.dumps(value, default=str) if value is not _MISSING else _MISSING
    return text if len(text) <= 40 else text[:37] + "..."


def fingerprint(path: str | Path) -> str:
    """The content hash of a file (sha256) or a directory (every file's relative path and sha256, skipping
    scratch and resume state); ``missing`` when nothing is there."""
    path = Path(path)
    if path.is_file():
        return sha256_file(path)
    if not path.is_dir():
        return "missing"
    digest, buffer = hashlib.sha256(), bytearray(HASH_BLOCK)
    # Files in the order of their relative paths' parts (what sorting the Paths gave), walked with scandir:
    # a firehose holds thousands of small files, and Path objects cost more than hashing them.
    for parts in sorted(_tree(str(path), ())):
        digest.update("/".join(parts).encode() + b"\0")
        digest.update(sha256_file(os.path.join(path, *parts), buffer).encode() + b"\n")
    return digest.hexdigest()


def _tree(root: str, parts: tuple[str, ...]) -> Iterable[tuple[str, ...]]:
    """Relative paths (as parts) of the input's own files under ``root``: scratch, resume state and linked
    folders skipped (a linked folder is not the input's own, and may loop)."""
    with os.scandir(root) as entries:
        for entry in entries:
            name = entry.name
            if name in _SKIP_NAMES or name.endswith(_SKIP_SUFFIXES) or name == IDENTITY_NAME:
                continue
            if entry.is_dir():
                if not entry.is_symlink():
                    yield from _tree(entry.path, (*parts, name))
            elif entry.is_file():
                yield (*parts, name)


def read_identity(run_dir: str | Path) -> RunIdentity | None:
    """``run_dir/identity.json`` as a model; None when there is none.

    Raises:
        RunDirError: the file is torn or not an identity (names the file and field).
    """
    path = Path(run_dir) / IDENTITY_NAME
    if not path.is_file():
        return None
    try:
        return RunIdentity.model_validate_json(path.read_bytes())
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "<root>"
        raise RunDirError(f"{path}: not a run identity: {where}: {err['msg']}") from None


def _write_identity(identity: RunIdentity, run_dir: Path) -> None:
    path = run_dir / IDENTITY_NAME
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(dump_json(identity, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def _manifest_kind(run_dir: Path) -> str | None:
    try:
        data = json.loads((run_dir / MANIFEST_NAME).read_bytes())
    except (OSError, ValueError):
        return None
    kind = data.get("kind") if isinstance(data, dict) else None
    return kind if isinstance(kind, str) else None


def _inside(child: Path, parent: Path) -> bool:
    return child == parent or parent in child.parents


def refuse_output_over_inputs(out: str | Path, inputs: Iterable[str | Path | None], *, option: str) -> None:
    """Refuse an output directory that is an input, lies inside one, or holds one (checked on resolved
    paths, so links and ``..`` count).

    Raises:
        RunDirError: naming the option, the output and the input.
    """
    target = Path(out).resolve()
    for item in inputs:
        if item is None:
            continue
        src = Path(item).resolve()
        if target == src:
            raise RunDirError(f"{option} {out} is the input {item}; writing there would destroy it")
        if _inside(target, src):
            raise RunDirError(f"{option} {out} lies inside the input {item}; use a directory outside it")
        if _inside(src, target):
            raise RunDirError(f"{option} {out} holds the input {item}; writing there would overwrite it")


def refuse_foreign_destination(
    out: str | Path,
    *,
    markers: Iterable[str],
    input_paths: Iterable[str | Path | None] = (),
    option: str = "--out",
) -> None:
    """Refuse a destination a command would replace but did not write: a symbolic link, a file, an input
    (or a folder in, or around, one), or a non-empty folder that holds none of ``markers`` (the names the
    command itself leaves there: a model folder's manifest, an index's).

    Raises:
        RunDirError: one line naming the option, the destination and the reason; nothing was touched.
    """
    path = Path(out)
    if path.is_symlink():
        raise RunDirError(f"{option} {out} is a symbolic link; give the directory itself")
    refuse_output_over_inputs(path, input_paths, option=option)
    if path.exists() and not path.is_dir():
        raise RunDirError(f"{option} {out} is a file, not a directory")
    if path.is_dir():
        names = sorted(p.name for p in path.iterdir())
        if names and not any((path / marker).exists() for marker in markers):
            shown = ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
            raise RunDirError(
                f"{option} {out} is not empty and was not written by this command ({shown}); "
                "use an empty or new directory"
            )


#: ``claim_run_dir``'s ``restart``: False (resume or refuse), True (always start over), ``"changed"``.
Restart = bool | Literal["changed"]


class RunClaim:
    """A claimed run directory: whether an earlier run is resumed, and the lock held until :meth:`release`
    (or the end of a ``with`` block, or the process)."""

    def __init__(self, path: Path, resumed: bool, lock: RunLock) -> None:
        self.path, self.resumed, self.lock = path, resumed, lock

    def release(self) -> None:
        self.lock.release()

    def __enter__(self) -> RunClaim:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def claim_run_dir(
    out: str | Path,
    identity: RunIdentity,
    *,
    own: Iterable[str],
    input_paths: Iterable[str | Path | None] = (),
    restart: Restart = False,
    option: str = "--out",
) -> RunClaim:
    """Check ``out`` for a run of ``identity``, lock it, and only then record the identity (or start over).

    Args:
        own: The names this kind of run writes at the top of its directory (``restart`` removes these and
            nothing else; a non-empty directory of other names that holds no run is refused).
        input_paths: The paths read (an output over, inside or around one is refused).
        restart: True: start over, removing the ``own`` outputs of a run of the same kind whatever its
            identity; ``"changed"``: start over only when the identity differs (a caller that already knows
            the old outputs are stale: a pipeline stage keyed by its hash), else resume.

    Returns:
        The claim: ``resumed`` is True when an earlier run of the same identity goes on; its lock is held.

    Raises:
        RunDirError: one line, naming the directory and what is wrong (what differs, for a changed run);
            :class:`RunLockedError` when another live process holds the directory.
    """
    path = Path(out)
    if path.is_symlink():  # a resume or restart would write (or clear) wherever the link points
        raise RunDirError(f"{option} {out} is a symbolic link; give the directory itself")
    refuse_output_over_inputs(path, input_paths, option=option)
    explicit = frozenset(own)
    own_names = {*explicit, IDENTITY_NAME, LOCK_NAME, MANIFEST_NAME, CONFIG_NAME, SUMMARY_NAME}
    if path.exists() and not path.is_dir():
        raise RunDirError(f"{option} {out} is a file, not a directory")
    _check(path, identity, own_names, restart, option, explicit)  # refused here, nothing was written
    lock = RunLock(path).acquire()  # before clearing: never start over under a live run
    try:
        # Again under the lock: a run that finished between the first check and the lock is seen.
        found, start_over = _check(path, identity, own_names, restart, option, explicit)
        if not start_over:  # a resume writes into its outputs: never through a link out of the directory
            _refuse_links_out(path, own_names, option)
        if start_over:
            for name in own_names - {LOCK_NAME}:
                _remove(path / name)
                _remove(path / f"{name}.tmp")
        _write_identity(identity, path)
    except BaseException:
        lock.release()
        raise
    # A run from before identities (a manifest of this kind, no identity.json) is adopted as it is.
    return RunClaim(path, resumed=not start_over and found == identity.kind.value, lock=lock)


def _check(
    path: Path,
    identity: RunIdentity,
    own_names: set[str],
    restart: Restart,
    option: str,
    explicit_own: frozenset[str] = frozenset(),
) -> tuple[str | None, bool]:
    """The kind found in ``path`` and whether to start over; raises when the directory cannot be used."""
    kind = identity.kind.value
    start_over = restart is True
    if not path.is_dir() or not any(p.name != LOCK_NAME for p in path.iterdir()):
        return None, start_over
    previous = read_identity(path)
    found = previous.kind.value if previous is not None else _manifest_kind(path)
    if found is not None and found != kind:
        raise RunDirError(f"{option} {path} holds a run of kind {found}, not {kind}; use another directory")
    if found is None:
        # No run here: the bookkeeping names every run writes are someone else's too (an index's manifest)
        theirs = own_names - ({MANIFEST_NAME, CONFIG_NAME, SUMMARY_NAME} - explicit_own)
        foreign = sorted(p.name for p in path.iterdir() if p.name not in theirs and p.name[0] != ".")
        if foreign:
            shown = ", ".join(foreign[:3]) + (", ..." if len(foreign) > 3 else "")
            raise RunDirError(f"{option} {path} is not empty and holds no {kind} run ({shown})")
    changed = previous is not None and (
        previous.config_hash != identity.config_hash or previous.inputs_hash != identity.inputs_hash
    )
    # A run that failed before writing any result (a mistyped path, an empty suite) claims nothing: the
    # corrected command starts over instead of being told to pass --restart.
    start_over = start_over or (changed and (restart == "changed" or not _holds_results(path, explicit_own)))
    if changed and not start_over and previous is not None:
        diff = "; ".join(previous.differences(identity)[:4])
        raise RunDirError(
            f"{option} {path} holds a {kind} run of another config or inputs ({diff}); "
            "pass --restart to start it over, or use another directory"
        )
    return found, start_over


def _holds_results(path: Path, explicit_own: frozenset[str]) -> bool:
    """Whether a run directory holds anything a run wrote beyond its bookkeeping (identity, lock, manifest,
    config): a summary, or one of the kind's own outputs that is a non-empty file or directory."""
    if (path / SUMMARY_NAME).exists():
        return True
    for name in explicit_own - {MANIFEST_NAME, CONFIG_NAME, IDENTITY_NAME, LOCK_NAME}:
        entry = path / name
        if entry.is_symlink() or (entry.is_file() and entry.stat().st_size > 0):
            return True
        if entry.is_dir() and any(entry.iterdir()):
            return True
    return False


def _refuse_links_out(path: Path, names: Iterable[str], option: str) -> None:
    """Refuse a run directory whose outputs hold a symbolic link that leaves it (a resume would write, or
    a restart's writes would land, in whatever the link points at)."""
    root = path.resolve()
    for name in sorted(names):
        top = path / name
        candidates = [top]
        if top.is_dir() and not top.is_symlink():
            for folder, dirs, files in os.walk(top):  # never follows links
                candidates.extend(Path(folder) / entry for entry in (*dirs, *files))
        for entry in candidates:
            if not entry.is_symlink():
                continue
            target = entry.resolve()
            if not _inside(target, root):
                raise RunDirError(
                    f"{option} {path}: {entry.relative_to(path)} is a symbolic link to {target}, outside the "
                    "run directory; remove it (a resume would write through it)"
                )


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()


class RunLockedError(RunDirError):
    """Another live process holds the run directory."""


class RunLock:
    """An exclusive lock on a run directory for this process's lifetime in it (``with RunLock(dir):``).

    The lock is an ``flock`` on ``run.lock``: the kernel drops it when the holder exits, however it ends, so
    a lock left by a killed run is stale by construction and the next run takes it over. The file holds the
    holder's pid, which the refusal names.
    """

    def __init__(self, run_dir: str | Path) -> None:
        self.path = Path(run_dir) / LOCK_NAME
        self._file: IO[bytes] | None = None  # a file object: a lock dropped unreleased closes when collected

    def acquire(self) -> RunLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fh = open(self.path, "a+b")  # noqa: SIM115 (held open for the run: the flock lives with it)
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            fh.close()
            if exc.errno not in (errno.EAGAIN, errno.EACCES):
                raise
            holder = self.path.read_text(encoding="utf-8", errors="replace").strip() or "?"
            raise RunLockedError(
                f"{self.path.parent} is in use by another run (pid {holder}); wait for it to finish"
            ) from None
        fh.truncate(0)
        fh.write(f"{os.getpid()}\n".encode())
        fh.flush()
        self._file = fh
        return self

    def release(self) -> None:
        if self._file is not None:
            self._file.close()  # closing drops the flock; the file stays (a stale file blocks nothing)
            self._file = None

    def __enter__(self) -> RunLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


__all__ = [
    "IDENTITY_NAME",
    "LOCK_NAME",
    "Restart",
    "RunClaim",
    "RunDirError",
    "RunIdentity",
    "RunKind",
    "RunLock",
    "RunLockedError",
    "claim_run_dir",
    "fingerprint",
    "read_identity",
    "refuse_foreign_destination",
    "refuse_output_over_inputs",
]
