"""The policy paths: the real OpenAI-compatible client against a loopback server serving the tiny Qwen3,
the in-process ``hf:`` path, and the planner giving identical per-problem outcomes in process, over HTTP and
as the arena's ``agentic`` miner in the sandbox."""

from __future__ import annotations

import json
import shutil

import pytest

from shoparena.eval.run import run_eval

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    pytest.importorskip("transformers")
    from shoparena.models.tiny import build_tiny_qwen3

    return build_tiny_qwen3(tmp_path_factory.mktemp("tiny") / "tiny-qwen3")


def _outcomes(root) -> dict[tuple[str, int], bool]:
    rows = [json.loads(x) for x in (root / "episodes.jsonl").read_text().split("\n") if x.strip()]
    return {(r["problem_id"], r["sample_idx"]): r["success_strict"] for r in rows}


def test_openai_path_against_a_loopback_server_with_the_tiny_model(make_config, tiny_model) -> None:
    from shoparena.eval.batching import BatchedTransformersBackend
    from shoparena.eval.server import LoopbackServer, create_app

    backend = BatchedTransformersBackend(tiny_model, max_batch=4)
    try:
        with LoopbackServer(create_app(backend, "tiny")) as server:
            config = make_config(
                f"openai:{server.base_url}#tiny",
                limit=2,
                samples=2,
                temperature=0.8,
                max_steps=2,
                max_tokens=8,
                concurrency=4,
            )
            summary = run_eval(config).dump()
    finally:
        backend.close()
    rows = [json.loads(x) for x in (config.out / "episodes.jsonl").read_text().split("\n") if x.strip()]
    # 2 problems x (2 sampled + 1 greedy) episodes, every model call answered by the server.
    assert len(rows) == 6 and {r["decoding"] for r in rows} == {"sampled", "greedy"}
    assert all(r["calls"] >= 1 and r["failed_calls"] == 0 and r["completion_tokens"] >= 1 for r in rows)
    assert all(r["model"] == "tiny" and r["status"] == "SUCCESS" for r in rows)
    assert backend.generator.stats.max_batch_seen >= 2  # concurrent episodes shared a generate() call
    assert summary["decoding"] == {**summary["decoding"], "mode": "sampled", "temperature": 0.8, "n": 2}
    assert summary["policy"]["kind"] == "openai" and summary["profiles"]["strict"]["overall"]["greedy_asr"]


def test_hf_path_in_process(make_config, tiny_model) -> None:
    config = make_config(
        f"hf:{tiny_model}", limit=2, max_steps=2, max_tokens=8, concurrency=2, format="tagged", threads=1
    )
    summary = run_eval(config).dump()
    rows = [json.loads(x) for x in (config.out / "episodes.jsonl").read_text().split("\n") if x.strip()]
    assert len(rows) == 2 and all(r["calls"] >= 1 and r["completion_tokens"] >= 1 for r in rows)
    assert summary["policy"]["kind"] == "hf" and summary["decoding"]["format"] == "tagged"
    # The config's intra-op threads reach the backend.
    assert summary["policy"]["threads"] == config.threads == 1


def test_planner_outcomes_are_identical_in_process_over_http_and_as_a_miner(make_config) -> None:
    from shoparena.eval.server import LoopbackServer, create_app
    from shoparena.llm.planner_backend import PlannerBackend

    in_process = make_config("planner", out="inproc", concurrency=3)
    run_eval(in_process)
    with LoopbackServer(create_app(PlannerBackend(), "planner")) as server:
        over_http = make_config(f"openai:{server.base_url}#planner", out="http", concurrency=3)
        run_eval(over_http)
    expected = _outcomes(in_process.out)
    assert any(expected.values()) and _outcomes(over_http.out) == expected
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap missing: the miner: path needs the arena sandbox")
    miner = make_config("miner:agentic", out="miner", miner_backend="planner", concurrency=3)
    summary = run_eval(miner).dump()
    assert _outcomes(miner.out) == expected
    assert (
        summary["policy"]["kind"] == "miner" and summary["policy"]["decoding"] == "chosen by the miner file"
    )
