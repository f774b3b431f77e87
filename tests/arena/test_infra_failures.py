"""Infrastructure failures (issue 23): stored apart from the miner's answers, counted, never scored, retried.

A sandbox that cannot start, a miner process killed by a crash signal and a model server that cannot be
reached are written to ``infra.jsonl`` instead of ``output.jsonl``; the same command run again retries them.
A race in which nothing ran stops with the reason in one line.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from arena_helpers import needs_bwrap, run_agent
from miner_helpers import read_jsonl

from shoparena.arena.firehose import FirehoseConfig, run_race, write_miners
from shoparena.arena.miners import miner_path
from shoparena.arena.run_directory import ArenaRunConfig, run_arena
from shoparena.arena.sandbox import SandboxConfig
from shoparena.jsonl import read_jsonl_dicts
from shoparena.records.infra import InfraFailure, InfraReason
from shoparena.runs.infra import InfraStopError, pending_infra, read_infra, stop_if_all_infra

pytestmark = needs_bwrap


class Unreachable:
    """A backend whose server is down: every call fails like a refused connection."""

    model_name = "down-model"

    def complete(self, request, *, cancel: threading.Event | None = None):
        raise ConnectionError("connection refused (127.0.0.1:9)")


def test_a_sandbox_that_cannot_start_is_infra_and_retried(tmp_path, sandbox):
    harness = sandbox.harness
    sandbox.harness = tmp_path / "gone" / "harness.py"  # bwrap's own setup fails: the miner never ran
    try:
        envs = run_agent("behaviour_agent.py", [{"problem_id": "a", "query": "q"}], tmp_path, sandbox)
    finally:
        sandbox.harness = harness
    agent_dir = tmp_path / "agents" / "behaviour_agent"
    assert envs == {} and read_jsonl_dicts(agent_dir / "output.jsonl") == []
    (failure,) = read_infra(agent_dir)
    assert failure.reason is InfraReason.SANDBOX_START and "bwrap" in failure.message
    envs = run_agent("behaviour_agent.py", [{"problem_id": "a", "query": "q"}], tmp_path, sandbox)
    assert envs["a"]["status"] == "SUCCESS"  # the re-run retried it
    assert pending_infra(read_infra(agent_dir), [("a", 0)]) == []


def test_a_crashed_miner_process_is_infra_but_a_miner_error_is_not(tmp_path, sandbox):
    problems = [{"problem_id": "crash", "query": "q", "mode": "segv"}, {"problem_id": "fine", "query": "q"}]
    envs = run_agent("signal_agent.py", problems, tmp_path, sandbox)
    assert set(envs) == {"fine"} and envs["fine"]["status"] == "SUCCESS"
    (failure,) = read_infra(tmp_path / "agents" / "signal_agent")
    assert failure.problem_id == "crash" and failure.reason is InfraReason.MINER_CRASH
    assert "SIGSEGV" in failure.message
    raising = [{"problem_id": "r", "query": "q", "mode": "raise"}]
    envs = run_agent("behaviour_agent.py", raising, tmp_path, sandbox)
    assert envs["r"]["status"] == "FAILED"  # an exception is the miner's answer: scored, not retried
    assert read_infra(tmp_path / "agents" / "behaviour_agent") == []


def test_an_unreachable_model_server_is_counted_apart_and_never_scored(tmp_path, shop_world):
    out = tmp_path / "run"
    config = ArenaRunConfig(
        agents=[miner_path("agentic")],
        suite=shop_world.mixed,
        out=out,
        workers=2,
        timeout_s=20,
        sandbox=SandboxConfig(grace_s=1, memory_bytes=1024**3),
    )
    summary = run_arena(config, backend=Unreachable(), search=shop_world.engine)
    agent = summary.agents[0]
    assert read_jsonl_dicts(out / "agents" / "agentic" / "output.jsonl") == []
    assert agent.problems == 0 and agent.failed == 0
    assert agent.infra_failed == 2 and agent.infra == {"model_unreachable": 2}
    # Nothing ran, so nothing is scored: no success_rate of 0 stands for the miner.
    assert all(s.get("problems", 0) == 0 for s in agent.scores.values())


def test_a_race_where_nothing_ran_stops_with_the_reason_in_one_line(tmp_path, shop_world):
    config = FirehoseConfig(
        suites=[shop_world.product_only],
        index=shop_world.index,
        out=tmp_path / "fh",
        races=1,
        problems_per_race=1,
        population=[("agentic-careful", "agentic", "careful")],
    )
    write_miners(config)
    with pytest.raises(InfraStopError) as err:
        run_race(config, 0, search=shop_world.engine, backend=Unreachable())
    message = str(err.value)
    assert "\n" not in message and "model_unreachable" in message and "race-000" in message
    assert not (tmp_path / "fh" / "race-000" / "race.json").exists()  # not a finished race: retried
    race_dir = run_race(config, 0, search=shop_world.engine)  # the model is back: the same race completes
    assert (race_dir / "race.json").exists()
    assert len(read_jsonl(race_dir / "agents" / "agentic-careful" / "output.jsonl")) == 1


def test_stop_rule_names_one_reason_counts_several_and_ignores_partial_stages():
    def fail(pid: str, reason: InfraReason) -> InfraFailure:
        return InfraFailure(problem_id=pid, reason=reason, message="bwrap: Can't find\nsource path")

    one = [fail("a", InfraReason.SANDBOX_START), fail("b", InfraReason.SANDBOX_START)]
    with pytest.raises(
        InfraStopError,
        match=r"^firehose: all 2 episode\(s\) failed for one infrastructure "
        r"reason, sandbox_start \(bwrap: Can't find source path\)",
    ):
        stop_if_all_infra("firehose", 0, one)
    with pytest.raises(InfraStopError, match="model_unreachable 1, sandbox_start 1"):
        stop_if_all_infra("eval", 0, [one[0], fail("c", InfraReason.MODEL_UNREACHABLE)])
    stop_if_all_infra("firehose", 1, one)  # something ran: the summaries count the failures instead
    stop_if_all_infra("firehose", 0, [])


def test_infra_reader_skips_a_torn_line_and_pending_keeps_the_latest(tmp_path: Path):
    first = InfraFailure(problem_id="a", reason=InfraReason.SANDBOX_START)
    later = InfraFailure(problem_id="a", reason=InfraReason.MINER_CRASH)
    (tmp_path / "infra.jsonl").write_text(
        first.model_dump_json()
        + "\n"
        + '{"problem_id": "b", "reason": "bogus"}\n'
        + later.model_dump_json()
        + "\n"
        + '{"problem_id": "c", "rea'
    )
    failures = read_infra(tmp_path)
    assert [f.reason for f in failures] == [InfraReason.SANDBOX_START, InfraReason.MINER_CRASH]
    assert pending_infra(failures, []) == [later] and pending_infra(failures, [("a", 0)]) == []
