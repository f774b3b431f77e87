"""A checkout under a 0700 directory (``mktemp -d``, most home directories): the sandbox still runs miners.

Issue 23: bwrap bound the SDK and the harness straight from the checkout, so a sandbox uid that cannot
traverse the checkout's parent failed every miner with ``Can't find source path ...: Permission denied``.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from arena_helpers import AGENTS, needs_bwrap, run_agent

import shoparena.arena.sandbox as sandbox_mod
from shoparena.arena.sandbox import Sandbox, SandboxConfig

pytestmark = needs_bwrap


def _private_checkout(tmp_path: Path) -> Path:
    """A package copy (SDK, harness, miner) whose parent is mode 0700."""
    private = tmp_path / "private"
    pkg = private / "checkout" / "src" / "shoparena"
    shutil.copytree(sandbox_mod.SDK_DIR, pkg / "agent_sdk", ignore=shutil.ignore_patterns("__pycache__"))
    (pkg / "arena").mkdir()
    shutil.copyfile(sandbox_mod.HARNESS, pkg / "arena" / "_harness.py")
    shutil.copytree(AGENTS, private / "checkout" / "agents")
    os.chmod(private, 0o700)
    return pkg


def test_sandboxed_miner_runs_from_a_checkout_under_a_private_directory(tmp_path, monkeypatch, make_proxy):
    pkg = _private_checkout(tmp_path)
    monkeypatch.setattr(sandbox_mod, "SDK_DIR", pkg / "agent_sdk")
    monkeypatch.setattr(sandbox_mod, "HARNESS", pkg / "arena" / "_harness.py")
    monkeypatch.setattr("arena_helpers.AGENTS", pkg.parent.parent / "agents")
    box = Sandbox(SandboxConfig(timeout_s=10, grace_s=1, memory_bytes=768 * 1024**2))
    try:
        assert box.report.backend == "bwrap"
        proxy = make_proxy()
        out = tmp_path / "out"
        envs = run_agent("ok_agent.py", [{"problem_id": "p1", "query": "blue mug"}], out, box, proxy=proxy)
    finally:
        box.close()
    assert envs["p1"]["status"] == "SUCCESS", envs["p1"]["error"]
    sandbox_log = (out / "agents" / "ok_agent" / "sandbox.jsonl").read_text()
    assert "Permission denied" not in sandbox_log
