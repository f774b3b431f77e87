"""``shoparena arena run`` SIGKILLed mid-run (torn last line, torn manifest) resumes: each problem once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from arena_helpers import AGENTS

N_PROBLEMS = 8


def _suite(path: Path) -> Path:
    records = [
        {
            "problem_id": f"p{i}",
            "query": f"thing number {i}",
            "reward": {"product_id": str(i + 1), "title": [f"Thing {i}"]},
            "category": "Product",
            "difficulty": "easy",
        }
        for i in range(N_PROBLEMS)
    ]
    path.write_text(json.dumps(records))
    return path


def _cli(suite: Path, out: Path) -> list[str]:
    agent = str(AGENTS / "resume_agent.py")
    args = ["arena", "run", "--agents", agent, "--suite", str(suite), "--out", str(out), "--workers", "1"]
    return [sys.executable, "-m", "shoparena.cli.main", *args, "--timeout", "10"]


def _leftovers(pid: int) -> list[Path]:
    return [p for p in Path("/tmp").glob(f"shoparena-*-{pid}-*")]


def test_arena_run_sigkill_then_resume(tmp_path: Path) -> None:
    suite = _suite(tmp_path / "suite.json")
    out = tmp_path / "run"
    output = out / "agents" / "resume_agent" / "output.jsonl"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen(
        _cli(suite, out), env=env, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if output.exists() and output.read_bytes().count(b"\n") >= 2:
            break
        assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    partial = [json.loads(line)["problem_id"] for line in output.read_bytes().split(b"\n") if line]
    assert 2 <= len(partial) < N_PROBLEMS
    assert _leftovers(proc.pid)  # a SIGKILL leaves the staging and socket dirs behind
    with open(output, "ab") as fh:  # and a write torn mid-line
        fh.write(b'{"problem_id": "p7", "status": "SUCC')
    (out / "manifest.json").write_bytes(b'{"run_id": "ab')  # and a torn manifest

    rerun = subprocess.run(_cli(suite, out), env=env, capture_output=True, text=True, timeout=180)
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    raw = output.read_bytes()
    assert raw.endswith(b"\n")
    envelopes = [json.loads(line) for line in raw.split(b"\n") if line]  # every line parses
    ids = [e["problem_id"] for e in envelopes]
    assert sorted(ids) == [f"p{i}" for i in range(N_PROBLEMS)]  # each problem exactly once
    assert ids[: len(partial)] == partial
    assert {e["status"] for e in envelopes} == {"SUCCESS"}
    assert _leftovers(proc.pid) == []  # removed by the re-run
    assert json.loads((out / "manifest.json").read_text())["suite_problems"] == N_PROBLEMS  # rebuilt


def test_sigterm_cleans_up_temp_dirs(tmp_path: Path) -> None:
    suite = _suite(tmp_path / "suite.json")
    out = tmp_path / "run"
    output = out / "agents" / "resume_agent" / "output.jsonl"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen(_cli(suite, out), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (output.exists() and output.stat().st_size):
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 128 + signal.SIGTERM
    assert _leftovers(proc.pid) == []
    done = output.read_bytes().count(b"\n")
    assert 1 <= done < N_PROBLEMS  # queued problems were not run after the signal
