"""``eval run`` and infrastructure failures (issue 23): an unreachable model server is not the policy's 0.

Such episodes go to ``infra.jsonl`` (not ``episodes.jsonl``), leave the metrics, are counted in the summary
and are retried by the same command; when every episode failed that way the run stops with one line.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from shoparena.eval.run import run_eval
from shoparena.jsonl import read_jsonl_dicts
from shoparena.llm.types import ChatResponse, Unavailable
from shoparena.runs.infra import InfraStopError, read_infra


class _Backend:
    """Recommends at once; queries containing ``down`` (or every query, ``down_all``) find no server."""

    def __init__(self, down_all: bool = False) -> None:
        self.down_all = down_all

    def complete(self, request):
        query = next(m["content"] for m in request.messages if m["role"] == "user")
        if self.down_all or "down" in query:
            raise Unavailable("connection error: [Errno 111] Connection refused", reason="connection")
        function = {"name": "recommend_product", "arguments": '{"product_ids": "none"}'}
        return ChatResponse(tool_calls=[{"id": "c", "type": "function", "function": function}])


def _config(make_config, bank, tmp_path):
    suite = json.loads(bank.read_text())[:3]
    suite[2]["query"] = "down " + suite[2]["query"]
    path = tmp_path / "suite.json"
    path.write_text(json.dumps(suite))
    config = make_config("openai:http://unused.invalid/v1#m", limit=None)
    return config.model_copy(update={"suite": path}), suite


def test_unreachable_episodes_are_counted_apart_left_out_of_metrics_and_retried(make_config, bank, tmp_path):
    config, suite = _config(make_config, bank, tmp_path)
    summary = run_eval(config, backend=_Backend()).dump()
    rows = read_jsonl_dicts(config.out / "episodes.jsonl")
    assert len(rows) == 2 and suite[2]["problem_id"] not in {r["problem_id"] for r in rows}
    (failure,) = read_infra(config.out)
    assert failure.problem_id == suite[2]["problem_id"] and failure.reason.value == "model_unreachable"
    assert summary["episodes"]["infra"] == {"model_unreachable": 1} and summary["episodes"]["missing"] == 0
    assert summary["profiles"]["strict"]["overall"]["problems"] == 2  # not scored as the policy's 0
    assert any("infrastructure" in note for note in summary["notes"])
    # Still down: the same command tries that episode again (and only that one).
    summary = run_eval(config, backend=_Backend()).dump()
    assert len(read_infra(config.out)) == 2 and summary["throughput"]["episodes_this_call"] == 0
    # The server is back: the retry plays it.
    summary = run_eval(config, backend=_NeverDown()).dump()
    assert summary["episodes"]["infra"] == {} and summary["episodes"]["finished"] == 3
    assert summary["profiles"]["strict"]["overall"]["problems"] == 3
    assert len(read_jsonl_dicts(config.out / "episodes.jsonl")) == 3


class _NeverDown(_Backend):
    def complete(self, request):
        function = {"name": "recommend_product", "arguments": '{"product_ids": "none"}'}
        return ChatResponse(tool_calls=[{"id": "c", "type": "function", "function": function}])


def test_every_episode_unreachable_stops_with_the_reason_in_one_line(make_config, bank, tmp_path):
    config, _ = _config(make_config, bank, tmp_path)
    with pytest.raises(InfraStopError) as err:
        run_eval(config, backend=_Backend(down_all=True))
    message = str(err.value)
    assert "\n" not in message and "all 3 episode(s)" in message and "model_unreachable" in message
    assert "Connection refused" in message
    saved = json.loads((config.out / "summary.json").read_text())
    assert saved["episodes"]["finished"] == 0 and saved["episodes"]["infra"] == {"model_unreachable": 3}


def test_cli_reports_an_unreachable_server_in_one_line(make_config, bank, tmp_path):
    from shoparena.cli.main import app

    config, _ = _config(make_config, bank, tmp_path)
    args = [
        "eval",
        "run",
        "--policy",
        "openai:http://127.0.0.1:9/v1#m",
        "--suite",
        str(config.suite),
        "--index",
        str(config.index),
        "--out",
        str(tmp_path / "cli"),
        "--samples",
        "1",
        "--max-steps",
        "2",
        "--request-timeout",
        "2",
        "--no-progress",
    ]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 1, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert lines[-1].startswith("error: eval run") and "model_unreachable" in lines[-1]
    assert "Traceback" not in result.output
