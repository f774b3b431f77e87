"""The sandbox runner: every envelope outcome, the agent contract, the environment, resume after a kill."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from arena_helpers import AGENTS, needs_bwrap, run_agent

pytestmark = needs_bwrap


def test_outcomes(tmp_path, sandbox):
    problems = [
        {"problem_id": m, "query": f"q-{m}", "mode": m} for m in ("ok", "raise", "dict", "exit", "sleep")
    ]
    envs = run_agent("behaviour_agent.py", problems, tmp_path, sandbox, workers=3, timeout_s=2)
    assert envs["ok"]["status"] == "SUCCESS" and envs["ok"]["error"] is None
    info = envs["ok"]["dialogue"][0]["extra_info"]
    assert "forged" not in json.dumps(info) and info["step"] == 1 and info["query"] == "q-ok"
    assert envs["raise"]["status"] == "FAILED" and envs["raise"]["error"]["type"] == "KeyError"
    assert envs["raise"]["dialogue"] is None
    assert envs["dict"]["error"]["type"] == "InvalidReturnType"
    assert envs["exit"]["error"]["message"] == "Process exited with code 3 but produced no result"
    assert envs["sleep"]["status"] == "TIMED_OUT"
    assert envs["sleep"]["error"] == {"type": "TimeoutError", "message": "Execution exceeded timeout of 2s"}
    assert 2 <= envs["sleep"]["execution_time"] < 4.5


def test_load_errors_and_module_registration(tmp_path, sandbox):
    envs = run_agent("missing_main_agent.py", [{"problem_id": "a", "query": "q"}], tmp_path, sandbox)
    assert envs["a"]["status"] == "FAILED" and "agent_main" in envs["a"]["error"]["message"]
    envs = run_agent("dataclass_agent.py", [{"problem_id": "b", "query": "frozen"}], tmp_path, sandbox)
    assert envs["b"]["status"] == "SUCCESS"
    assert envs["b"]["dialogue"][0]["completion"]["content"] == "<response>frozen</response>"


def test_environment_inside(tmp_path, sandbox, make_proxy):
    proxy = make_proxy()
    envs = run_agent(
        "behaviour_agent.py",
        [{"problem_id": "e", "query": "q", "mode": "env"}],
        tmp_path,
        sandbox,
        proxy=proxy,
    )
    seen = envs["e"]["dialogue"][0]
    assert seen["uid"] == 1000 and seen["cwd"] == "/tmp" and seen["module"] == "shoparena_miner_agent"
    assert seen["env"]["SANDBOX_PROXY_URL"].startswith("http://127.0.0.1:")
    assert seen["env"]["CHUTES_ACCESS_TOKEN"]  # the per-problem token, revoked afterwards
    assert proxy.state.lookup(seen["env"]["CHUTES_ACCESS_TOKEN"]) is None
    assert json.loads(seen["env"]["PROBLEM_DATA"])["problem_id"] == "e"
    assert set(seen["root"]) <= {"bin", "dev", "lib", "lib64", "proc", "sandbox", "sbin", "tmp", "usr"}


def test_proxy_roundtrip_and_trusted_calls(tmp_path, sandbox, make_proxy):
    proxy = make_proxy()
    envs = run_agent(
        "ok_agent.py", [{"problem_id": "p1", "query": "blue mug"}], tmp_path, sandbox, proxy=proxy
    )
    env = envs["p1"]
    assert env["status"] == "SUCCESS", env
    rec = env["dialogue"][1]["completion"]["message"]["tool_call"][0]
    assert rec["parameters"] == {"product_ids": "100"}
    calls = [c for step in env["dialogue"] for c in step["extra_info"].get("proxy_calls", [])]
    assert [(c["path"], c["status_code"], c["params"]["q"]) for c in calls] == [
        ("/search/find_product", 200, "blue+mug")
    ]
    trusted = (tmp_path / "proxy" / "p1.jsonl").read_text().splitlines()
    assert len(trusted) == 1 and json.loads(trusted[0])["problem_id"] == "p1"


RESUME_SCRIPT = """
import sys
from pathlib import Path
sys.path[:0] = [{helpers!r}, {tests!r}]
from arena_helpers import run_agent
from shoparena.arena.sandbox import Sandbox, SandboxConfig
box = Sandbox(SandboxConfig(timeout_s=10))
problems = [{{"problem_id": f"p{{i}}", "query": "q", "mode": "slow"}} for i in range(6)]
run_agent("resume_agent.py", problems, Path({out!r}), box, workers=1, timeout_s=10)
"""


def test_killed_run_resumes_without_duplicates(tmp_path):
    agent = AGENTS / "resume_agent.py"
    assert agent.exists()
    here = Path(__file__).parent
    script = RESUME_SCRIPT.format(helpers=str(here), tests=str(here.parent), out=str(tmp_path))
    output = tmp_path / "agents" / "resume_agent" / "output.jsonl"
    proc = subprocess.Popen([sys.executable, "-c", script], start_new_session=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if output.exists() and len(output.read_text().splitlines()) >= 2:
            break
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    partial = [json.loads(line)["problem_id"] for line in output.read_text().splitlines()]
    assert 2 <= len(partial) < 6
    subprocess.run([sys.executable, "-c", script], check=True, timeout=120)
    ids = [json.loads(line)["problem_id"] for line in output.read_text().splitlines()]
    assert sorted(ids) == [f"p{i}" for i in range(6)]
    assert ids[: len(partial)] == partial


def test_the_staged_sdk_carries_valid_bytecode_for_this_interpreter(tmp_path):
    """The sandbox mounts the SDK read-only, so without bytecode staged beside it every sandboxed process
    would compile the SDK again (issue 35); each module's .pyc must match its staged source."""
    import importlib.util
    import struct

    from shoparena.arena.sandbox import Sandbox

    box = Sandbox(staging_dir=tmp_path / "staging")
    sdk = box.sdk_root / "shoparena" / "agent_sdk"
    sources = sorted(sdk.glob("*.py"))
    assert {p.name for p in sources} >= {"__init__.py", "client.py", "wire.py"}
    for source in sources:
        cached = Path(importlib.util.cache_from_source(str(source)))
        header = cached.read_bytes()[:16]
        assert header[:4] == importlib.util.MAGIC_NUMBER, source.name
        flags, mtime, size = struct.unpack("<III", header[4:16])
        stat = source.stat()
        assert (flags, mtime, size) == (0, int(stat.st_mtime) & 0xFFFFFFFF, stat.st_size & 0xFFFFFFFF)
        assert oct(cached.stat().st_mode & 0o777) == oct(0o644)
