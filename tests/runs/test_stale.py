"""Private temp dirs carry their owner's pid; those of dead owners are removed by the next run."""

from __future__ import annotations

import gc
import os
import subprocess
from pathlib import Path

from shoparena.runs.stale import clean_stale_tempdirs, owner_pid, pid_alive, private_tempdir


def _dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def test_owner_pid_parses_only_our_names() -> None:
    assert owner_pid(Path("/tmp/shoparena-sbx-123-abc_9"), "sbx") == 123
    assert owner_pid(Path("/tmp/shoparena-sbx-abc123"), "sbx") is None  # legacy name: left alone
    assert owner_pid(Path("/tmp/shoparena-proxy-123-x"), "sbx") is None


def test_pid_alive() -> None:
    assert pid_alive(os.getpid()) and not pid_alive(_dead_pid()) and not pid_alive(0)


def test_clean_removes_only_dead_owners(tmp_path: Path) -> None:
    dead = tmp_path / f"shoparena-sbx-{_dead_pid()}-abc"
    (dead / "p-1").mkdir(parents=True)
    (dead / "p-1" / "problem.json").write_text("{}")
    alive = tmp_path / f"shoparena-sbx-{os.getppid()}-def"
    alive.mkdir()
    mine = tmp_path / f"shoparena-sbx-{os.getpid()}-ghi"
    mine.mkdir()
    legacy = tmp_path / "shoparena-sbx-q8w7e6r5"
    legacy.mkdir()
    assert clean_stale_tempdirs("sbx", tmp_path) == [dead]
    assert alive.exists() and mine.exists() and legacy.exists()


def test_private_tempdir_is_private_named_and_removed_with_its_owner() -> None:
    class Owner:
        pass

    owner = Owner()
    path = private_tempdir("test", owner=owner)
    assert owner_pid(path, "test") == os.getpid()
    assert path.stat().st_mode & 0o777 == 0o700
    del owner
    gc.collect()
    assert not path.exists()
