"""The output guard every command that writes a file or folder goes through (the run-directory claim's rules,
for single files too), checked before anything is opened for writing:

* never **through a symbolic link** (``--out LINK`` would write wherever the link points);
* never **over or inside its own inputs** (the same file, also through links; a path inside an input
  folder, such as ``report RUN --out RUN/manifest.json`` or ``score --out INDEX/manifest.json``; a folder
  output that holds an input);
* never over **a run's or an index's own files** (``manifest.json``, ``identity.json``, ``config.yaml``, ...
  in a folder that holds a ``manifest.json`` or ``identity.json``), whatever the inputs;
* a file output is never a folder, a folder output never a file;
* an existing, non-empty file is replaced only when it is what the command writes (``own``: a quarantine
  file, verdicts, a report page), never a file of someone else's.

Files are then written under a temporary name beside the target and renamed over it when complete
(:class:`shoparena.jsonl.LineWriter`, :func:`write_text_atomic`): a failed or killed command never leaves a
truncated or torn file, and an existing file is replaced only by a whole new one.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path

import orjson

from shoparena.jsonl import open_binary, temp_sibling
from shoparena.runs.identity import IDENTITY_NAME
from shoparena.runs.manifest import MANIFEST_NAME

#: A folder holding one of these is a run or an index: its existing files are its own, never an output
#: (the names themselves live in their owners' modules).
_MARKERS = (MANIFEST_NAME, IDENTITY_NAME)


class OutputPathError(ValueError):
    """An output path the guard refuses (one line naming the option, the path and why; exit 2 at the CLI)."""


def _inside(path: Path, folder: Path) -> bool:
    try:
        path.relative_to(folder)
    except ValueError:
        return False
    return True


def check_output(
    path: str | Path,
    inputs: Iterable[str | Path | None] = (),
    *,
    option: str = "--out",
    folder: bool = False,
    allow: Iterable[str | Path] = (),
    own: Callable[[Path], bool] | None = None,
) -> Path:
    """Refuse ``path`` as an output before anything is written; returns it.

    Args:
        path: The file (or, with ``folder``, the folder) to write.
        inputs: The command's inputs (files or folders; None skipped).
        option: The option named in the error.
        folder: The output is a folder (it may not hold an input either).
        allow: Paths inside an input folder that this command itself owns (``report``'s default
            ``RUN/report.html``).
        own: Recognises a file this command wrote (:func:`jsonl_with_keys`, :func:`text_with`); an
            existing non-empty file it does not recognise is refused. None: any file may be replaced.

    Raises:
        OutputPathError: one line naming ``option``, ``path`` and the reason.
    """
    out = Path(path)
    if out.is_symlink():
        raise OutputPathError(
            f"{option} {path} is a symbolic link (to {os.readlink(out)}); nothing is written through a link: "
            "give the real path"
        )
    if folder and out.exists() and not out.is_dir():
        raise OutputPathError(f"{option} {path} is a file, not a folder")
    if not folder and out.is_dir():
        raise OutputPathError(f"{option} {path} is a folder; give the file to write")
    resolved = out.resolve()
    allowed = {Path(a).resolve() for a in allow}
    for item in inputs:
        if item is None:
            continue
        src = Path(item).resolve()
        if resolved == src or (out.exists() and Path(item).exists() and out.samefile(item)):
            raise OutputPathError(f"{option} {path} is the input {item}; writing it would destroy it")
        if src.is_dir() and _inside(resolved, src) and resolved not in allowed:
            raise OutputPathError(f"{option} {path} lies inside the input {item}; writing it would change it")
        if folder and _inside(src, resolved):
            raise OutputPathError(f"{option} {path} holds the input {item}; writing it would change it")
    parent = resolved.parent
    in_run = any((parent / m).exists() for m in _MARKERS)
    # A run's or index's marker, or a file it already holds that this command does not recognise as its own.
    mine = own is not None and out.is_file() and own(out)
    owned = in_run and (resolved.name in _MARKERS or (out.is_file() and not mine))
    if owned and resolved not in allowed:
        raise OutputPathError(
            f"{option} {path} is a file of the run or index in {parent}; writing it would destroy that run"
        )
    if own is not None and out.is_file() and out.stat().st_size > 0 and not own(out):
        raise OutputPathError(
            f"{option} {path} holds a file this command did not write; nothing was changed: remove it or "
            "give another path"
        )
    return out


def jsonl_with_keys(*keys: str) -> Callable[[Path], bool]:
    """Recognises a JSONL file whose first line is an object with ``keys`` (``.gz`` read as gzip)."""

    def recognise(path: Path) -> bool:
        try:
            with open_binary(path) as fh:
                value = orjson.loads(fh.readline(1 << 20))
        except (OSError, EOFError, ValueError):
            return False
        return isinstance(value, dict) and all(k in value for k in keys)

    return recognise


def text_with(*markers: bytes, within: int = 4096) -> Callable[[Path], bool]:
    """Recognises a file whose first ``within`` bytes hold every one of ``markers``."""

    def recognise(path: Path) -> bool:
        try:
            with open(path, "rb") as fh:
                head = fh.read(within)
        except OSError:
            return False
        return all(m in head for m in markers)

    return recognise


def write_bytes_atomic(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` under a temporary name, then rename it over ``path``."""
    path = Path(path)
    tmp = temp_sibling(path)
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def write_text_atomic(path: str | Path, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` under a temporary name, then rename it over ``path``."""
    return write_bytes_atomic(path, text.encode("utf-8"))


__all__ = [
    "OutputPathError",
    "check_output",
    "jsonl_with_keys",
    "text_with",
    "write_bytes_atomic",
    "write_text_atomic",
]
