"""A miner's lone surrogate (issue 52, finding 4): the proxy keeps the request's trusted-log line and answers
it, ``view`` serves the run, and ``arena judge --judge llm`` judges every miner.

The miner (agents/surrogate_agent.py) sends a model request whose message ends in half of a UTF-16 pair (the
SDK writes it as the JSON escape ``\\ud83d``) and answers with one in its text and query.
"""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import pytest
from arena_helpers import needs_bwrap
from miner_helpers import read_jsonl
from typer.testing import CliRunner

from fault_server import FaultServer
from shoparena.cli.main import app
from shoparena.viewer.server import ViewerServer

pytestmark = needs_bwrap
AGENT = Path(__file__).parent / "agents" / "surrogate_agent.py"


@pytest.fixture(scope="module")
def surrogate_run(tmp_path_factory, shop_world) -> Path:
    out = tmp_path_factory.mktemp("surrogate") / "run"
    result = CliRunner().invoke(app, [
        "arena", "run", "--agents", str(AGENT), "agentic", "--suite", str(shop_world.product_only),
        "--index", str(shop_world.index), "--out", str(out), "--backend", "planner", "--workers", "2",
        "--timeout", "20",
    ])  # fmt: skip
    assert result.exit_code == 0, result.output
    return out


def test_the_proxied_request_keeps_its_trusted_log_line_and_the_miner_its_answer(surrogate_run):
    outputs = read_jsonl(surrogate_run / "agents" / "surrogate_agent" / "output.jsonl")
    assert len(outputs) == 2 and {o["status"] for o in outputs} == {"SUCCESS"}
    assert sorted(p.name for p in (surrogate_run / "proxy" / "surrogate_agent").glob("*.jsonl")) == sorted(
        f"{o['problem_id']}.jsonl" for o in outputs
    )
    for log in (surrogate_run / "proxy" / "surrogate_agent").glob("*.jsonl"):
        raw = log.read_bytes()
        raw.decode("utf-8")  # strict: every line was written
        inference = [e for e in read_jsonl(log) if e.get("path") == "/inference/chat/completions"]
        assert len(inference) == 1 and inference[0]["status_code"] == 200, inference  # not a 500
    assert [o["inference_total"] for o in outputs] == [1, 1]  # counted from the trusted log


def test_view_serves_the_page_and_every_episode(surrogate_run):
    with ViewerServer([surrogate_run]) as server:
        page = urllib.request.urlopen(server.url, timeout=10).read().decode("utf-8")
        assert "\\ud83d" in page  # the JSON escape: the same text in the browser
        details = [
            json.loads(urllib.request.urlopen(f"{server.url}api/episode/{key}", timeout=10).read())
            for key in server.items
        ]
    assert len(details) == 4 and sum("\ud83d" in json.dumps(d, ensure_ascii=False) for d in details) == 2


def test_arena_judge_llm_judges_the_miner_whose_text_holds_one(surrogate_run):
    with FaultServer("judge") as server:
        backend = f"openai:{server.base_url}#j"
        args = ["arena", "judge", str(surrogate_run), "--judge", "llm", "--backend", backend]
        result = CliRunner().invoke(app, args)
        bodies = list(server.bodies)
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    assert len(bodies) == 4 and sum(b"\\\\ud83d" in body for body in bodies) == 2  # the escape, sent as text
    verdicts = read_jsonl(surrogate_run / "agents" / "surrogate_agent" / "judge.jsonl")
    assert [v["status"] for v in verdicts] == ["ok", "ok"] and {v["score"] for v in verdicts} == {0.8}
    assert all("\\ud83d" in json.dumps(v) for v in verdicts)  # the judge's echo, recorded
