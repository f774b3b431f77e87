"""Built-in miners in real sandboxed arena runs (planner and scripted backends, synthetic catalog)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from arena_helpers import needs_bwrap
from miner_helpers import read_jsonl

from shoparena.arena.miners import BUILTIN_MINERS, miner_path, resolve_agent
from shoparena.arena.run_directory import ArenaRunConfig, run_arena
from shoparena.arena.sandbox import SandboxConfig
from shoparena.llm.planner_backend import MODEL_NAME, PlannerBackend
from shoparena.llm.scripted import ScriptedBackend, scripted_reply

pytestmark = needs_bwrap
CATALOGUE = ("/search/find_product", "/search/view_product_information")


def _run(out: Path, suite: Path, agents: list[str], backend, engine, timeout: float = 3.0) -> Path:
    config = ArenaRunConfig(
        agents=[miner_path(a) for a in agents], suite=suite, out=out, workers=2, timeout_s=timeout,
        sandbox=SandboxConfig(grace_s=1, memory_bytes=1024**3, tmp_bytes=16 * 1024**2),
    )
    run_arena(config, backend=backend, search=engine)
    return out


def _envelopes(run: Path, agent: str) -> list[dict]:
    return read_jsonl(run / "agents" / agent / "output.jsonl")


def _log(run: Path, agent: str) -> list[dict]:
    entries: list[dict] = []
    for path in sorted((run / "proxy" / agent).glob("*.jsonl")):
        entries += [e for e in read_jsonl(path) if e.get("kind") == "summary"]
    return entries


@pytest.fixture(scope="module")
def miners_run(tmp_path_factory, shop_world) -> Path:
    out = tmp_path_factory.mktemp("miners") / "run"
    return _run(out, shop_world.mixed, list(BUILTIN_MINERS), PlannerBackend(), shop_world.engine)


def test_builtin_names_resolve_and_paths_win(tmp_path):
    assert resolve_agent("agentic") == miner_path("agentic") and miner_path("agentic").is_file()
    own = tmp_path / "agentic"
    own.write_text("def agent_main(p):\n    return []\n")
    assert resolve_agent(str(own)) == own  # an existing file beats the built-in name
    with pytest.raises(ValueError, match="neither an existing file nor a built-in"):
        resolve_agent("no-such-miner")


def test_agentic_dispatches_llm_emitted_calls_with_valid_nonces(miners_run):
    envelopes = _envelopes(miners_run, "agentic")
    assert len(envelopes) == 2 and {e["status"] for e in envelopes} == {"SUCCESS"}
    log = _log(miners_run, "agentic")
    inference = [e for e in log if e["path"] == "/inference/chat/completions"]
    dispatches = [e for e in log if e["path"] in CATALOGUE]
    assert inference and all(e["status_code"] == 200 for e in inference)
    assert all(e["response"]["model"] == MODEL_NAME for e in inference if "response" in e)
    assert dispatches and {e["nonce_status"] for e in dispatches} == {"valid"}
    # Every dispatch was requested by an inference reply (the proxy parsed the tool names).
    requested = [n for e in inference for n in e["parsed_tool_names"] if f"/search/{n}" in CATALOGUE]
    assert len(requested) == len(dispatches)
    for envelope in envelopes:
        last = envelope["dialogue"][-1]["completion"]["message"]["tool_call"]
        assert [c["name"] for c in last] == ["recommend_product", "terminate"]
        assert envelope["inference_total"] == len(envelope["dialogue"])


def test_subtask_searches_itself_and_uses_the_llm_once(miners_run):
    envelopes = _envelopes(miners_run, "subtask")
    assert {e["status"] for e in envelopes} == {"SUCCESS"}
    assert [e["inference_total"] for e in envelopes] == [1, 1]
    dispatches = [e for e in _log(miners_run, "subtask") if e["path"] in CATALOGUE]
    assert len(dispatches) >= 4 and {e["nonce_status"] for e in dispatches} == {"missing"}


def test_shortcut_makes_no_inference_call(miners_run):
    envelopes = _envelopes(miners_run, "shortcut")
    assert {e["status"] for e in envelopes} == {"SUCCESS"}
    assert all(e["inference_total"] == 0 for e in envelopes)
    log = _log(miners_run, "shortcut")
    assert not [e for e in log if e["path"].startswith("/inference")]
    assert {e["nonce_status"] for e in log if e["path"] in CATALOGUE} == {"missing"}


@pytest.mark.parametrize(
    ("miner", "status", "error_type"),
    [("crash", "FAILED", "MinerCrash"), ("hang", "TIMED_OUT", "TimeoutError"),
     ("nonlist", "FAILED", "InvalidReturnType")],
)
def test_faulty_miners_end_with_the_right_error(miners_run, miner, status, error_type):
    envelopes = _envelopes(miners_run, miner)
    assert len(envelopes) == 2
    assert {e["status"] for e in envelopes} == {status}
    assert {e["error"]["type"] for e in envelopes} == {error_type}
    assert all(e["dialogue"] is None for e in envelopes)


def test_malformed_steps_complete_but_score_zero(miners_run):
    envelopes = _envelopes(miners_run, "malformed")
    assert {e["status"] for e in envelopes} == {"SUCCESS"}
    assert envelopes[0]["dialogue"][:2] == ["not a step", 42]
    scores = json.loads((miners_run / "scores.json").read_text())
    assert scores["malformed"]["strict"]["success_rate"] == 0.0
    assert scores["malformed"]["strict"]["format_score"] < 1.0


def test_agentic_with_scripted_xml_tool_calls(tmp_path, shop_world):
    query = json.loads(shop_world.mixed.read_text())[0]["query"]
    backend = ScriptedBackend([
        scripted_reply('<think>Search first.</think>\n<tool_call>[{"name": "find_product", "parameters": '
                       '{"q": "bag"}}]</tool_call>'),
        scripted_reply('<think>Pick one.</think>\n<tool_call>[{"name": "recommend_product", "parameters": '
                       '{"product_ids": "1"}}, {"name": "terminate", "parameters": {"status": "success"}}]'
                       '</tool_call>'),
    ])
    suite = tmp_path / "one.json"
    suite.write_text(json.dumps([json.loads(shop_world.mixed.read_text())[0]]))
    run = _run(tmp_path / "run", suite, ["agentic"], backend, shop_world.engine, timeout=10)
    (envelope,) = _envelopes(run, "agentic")
    assert envelope["status"] == "SUCCESS" and envelope["inference_total"] == 2
    dispatches = [e for e in _log(run, "agentic") if e["path"] in CATALOGUE]
    assert [e["nonce_status"] for e in dispatches] == ["valid"]
    assert dispatches[0]["json_data"] == {"q": "bag"}
    # The model saw the request (category header + query) and, on turn 2, the search result.
    first, second = backend.requests
    assert query in first.messages[1]["content"] and "category: Product" in first.messages[1]["content"]
    assert "<tool_response>" in second.messages[-1]["content"]
