"""Real and stuck models behind the arena: one load, run limits, cancellation, honest envelopes and counts."""

from __future__ import annotations

import importlib.util
import threading
from pathlib import Path

import pytest
from arena_helpers import needs_bwrap
from miner_helpers import read_jsonl

from shoparena.arena.inference import InferenceLimits
from shoparena.arena.miners import miner_path
from shoparena.arena.proxy import ProxyConfig
from shoparena.arena.run_directory import ArenaRunConfig, run_arena
from shoparena.arena.sandbox import SandboxConfig
from shoparena.llm.types import ChatResponse

INFERENCE = "/inference/chat/completions"
needs_torch = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")


def test_limits_cap_tokens_add_stops_and_reach_the_agent():
    limits = InferenceLimits(max_tokens=64, stop=["</tool_call>"], call_timeout_s=30)
    applied = limits.apply({"max_tokens": 1024, "stop": "\n\n"})
    assert applied == {"max_tokens": 64, "stop": ["\n\n", "</tool_call>"]}
    assert limits.apply({"max_tokens": 8})["max_tokens"] == 8 and limits.apply({})["max_tokens"] == 64
    env = limits.agent_env("m", 90)
    assert env["SANDBOX_MODEL"] == "m" and env["SHOPARENA_MAX_TOKENS"] == "64"
    assert env["SHOPARENA_CALL_TIMEOUT_S"] == "30" and env["SHOPARENA_PROBLEM_TIMEOUT_S"] == "90"


def _trusted(out: Path, agent: str) -> list[dict]:
    return [e for p in sorted((out / "proxy" / agent).glob("*.jsonl")) for e in read_jsonl(p)
            if e.get("kind") == "summary"]


class NeverAnswers:
    """A backend that never replies by itself; it returns only once told to cancel."""

    model_name = "stuck-model"

    def __init__(self) -> None:
        self.cancelled = 0
        self.lock = threading.Lock()

    def complete(self, request, *, cancel: threading.Event) -> ChatResponse:
        if cancel.wait(60):
            with self.lock:
                self.cancelled += 1
        return ChatResponse(content="too late")


@needs_bwrap
def test_a_backend_that_never_answers_gives_no_success_and_is_counted(tmp_path, shop_world):
    backend = NeverAnswers()
    out = tmp_path / "run"
    config = ArenaRunConfig(
        agents=[miner_path("agentic")], suite=shop_world.mixed, out=out, workers=2, timeout_s=20,
        proxy=ProxyConfig(inference=InferenceLimits(call_timeout_s=1.0)),
        sandbox=SandboxConfig(grace_s=1, memory_bytes=1024**3),
    )
    summary = run_arena(config, backend=backend, search=shop_world.engine)
    envelopes = read_jsonl(out / "agents" / "agentic" / "output.jsonl")
    assert len(envelopes) == 2
    assert all(e["status"] == "FAILED" and e["error"]["type"] == "InferenceFailed" for e in envelopes)
    agent = summary.agents[0]
    assert agent.success == 0 and agent.no_model_reply == 2
    assert agent.inference_failed == agent.inference_total > 0
    calls = [e for e in _trusted(out, "agentic") if e["path"] == INFERENCE]
    assert calls and {e["status_code"] for e in calls} == {504}
    assert sum(e["inference_total"] for e in envelopes) == len(calls)
    assert backend.cancelled == len(calls)  # every abandoned generation was told to stop


@needs_bwrap
def test_timed_out_problem_counts_its_last_call_like_the_trusted_log(tmp_path, shop_world):
    backend = NeverAnswers()
    out = tmp_path / "run"
    config = ArenaRunConfig(
        agents=[miner_path("agentic")], suite=shop_world.mixed, out=out, workers=2, timeout_s=2.0,
        proxy=ProxyConfig(inference=InferenceLimits(call_timeout_s=60.0)),
        sandbox=SandboxConfig(grace_s=1, memory_bytes=1024**3),
    )
    run_arena(config, backend=backend, search=shop_world.engine)
    envelopes = read_jsonl(out / "agents" / "agentic" / "output.jsonl")
    assert {e["status"] for e in envelopes} == {"TIMED_OUT"}
    calls = [e for e in _trusted(out, "agentic") if e["path"] == INFERENCE]
    # The killed agent's call in flight is cancelled (499) and logged before the envelope is written.
    assert len(calls) == 2 and {e["status_code"] for e in calls} == {499}
    assert [e["inference_total"] for e in envelopes] == [1, 1]
    assert backend.cancelled == 2


@pytest.fixture(scope="module")
def tiny_qwen3(tmp_path_factory) -> Path:
    pytest.importorskip("torch")
    from shoparena.models.tiny import build_tiny_qwen3

    return build_tiny_qwen3(tmp_path_factory.mktemp("arena-tiny") / "tiny-qwen3", seed=0)


@needs_bwrap
@needs_torch
def test_tiny_qwen3_through_hf_spec_with_three_workers_answers_every_call(tmp_path, shop_world, tiny_qwen3):
    out = tmp_path / "run"
    config = ArenaRunConfig(
        agents=[miner_path("agentic")], suite=shop_world.product_only, out=out, backend=f"hf:{tiny_qwen3}",
        workers=3, timeout_s=60, proxy=ProxyConfig(inference=InferenceLimits(max_tokens=12)),
        sandbox=SandboxConfig(grace_s=1, memory_bytes=2 * 1024**3),
    )
    summary = run_arena(config, search=shop_world.engine)
    calls = [e for e in _trusted(out, "agentic") if e["path"] == INFERENCE]
    assert calls and all(e["status_code"] == 200 for e in calls)  # no 502 from a half-loaded model
    assert all(e["model"] == "tiny-qwen3" and e["json_data"]["max_tokens"] == 12 for e in calls)
    assert all(e["usage"]["completion_tokens"] <= 12 for e in calls)
    assert summary.model == "tiny-qwen3" and summary.agents[0].no_model_reply == 0
    assert {e["status"] for e in read_jsonl(out / "agents" / "agentic" / "output.jsonl")} == {"SUCCESS"}


@needs_torch
def test_concurrent_first_calls_load_the_model_once(tiny_qwen3):
    from shoparena.llm.transformers_backend import TransformersBackend
    from shoparena.llm.types import ChatRequest

    backend = TransformersBackend(tiny_qwen3, default_max_tokens=4)
    request = ChatRequest(messages=[{"role": "user", "content": "hi"}])
    results: list = []
    threads = [threading.Thread(target=lambda: results.append(backend.complete(request))) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 3 and all(r.usage.completion_tokens > 0 for r in results)
    backend.close()


def test_a_model_that_cannot_load_fails_the_run_up_front(tmp_path, shop_world):
    empty = tmp_path / "not-a-model"
    empty.mkdir()
    config = ArenaRunConfig(agents=[miner_path("agentic")], suite=shop_world.mixed, out=tmp_path / "run",
                            backend=f"hf:{empty}")
    with pytest.raises(RuntimeError, match="failed to load its model"):
        run_arena(config, search=shop_world.engine)
    assert not (tmp_path / "run" / "agents").exists()


@pytest.mark.slow
@needs_bwrap
@needs_torch
def test_smollm2_as_agentic_miner_finishes_inside_its_limits(tmp_path, shop_world):
    from shoparena.models.smollm2 import convert_smollm2

    try:
        folder = convert_smollm2()  # reused when already built (~/.cache/shoparena/models)
    except Exception as err:  # no wheel and no network: nothing to test with
        pytest.skip(f"SmolLM2 unavailable: {err}")
    timeout = 600.0
    out = tmp_path / "run"
    config = ArenaRunConfig(
        agents=[miner_path("agentic")], suite=shop_world.product_only, out=out, backend=f"hf:{folder}",
        workers=1, timeout_s=timeout,
        proxy=ProxyConfig(inference=InferenceLimits(max_tokens=48, call_timeout_s=240)),
        sandbox=SandboxConfig(grace_s=2, memory_bytes=2 * 1024**3),
    )
    summary = run_arena(config, search=shop_world.engine)
    envelopes = read_jsonl(out / "agents" / "agentic" / "output.jsonl")
    assert len(envelopes) == 2 and summary.agents[0].no_model_reply == 0
    for envelope in envelopes:
        assert envelope["status"] == "SUCCESS" and envelope["dialogue"]  # success of the task not required
        assert envelope["execution_time"] < timeout / 2
    calls = [e for e in _trusted(out, "agentic") if e["path"] == INFERENCE]
    assert calls and all(e["status_code"] == 200 and e["usage"]["completion_tokens"] <= 48 for e in calls)


@needs_torch
def test_transformers_generation_stops_when_cancelled(tiny_qwen3):
    import torch

    from shoparena.llm.transformers_backend import TransformersBackend, _StopWhenCancelled
    from shoparena.llm.types import BackendError, ChatRequest

    cancel = threading.Event()
    stop = _StopWhenCancelled(cancel)
    ids = torch.zeros((1, 3), dtype=torch.long)
    assert not bool(stop(ids, None)[0])
    cancel.set()
    assert bool(stop(ids, None)[0])
    backend = TransformersBackend(tiny_qwen3)
    request = ChatRequest(messages=[{"role": "user", "content": "hi"}], max_tokens=64)
    with pytest.raises(BackendError, match="cancelled"):  # given up while queued: never starts
        backend.complete(request, cancel=cancel)
    assert backend.complete(request, cancel=threading.Event()).usage.completion_tokens > 0
