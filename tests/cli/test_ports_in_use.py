"""A port another process holds is a usage error: one line naming it, exit 2, for every serving command
(issue 52: uvicorn's "startup failure" exit 3 is this toolkit's code for an unreadable input file)."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest
from typer.testing import CliRunner

from shoparena.cli.main import app
from shoparena.runs.manifest import RunManifest, write_manifest
from shoparena.runs.ports import PortInUseError, check_port_free
from shoparena.suites.options import SynthOptions
from shoparena.suites.synth import synthesize_bank


@pytest.fixture
def held_port() -> Iterator[int]:
    """A port a live listener holds on 127.0.0.1."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


def _commands(synth, tmp_path, port: int) -> dict[str, list[str]]:
    bank = tmp_path / "bank.json"
    synthesize_bank(synth.index.index_dir, bank, SynthOptions(n=2, seed=1))
    run = tmp_path / "corpus"
    (run / "records.jsonl").parent.mkdir()
    (run / "records.jsonl").write_text("")
    write_manifest(RunManifest(kind="corpus"), run)
    index = str(synth.index.index_dir)
    return {
        "env serve": ["env", "serve", "--suite", str(bank), "--index", index, "--port", str(port)],
        "eval serve": ["eval", "serve", "planner", "--port", str(port)],
        "search serve": ["search", "serve", "--index", index, "--port", str(port)],
        "view": ["view", str(run), "--port", str(port)],
    }


def test_every_serving_command_refuses_a_port_in_use_with_exit_2(held_port, synth, tmp_path) -> None:
    for name, args in _commands(synth, tmp_path, held_port).items():
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 2, (name, result.exit_code, result.output)
        errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
        assert len(errors) == 1 and f"--port {held_port}" in errors[0] and "in use" in errors[0], name
        assert "Traceback" not in result.output, name


def test_a_free_port_and_port_0_pass_the_check_and_a_bad_host_does_not(held_port) -> None:
    check_port_free("127.0.0.1", 0)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        free = sock.getsockname()[1]
    check_port_free("127.0.0.1", free)
    with pytest.raises(PortInUseError, match="in use"):
        check_port_free("127.0.0.1", held_port)
    with pytest.raises(PortInUseError, match="--host"):
        check_port_free("no-such-host.invalid", 80)
