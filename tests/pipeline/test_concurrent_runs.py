"""Two ``pipeline run`` at once from two working directories (as ``make run`` in two clones does) both
succeed: they share only what every run of one user shares (``$XDG_CACHE_HOME``, ``/tmp``, the sandbox's
temp directories), never a port or a file. A third on a directory one of them holds is refused at once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from pipeline_tiny import TINY

pytest.importorskip("trl", reason="the train extra is needed for the SFT stage")

SRC = Path(__file__).resolve().parents[2] / "src"


COMMAND = ["pipeline", "run", "--out", "runs/quickstart", "--config", "tiny.yaml", "--strict"]


def _pipeline(clone: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "shoparena.cli.main", *COMMAND],
        cwd=clone,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


@pytest.mark.slow
def test_two_pipelines_in_two_clones_at_once_both_succeed(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(SRC), "XDG_CACHE_HOME": str(tmp_path / "cache"), "COLUMNS": "200"}
    clones = [tmp_path / "clone-a", tmp_path / "clone-b"]
    for clone in clones:
        clone.mkdir()
        (clone / "tiny.yaml").write_text(yaml.safe_dump(TINY))
    started = time.time()
    procs = [_pipeline(clone, env) for clone in clones]
    lock = clones[0] / "runs" / "quickstart" / "run.lock"
    deadline = time.time() + 120
    while not (lock.is_file() and lock.read_text().strip() == str(procs[0].pid)):
        assert time.time() < deadline and procs[0].poll() is None
        time.sleep(0.1)
    # The same directory as clone A's run, while it runs: refused, naming the process that holds it.
    third = _pipeline(clones[0], env)
    third_out, _ = third.communicate(timeout=120)
    assert third.returncode == 2, third_out
    assert f"in use by another run (pid {procs[0].pid})" in third_out.replace("\n", " ")
    outputs = [proc.communicate(timeout=3600)[0] for proc in procs]
    seconds = time.time() - started
    for proc, out in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, out[-3000:]
    for clone in clones:
        summary = json.loads((clone / "runs" / "quickstart" / "summary.json").read_text())
        assert {s["status"] for s in summary["stages"].values()} == {"ran"}
        assert (clone / "runs" / "quickstart" / "report.html").is_file()
    print(f"two concurrent tiny pipelines: {seconds:.0f} s wall")
