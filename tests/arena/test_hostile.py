"""Hostile miner files: each attack is contained while the run's other problems still complete.

Every test runs the hostile agent on problem ``evil`` beside a well-behaved problem ``good`` in the same run.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time

from arena_helpers import AGENTS, needs_bwrap, run_agent

from shoparena.arena.agent_runner import AgentRunner, ArenaProblem
from shoparena.llm.scripted import ScriptedBackend, scripted_reply
from world import SHARED_DATA

pytestmark = needs_bwrap


def run_pair(agent, evil, tmp_path, sandbox, proxy=None, timeout_s=5.0):
    problems = [
        {"problem_id": "evil", "query": "q", **evil},
        {"problem_id": "good", "query": "q", "mode": "ok"},
    ]
    envs = run_agent(agent, problems[:1], tmp_path, sandbox, proxy=proxy, timeout_s=timeout_s)
    good = run_agent("behaviour_agent.py", problems[1:], tmp_path, sandbox, proxy=proxy, timeout_s=timeout_s)
    assert good["good"]["status"] == "SUCCESS"
    return envs["evil"]


def test_network_egress_blocked(tmp_path, sandbox):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.settimeout(0.2)
    accepted = []
    stop = threading.Event()

    def watch():
        while not stop.is_set():
            try:
                accepted.append(listener.accept())
            except OSError:
                continue

    watcher = threading.Thread(target=watch)
    watcher.start()
    env = run_pair("hostile_egress.py", {"target_port": listener.getsockname()[1]}, tmp_path, sandbox)
    stop.set()
    watcher.join()
    listener.close()
    assert env["status"] == "SUCCESS"
    assert env["dialogue"][0]["outcome"].startswith("blocked")
    assert accepted == []


def test_cannot_read_suite_or_other_runs(tmp_path, sandbox):
    suite = tmp_path / "suite.json"
    suite.write_text(json.dumps([{"query": "q", "reward": {"product_id": "1"}}]))
    other = tmp_path / "other_run" / "agents" / "x" / "output.jsonl"
    other.parent.mkdir(parents=True)
    other.write_text("{}\n")
    os.chmod(suite, 0o644)
    paths = [str(suite), str(other), str(SHARED_DATA / "oro" / "problem_suite_v1.json"), "/etc/passwd"]
    env = run_pair("hostile_read.py", {"paths": paths}, tmp_path, sandbox)
    results = env["dialogue"][0]["results"]
    assert all(v.startswith("blocked") for v in results.values()), results


def test_cannot_write_outside_tmp(tmp_path, sandbox):
    target = tmp_path / "host_file.txt"
    env = run_pair("hostile_write.py", {"paths": [str(target), str(tmp_path)]}, tmp_path, sandbox)
    results = env["dialogue"][0]["results"]
    assert results.pop("/tmp/allowed.txt") == "written"
    assert all(v.startswith("blocked") for v in results.values()), results
    assert not target.exists()


def test_fork_bomb_bounded_by_nproc(tmp_path, sandbox):
    env = run_pair("hostile_forkbomb.py", {}, tmp_path, sandbox)
    assert env["status"] == "SUCCESS"
    step = env["dialogue"][0]
    assert step["error"] == "BlockingIOError" and step["forked"] < sandbox.config.nproc


def test_memory_bomb_refused(tmp_path, sandbox):
    env = run_pair("hostile_memory.py", {}, tmp_path, sandbox)
    assert env["status"] == "SUCCESS"
    step = env["dialogue"][0]
    assert step["memory"] == "refused" and step["blocks"] * 256 * 1024**2 < sandbox.config.memory_bytes


def test_cpu_spin_ignoring_sigterm_is_killed(tmp_path, sandbox):
    started = time.monotonic()
    env = run_pair("hostile_spin.py", {}, tmp_path, sandbox, timeout_s=2)
    assert env["status"] == "TIMED_OUT"
    assert 2 <= env["execution_time"] <= 2 + sandbox.config.grace_s + 1.5
    assert time.monotonic() - started < 15


def test_output_flood_is_capped(tmp_path, sandbox):
    env = run_pair("hostile_flood.py", {"chunks": 64}, tmp_path, sandbox)
    assert env["status"] == "SUCCESS"
    logs = tmp_path / "agents" / "hostile_flood" / "logs"
    cap = sandbox.config.output_cap_bytes
    assert (logs / "evil.stdout").stat().st_size == cap and (logs / "evil.stderr").stat().st_size == cap
    meta = json.loads((tmp_path / "agents" / "hostile_flood" / "sandbox.jsonl").read_text().splitlines()[0])
    assert meta["stdout_bytes_dropped"] == 64 * 65536 - cap


def test_forged_proxy_log_is_ignored(tmp_path, sandbox, make_proxy):
    proxy = make_proxy()
    trusted = tmp_path / "proxy" / "evil.jsonl"
    env = run_pair("hostile_forge_log.py", {"trusted_log": str(trusted)}, tmp_path, sandbox, proxy=proxy)
    assert env["status"] == "SUCCESS"
    step = env["dialogue"][0]
    assert step["results"][str(trusted)].startswith("blocked")
    assert step["results"]["/tmp/request_log.jsonl"] == "written"  # its own tmp: harmless, never read
    assert "proxy_calls" not in step["extra_info"]
    assert trusted.read_text() == ""
    assert env["inference_total"] == 0


def test_forged_and_replayed_nonces(tmp_path, sandbox, make_proxy):
    reply = scripted_reply("", tool_calls=[{"name": "find_product", "arguments": '{"q": "shoe", "page": 1}'}])
    proxy = make_proxy(backend=ScriptedBackend(default=reply))
    env = run_pair("hostile_nonce.py", {}, tmp_path, sandbox, proxy=proxy)
    assert env["status"] == "SUCCESS", env
    statuses = {label: status for label, status, _ in env["dialogue"][0]["statuses"]}
    assert statuses == {
        "forged": "mismatch",
        "tampered_args": "mismatch",
        "valid": "valid",
        "replayed": "replayed",
        "malformed": "malformed",
        "missing": "missing",
    }
    logged = [json.loads(line).get("nonce_status") for line in (tmp_path / "proxy" / "evil.jsonl").open()]
    assert logged == [None, "mismatch", "mismatch", "valid", "replayed", "malformed", "missing"]


def test_killing_parent_is_contained(tmp_path, sandbox):
    env = run_pair("hostile_kill_parent.py", {"runner_pid": os.getpid()}, tmp_path, sandbox)
    assert env["status"] in ("SUCCESS", "FAILED")
    if env["status"] == "SUCCESS":
        assert env["dialogue"][0]["results"]["runner"].startswith("blocked")


def test_whole_run_limit(tmp_path, sandbox):
    runner = AgentRunner(
        "slow",
        AGENTS / "behaviour_agent.py",
        tmp_path / "slow",
        sandbox,
        workers=1,
        timeout_s=5,
        run_timeout_s=1.0,
    )
    envs = runner.run(
        [ArenaProblem(f"p{i}", {"problem_id": f"p{i}", "query": "q", "mode": "sleep"}) for i in range(3)]
    )
    assert [e["status"] for e in envs] == ["TIMED_OUT"] * 3
    assert "before this problem started" in envs[-1]["error"]["message"]
