"""Run identity: content fingerprints, what-differs messages, claims refused before any write, restart
clearing only the run's own outputs, and the run lock (a live holder refuses, a killed one does not)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from shoparena.runs.identity import (
    IDENTITY_NAME,
    RunDirError,
    RunIdentity,
    RunLock,
    RunLockedError,
    claim_run_dir,
    fingerprint,
    read_identity,
)

SRC = Path(__file__).resolve().parents[2] / "src"


def _ident(config=None, **inputs) -> RunIdentity:
    return RunIdentity.of("corpus", config or {"gates": {"min": 1}}, inputs)


def test_fingerprint_is_content_not_position(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    for root in (a, b):
        (root / "agents").mkdir(parents=True)
        (root / "agents" / "out.jsonl").write_text("{}\n")
    assert fingerprint(a) == fingerprint(b)  # another path, same content
    (b / "work").mkdir()
    (b / "work" / "cache.jsonl").write_text("scratch")  # scratch does not count
    (b / "x.tmp").write_text("partial")
    assert fingerprint(a) == fingerprint(b)
    (b / "agents" / "out.jsonl").write_text("{}\n{}\n")
    assert fingerprint(a) != fingerprint(b)
    (a / "agents" / "out.jsonl").rename(a / "agents" / "moved.jsonl")  # a renamed file is other content
    assert fingerprint(a) != fingerprint(tmp_path / "a-missing") == "missing"


def test_fingerprint_orders_files_by_path_parts_as_before(tmp_path):
    """The digest of the scandir walk equals the one of sorting the Paths (fingerprints of inputs kept in
    identity.json stay valid): "a/b" sorts before "a.b" by parts, after it as a string."""
    import hashlib

    from shoparena.jsonl import sha256_file

    root = tmp_path / "run"
    for name in ["a/b", "a.b", "a-b/c", "a/b.tmp", "b/work/x", "z/__pycache__/m.pyc", "ü/ß", IDENTITY_NAME]:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(name)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "f").write_text("linked")
    (root / "link").symlink_to(tmp_path / "elsewhere")  # a linked folder is not the input's own
    (root / "file-link").symlink_to(root / "a.b")  # a linked file counts, by its content
    kept = [root / n for n in ["a/b", "a.b", "a-b/c", "ü/ß", "file-link"]]
    digest = hashlib.sha256()
    for file in sorted(kept):
        digest.update(file.relative_to(root).as_posix().encode() + b"\0")
        digest.update(sha256_file(file).encode() + b"\n")
    assert fingerprint(root) == digest.hexdigest()


def test_differences_name_keys_and_inputs(tmp_path):
    (tmp_path / "r").write_text("a")
    old = _ident({"gates": {"min": 1}, "recover": True}, race=tmp_path / "r")
    (tmp_path / "r").write_text("b")
    new = _ident({"gates": {"min": 2}, "recover": True}, race=tmp_path / "r")
    assert old.differences(new) == ["gates.min: 1 -> 2", "input race: other content"]
    assert old.differences(old) == []


def test_claim_refuses_another_run_before_writing_and_restart_clears_only_own(tmp_path):
    out = tmp_path / "c"
    with claim_run_dir(out, _ident(), own=["records.jsonl", "views"]) as claim:
        assert not claim.resumed
    (out / "records.jsonl").write_text("old\n")
    (out / "views").mkdir()
    (out / "notes-of-mine.txt").write_text("keep")
    with claim_run_dir(out, _ident(), own=["records.jsonl"]) as claim:
        assert claim.resumed
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    with pytest.raises(RunDirError, match=r"gates\.min: 1 -> 5.*--restart"):
        claim_run_dir(out, _ident({"gates": {"min": 5}}), own=["records.jsonl"])
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before
    with claim_run_dir(out, _ident({"gates": {"min": 5}}), own=["records.jsonl", "views"], restart=True) as c:
        assert not c.resumed
    assert sorted(p.name for p in out.iterdir()) == [IDENTITY_NAME, "notes-of-mine.txt", "run.lock"]
    assert read_identity(out).config == {"gates": {"min": 5}}
    # "changed": resume the same identity, start over for another one (a pipeline stage keyed by hash).
    (out / "records.jsonl").write_text("new\n")
    with claim_run_dir(out, _ident({"gates": {"min": 5}}), own=["records.jsonl"], restart="changed") as c:
        assert c.resumed and (out / "records.jsonl").exists()
    with claim_run_dir(out, _ident({"gates": {"min": 6}}), own=["records.jsonl"], restart="changed") as c:
        assert not c.resumed and not (out / "records.jsonl").exists()


def test_claim_refuses_inputs_kinds_files_and_strangers(tmp_path):
    race = tmp_path / "race"
    race.mkdir()
    (race / "manifest.json").write_text(json.dumps({"kind": "arena"}))
    for out, words in [
        (race, "is the input"),
        (race / "agents", "lies inside the input"),
        (tmp_path, "holds the input"),
    ]:
        with pytest.raises(RunDirError, match=words):
            claim_run_dir(out, _ident(), own=[], input_paths=[race])
    with pytest.raises(RunDirError, match="holds a run of kind arena, not corpus"):
        claim_run_dir(race, _ident(), own=[])
    (tmp_path / "file").write_text("x")
    with pytest.raises(RunDirError, match="is a file"):
        claim_run_dir(tmp_path / "file", _ident(), own=[])
    with pytest.raises(RunDirError, match=r"holds no corpus run \(file, race\)"):
        claim_run_dir(tmp_path, _ident(), own=[])
    assert sorted(p.name for p in race.iterdir()) == ["manifest.json"]
    (race / IDENTITY_NAME).write_text("{torn")
    with pytest.raises(RunDirError, match=f"{IDENTITY_NAME}: not a run identity"):
        read_identity(race)


def _holder(run_dir: Path) -> subprocess.Popen[str]:
    code = (
        "import sys, time\n"
        "from shoparena.runs.identity import RunLock\n"
        f"lock = RunLock({str(run_dir)!r}).acquire()\n"
        "print('held', flush=True)\n"
        "time.sleep(60)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=env)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def test_a_live_lock_refuses_naming_its_pid_and_a_killed_holders_lock_is_stale(tmp_path):
    out = tmp_path / "p"
    proc = _holder(out)
    try:
        with pytest.raises(RunLockedError, match=f"pid {proc.pid}"):
            claim_run_dir(out, _ident(), own=[])
        assert not (out / IDENTITY_NAME).exists()  # refused before the identity was written
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert (out / "run.lock").read_text().strip() == str(proc.pid)  # the stale file is still there
    deadline = time.time() + 5
    while True:  # the kernel drops a dead holder's flock at once; allow for a slow reap
        try:
            claim = claim_run_dir(out, _ident(), own=[])
            break
        except RunLockedError:
            assert time.time() < deadline
            time.sleep(0.05)
    assert (out / "run.lock").read_text().strip() == str(os.getpid())
    with pytest.raises(RunLockedError):  # held by this claim until it is released
        RunLock(out).acquire()
    claim.release()
    RunLock(out).acquire().release()
