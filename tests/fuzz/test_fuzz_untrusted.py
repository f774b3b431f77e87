"""Seeded fuzzing of the surfaces an untrusted client or a careless user reaches (issue 31): env-server
requests, the viewer's inline data, ``corpus publish`` destinations and a model server's faults.
A few seconds by default; every case asserts the invariant, not a count."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from shoparena.cli.main import app
from shoparena.records.problem import Intent
from shoparena.suites.options import SynthOptions
from shoparena.suites.synth import synthesize_bank


@pytest.fixture(scope="module")
def fuzz_bank(synth, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("fuzz_bank") / "bank.json"
    options = SynthOptions(n=3, seed=9, intents=(Intent.PRODUCT, Intent.SHOP))
    synthesize_bank(synth.index.index_dir, out, options)
    return out


@pytest.fixture(scope="module")
def tasks_for_fuzz(fuzz_bank, synth):
    from shoparena.integrations.tasks import ShopTaskSet

    return ShopTaskSet.load(fuzz_bank, synth.index.index_dir, max_steps=4)


HOSTILE_TEXT = [
    "", "<!--<script>", "</script>", "\u2028", "\x00", "é", "🙂", "\ud83d", "\udfff", "\\ud83d", "{", "]]>",
    "<tool_call>", "</tool_call>", "<think>", "x" * 3000, "null", "-1", "1e309", "&amp;", "\r\n",
]  # fmt: skip


def _text(rng: random.Random) -> str:
    return "".join(rng.choice(HOSTILE_TEXT) for _ in range(rng.randint(0, 4)))


def _value(rng: random.Random, depth: int = 0):
    kind = rng.randrange(8 if depth < 3 else 5)
    if kind == 0:
        return None
    if kind == 1:
        return rng.choice([True, False, 0, -1, 2**63, 2**70, 1.5, -0.0])
    if kind in (2, 3, 4):
        return _text(rng)
    if kind == 5:
        return [_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return {_text(rng): _value(rng, depth + 1) for _ in range(rng.randint(0, 4))}


TOOLS = ["find_product", "view_product_information", "recommend_product", "terminate", "web_search", "nope"]


def _call(rng: random.Random) -> dict:
    arguments = {"q": _text(rng), "page": _value(rng), "product_ids": _text(rng), "status": _text(rng)}
    if rng.random() < 0.3:
        arguments = _value(rng)
    return {"name": rng.choice(TOOLS), "parameters": arguments}


def _action(rng: random.Random):
    kind = rng.randrange(5)
    if kind == 0:
        return _text(rng) + f"<tool_call>{json.dumps([_call(rng)])}</tool_call>"
    if kind == 1:
        return [_call(rng) for _ in range(rng.choice([0, 1, 3, 80]))]
    if kind == 2:
        calls = [
            {"id": "c", "function": {"name": c["name"], "arguments": json.dumps(c["parameters"])}}
            for c in (_call(rng) for _ in range(rng.randint(1, 3)))
        ]
        # The escape a model writes: a lone surrogate arriving through JSON.
        calls[0]["function"]["arguments"] = calls[0]["function"]["arguments"].replace("a", "\\ud83d", 1)
        return {"role": "assistant", "content": _text(rng), "tool_calls": calls}
    return _value(rng)


@pytest.mark.parametrize("seed", [1, 2])
def test_fuzzed_env_server_requests_never_crash_or_leak(tasks_for_fuzz, seed: int) -> None:
    from fastapi.testclient import TestClient

    from shoparena.integrations.http import create_app

    rng = random.Random(seed)
    app_ = create_app(tasks_for_fuzz, max_sessions=4, max_calls_per_step=8)
    client = TestClient(app_, base_url="http://localhost")
    sessions: list[str] = []
    for _ in range(30):
        roll = rng.random()
        if roll < 0.25 or not sessions:
            body = rng.choice(
                [{"seed": _value(rng)}, {"problem_id": _value(rng)}, _value(rng), {"seed": rng.randint(0, 9)}]
            )
            response = client.post("/sessions", content=json.dumps(body).encode("utf-8", "surrogatepass"))
            if response.status_code == 201:
                sessions.append(response.json()["session_id"])
        else:
            sid = rng.choice(sessions)
            payload = json.dumps({"action": _action(rng)}).encode("utf-8", "surrogatepass")
            response = client.post(f"/sessions/{sid}/step", content=payload)
            if response.status_code == 200 and response.json()["done"]:
                view = response.json()
                assert view["verdict"] is not None and "expected" not in json.dumps(view["verdict"])
                assert client.get(f"/sessions/{sid}/trajectory").status_code == 200
                assert client.delete(f"/sessions/{sid}").status_code == 200
                sessions.remove(sid)
        assert response.status_code in (200, 201, 404, 409, 413, 422, 429, 503), response.text[:300]
        if response.status_code >= 400:
            error = response.json()["error"]
            assert isinstance(error, str) and "\n" not in error and "Traceback" not in error
    assert client.get("/health", headers={"host": "rebound.example"}).status_code == 403


@pytest.mark.parametrize("seed", range(4))
def test_fuzzed_viewer_data_never_changes_the_page(seed: int) -> None:
    from shoparena.viewer.server import inline_json

    rng = random.Random(seed)
    for _ in range(50):
        data = {"rows": [{_text(rng).replace("\ud83d", "").replace("\udfff", ""): _value(rng)}]}
        data = json.loads(json.dumps(data, ensure_ascii=False, default=str).encode("utf-8", "replace"))
        inlined = inline_json(data)
        assert "<" not in inlined and "\u2028" not in inlined and json.loads(inlined) == data


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("seed", range(2))
def test_fuzzed_publish_destinations_never_lose_a_file(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    corpus = tmp_path / "corpus"
    (corpus / "views").mkdir(parents=True)
    (corpus / "README.md").write_text("---\nlicense: apache-2.0\n---\n")
    pq.write_table(pa.table({"t": ["a"]}), corpus / "views" / "sft-train.parquet")
    (corpus / "records.jsonl").write_text("{}\n")
    other = tmp_path / "other"
    other.mkdir()
    (other / "catalog.jsonl").write_text("{}\n")
    (tmp_path / "file.txt").write_text("x")
    (tmp_path / "link").symlink_to(other, target_is_directory=True)
    choices = [corpus, tmp_path, corpus / "views", other, tmp_path / "link", tmp_path / "file.txt"]
    choices += [tmp_path / "new" / "deep", corpus / "publish", corpus / "views" / "x", other / "sub"]
    for _ in range(5):
        out = rng.choice(choices)
        before = _snapshot(tmp_path)
        args = ["corpus", "publish", str(corpus), "--repo-id", "o/n", "--prepare-only", "--out", str(out)]
        result = CliRunner().invoke(app, args)
        assert result.exit_code in (0, 2) and "Traceback" not in result.output, result.output
        after = _snapshot(tmp_path)
        if result.exit_code == 2:
            assert after == before and "error" in result.stderr.lower()
        else:  # staged: nothing outside the destination changed
            inside = str(out.relative_to(tmp_path))
            assert {k: v for k, v in before.items() if not k.startswith(inside)} == {
                k: v for k, v in after.items() if not k.startswith(inside)
            }
            assert (out / "README.md").is_file()
        staged_apart = out not in (corpus, tmp_path, other) and not out.is_symlink()
        if result.exit_code == 0 and staged_apart and out.is_dir():
            shutil.rmtree(out)


def test_fuzzed_model_server_faults_put_every_episode_in_one_bucket(fuzz_bank, synth, tmp_path) -> None:
    from fault_server import FaultServer
    from shoparena.runs.infra import pending_infra, read_infra

    out = tmp_path / "run"
    with FaultServer("mixed", seed=31) as server:
        args = ["eval", "run", "--policy", f"openai:{server.base_url}#m", "--suite", str(fuzz_bank)]
        args += ["--index", str(synth.index.index_dir), "--out", str(out), "--max-steps", "3"]
        args += ["--request-retries", "0", "--no-progress", "--concurrency", "2"]
        for _ in range(2):  # a re-run retries the infrastructure failures
            result = CliRunner().invoke(app, args)
            assert result.exit_code in (0, 1) and "Traceback" not in result.output, result.output
            summary = json.loads((out / "summary.json").read_text())
            episodes = out / "episodes.jsonl"
            lines = episodes.read_text().splitlines() if episodes.exists() else []
            rows = [json.loads(line) for line in lines]
            done = {(r["problem_id"], r["sample_idx"]) for r in rows}
            pending = pending_infra(read_infra(out), done)
            assert summary["episodes"]["finished"] == len(done)
            assert len(done) + len(pending) == summary["episodes"]["expected"]
            unrun = {f.problem_id for f in pending}
            metrics = summary["profiles"]["strict"]["overall"]
            assert metrics["problems"] == summary["suite"]["problems"] - len(unrun)
