"""``shoparena env serve``: a thin wrapper that loads the task set and passes the limits to the server."""

from __future__ import annotations

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
