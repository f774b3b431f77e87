"""``eval run`` against a model server that never answers properly (issue 31, findings 3 and 4).

A transport failure (HTTP 500, a body that is not a completion, no answer within --request-timeout) is
infrastructure: retried with backoff within the run, recorded in infra.jsonl, left out of the metrics, the
run exits non-zero with the reason in one line and a re-run retries it. A lone surrogate in what the model
returned is the policy's failure: scored, never infra.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from fault_server import FaultServer
from shoparena.cli.main import app
from shoparena.jsonl import read_jsonl_dicts
from shoparena.runs.infra import read_infra


def _args(server: FaultServer, bank, synth, out, timeout: str = "1.0") -> list[str]:
    # A whole-request deadline: the recovered server gets a generous one (a loaded machine answers slowly;
    # timeouts may change between runs of one directory).
    return [
        "eval", "run", "--policy", f"openai:{server.base_url}#m",
        "--suite", str(bank), "--index", str(synth.index.index_dir), "--out", str(out),
        "--limit", "3", "--max-steps", "3", "--request-timeout", timeout,
        "--request-retries", "1", "--retry-backoff", "0.01", "--no-progress",
    ]  # fmt: skip


MALFORMED_200 = ["tokens_word", "tokens_huge", "content_list", "content_dict", "content_int", "deep", "drip"]


@pytest.mark.parametrize("mode", ["500", "garbage", "hang", *MALFORMED_200])
def test_a_server_that_never_completes_exits_non_zero_in_one_line_and_is_retried(mode, bank, synth, tmp_path):
    out = tmp_path / "run"
    with FaultServer(mode, hang_s=2.5) as server:
        result = CliRunner().invoke(app, _args(server, bank, synth, out))
        assert server.requests == 6, result.output  # 3 episodes, each call tried twice (one retry)
        assert result.exit_code == 1, result.output
        errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
        assert len(errors) == 1 and "all 3 episode(s) failed" in errors[0] and "model_failed" in errors[0]
        assert "Traceback" not in result.output
        assert [f.reason.value for f in read_infra(out)] == ["model_failed"] * 3
        assert not (out / "episodes.jsonl").exists() or read_jsonl_dicts(out / "episodes.jsonl") == []
        summary = json.loads((out / "summary.json").read_text())
        assert summary["episodes"]["finished"] == 0 and summary["episodes"]["infra"] == {"model_failed": 3}
        server.mode = "ok"  # the server recovers: the same command retries exactly those episodes
        again = CliRunner().invoke(app, _args(server, bank, synth, out, timeout="60"))
    assert again.exit_code == 0, again.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["episodes"]["finished"] == 3 and summary["episodes"]["infra"] == {}
    assert summary["profiles"]["strict"]["overall"]["problems"] == 3


def test_a_lone_surrogate_from_the_model_is_the_policys_failure_scored(bank, synth, tmp_path):
    out = tmp_path / "run"
    with FaultServer("surrogate") as server:
        result = CliRunner().invoke(app, _args(server, bank, synth, out, timeout="60"))
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output and read_infra(out) == []
    rows = read_jsonl_dicts(out / "episodes.jsonl")
    assert len(rows) == 3 and all(r["status"] == "SUCCESS" and r["success_strict"] is False for r in rows)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["profiles"]["strict"]["overall"]["problems"] == 3  # the denominator is the suite
    envelope = json.loads((out / "output.jsonl").read_text().splitlines()[0])
    assert "lone surrogate" in json.dumps(envelope)


def _record(problem_id: str, calls: int, failed: int, error: str | None = None):
    from shoparena.records.eval import EpisodeRecord

    return EpisodeRecord(
        problem_id=problem_id,
        sample_idx=0,
        decoding="greedy",
        category="c",
        status="FAILED" if error else "SUCCESS",
        success_strict=False,
        success_shoppingbench=False,
        calls=calls,
        failed_calls=failed,
        error=error,
    )


def test_a_run_in_which_no_model_call_returned_a_completion_is_refused_as_a_measurement():
    from shoparena.eval.run import stop_if_no_completion
    from shoparena.runs.infra import InfraStopError

    stop_if_no_completion("eval run R", [_record("a", 0, 0), _record("b", 0, 0)])  # the planner: no calls
    stop_if_no_completion("eval run R", [_record("a", 2, 2, "X: y"), _record("b", 3, 1)])  # one completion
    with pytest.raises(InfraStopError) as err:
        stop_if_no_completion("eval run R", [_record("a", 1, 1, "BackendError: HTTP 404: no such model")] * 2)
    message = str(err.value)
    assert "\n" not in message and "not one of 2 model call(s)" in message and "no such model" in message


def test_a_reply_of_100_calls_runs_at_most_the_env_servers_cap(bank, synth, tmp_path):
    """Issue 52: ``eval run`` had no per-step call cap (5,000 calls a reply gave a 187 MB output.jsonl and
    1.9 GB RSS); it now drops calls past the env server's cap (noted on the step's parse errors) and
    scores the episode."""
    from shoparena.formats.io import read_trajectories
    from shoparena.formats.scan import MAX_CALLS_PER_STEP

    out = tmp_path / "run"
    with FaultServer("flood") as server:
        result = CliRunner().invoke(app, _args(server, bank, synth, out, timeout="60"))
    assert result.exit_code == 0, result.output
    trajectories = list(read_trajectories(out / "output.jsonl"))
    assert len(trajectories) == 3
    for trajectory in trajectories:
        assert len(trajectory.steps[0].tool_calls) == MAX_CALLS_PER_STEP  # 102 ran before the cap


def test_a_model_name_with_a_lone_surrogate_runs_and_is_recorded_as_its_escape(bank, synth, tmp_path):
    """A ``#model`` the shell could not decode (Python holds the byte 0xff as U+DCFF) is sent and recorded as
    its escape ``\\udcff``: the run writes its episodes, and the same command resumes it (issue 52)."""
    out = tmp_path / "run"
    with FaultServer("ok") as server:
        args = _args(server, bank, synth, out, timeout="60")
        args[args.index("--policy") + 1] += "\udcff"
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, result.output
        assert "Traceback" not in result.output and read_infra(out) == []
        assert server.models and set(server.models) == {'"m\\\\udcff"'}  # the escape, as JSON text
        assert len(read_jsonl_dicts(out / "episodes.jsonl")) == 3
        identity = json.loads((out / "identity.json").read_text(encoding="utf-8"))
        assert identity["config"]["policy"].endswith("#m\\udcff")
        again = CliRunner().invoke(app, args)
    assert again.exit_code == 0, again.output
    assert len(read_jsonl_dicts(out / "episodes.jsonl")) == 3
