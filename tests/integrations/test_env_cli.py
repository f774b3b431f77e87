"""``shoparena env serve``: a thin wrapper that loads the task set and passes the limits to the server."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

import shoparena.integrations.http as http
from shoparena.cli.main import app


def test_serve_passes_the_task_set_and_limits(monkeypatch, door_bank, synth) -> None:
    seen = {}
    monkeypatch.setattr(
        http, "serve", lambda tasks, host, port, **limits: seen.update(tasks=tasks, port=port, **limits)
    )
    args = ["env", "serve", "--suite", str(door_bank), "--index", str(synth.index.index_dir), "--port", "0"]
    result = CliRunner().invoke(
        app, [*args, "--max-sessions", "7", "--step-timeout", "3", "--max-steps", "5"]
    )
    assert result.exit_code == 0, result.output
    assert seen["max_sessions"] == 7 and seen["step_timeout_s"] == 3.0 and seen["port"] == 0
    assert seen["tasks"].env_options["max_steps"] == 5 and len(seen["tasks"].problems) >= 1


def test_a_directory_that_is_not_an_index_is_one_line(door_bank, tmp_path) -> None:
    result = CliRunner().invoke(app, ["env", "serve", "--suite", str(door_bank), "--index", str(tmp_path)])
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        f"error: {tmp_path}: not a search index directory (no manifest.json)"
    ]


@pytest.mark.parametrize(
    ("option", "value"),
    [("--port", "70000"), ("--port", "-1"), ("--step-timeout", "nan"), ("--step-timeout", "0"),
     ("--idle-timeout", "inf")],
)  # fmt: skip
def test_out_of_range_ports_and_timeouts_are_usage_errors(option, value, door_bank, synth) -> None:
    """Issue 52: --port 70000 was a traceback; --step-timeout nan disabled the timeout."""
    from typer.testing import CliRunner

    from shoparena.cli.main import app

    args = ["env", "serve", "--suite", str(door_bank), "--index", str(synth.index.index_dir), option, value]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_a_seed_must_be_a_number_and_a_host_exactly_local() -> None:
    from pydantic import ValidationError

    from shoparena.integrations.config import host_allowed
    from shoparena.integrations.http import ResetRequest

    with pytest.raises(ValidationError):
        ResetRequest.model_validate({"seed": "1"})
    assert ResetRequest.model_validate({"seed": 1}).seed == 1
    assert not host_allowed("[::1]evil") and not host_allowed("[::1]:80x") and not host_allowed("[::1")
    assert host_allowed("[::1]:5640") and host_allowed("[::1]") and host_allowed("localhost:1")
