"""Leftovers of killed processes: private temp directories named after their owner's pid.

A run that is SIGKILLed cannot clean up, so every temp directory it owns carries its pid
(``shoparena-<kind>-<pid>-<random>``) and the next run removes those whose owner is dead.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import weakref
from pathlib import Path

PREFIX = "shoparena-"


def pid_alive(pid: int) -> bool:
    """True when a process with ``pid`` exists (also one owned by another user)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def owner_pid(path: Path, kind: str) -> int | None:
    """The pid in ``shoparena-<kind>-<pid>-<random>``, or None for other names."""
    head = f"{PREFIX}{kind}-"
    if not path.name.startswith(head):
        return None
    pid, sep, _ = path.name[len(head) :].partition("-")
    return int(pid) if sep and pid.isdigit() else None


def clean_stale_tempdirs(kind: str, root: str | Path | None = None) -> list[Path]:
    """Remove this user's ``shoparena-<kind>-<pid>-*`` temp directories whose process is gone.

    Returns:
        The removed directories.
    """
    removed = []
    base = Path(root or tempfile.gettempdir())
    for path in base.glob(f"{PREFIX}{kind}-*"):
        pid = owner_pid(path, kind)
        if pid is None or pid == os.getpid() or pid_alive(pid):
            continue
        try:
            if path.lstat().st_uid != os.geteuid() or not path.is_dir():
                continue
        except OSError:
            continue
        shutil.rmtree(path, ignore_errors=True)
        removed.append(path)
    return removed


def private_tempdir(kind: str, owner: object | None = None) -> Path:
    """A fresh ``shoparena-<kind>-<pid>-*`` temp directory (mode 0700), after cleaning stale ones.

    Args:
        kind: Short name of what the directory holds (``sbx``, ``proxy``).
        owner: When given, the directory is removed once ``owner`` is garbage collected or the
            interpreter exits, whichever comes first (a SIGKILL is covered by the next run's cleaning).
    """
    clean_stale_tempdirs(kind)
    path = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{kind}-{os.getpid()}-"))
    if owner is not None:
        weakref.finalize(owner, shutil.rmtree, str(path), True)
    return path


__all__ = ["clean_stale_tempdirs", "owner_pid", "pid_alive", "private_tempdir"]
