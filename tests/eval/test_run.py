"""``run_eval`` with the planner: run directory shape, kill-and-resume, the leak guard, config changes."""

from __future__ import annotations

import json

import pytest
from kill_helpers import run_until_killed

from shoparena.eval.leak import LeakError
from shoparena.eval.run import run_eval
from shoparena.runs.identity import RunDirError


def _lines(path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().split("\n") if x.strip()]


def test_run_directory_matches_the_contract(make_config, bank) -> None:
    config = make_config(samples=2, concurrency=2)
    summary = run_eval(config).dump()
    root = config.out
    for name in ("config.yaml", "manifest.json", "output.jsonl", "episodes.jsonl", "summary.json"):
        assert (root / name).is_file(), name
    problems = len(json.loads(bank.read_text()))
    episodes = _lines(root / "episodes.jsonl")
    envelopes = _lines(root / "output.jsonl")
    assert len(episodes) == len(envelopes) == 2 * problems
    assert {(e["problem_id"], e["sample_idx"]) for e in episodes} == {
        (p, i) for p in {e["problem_id"] for e in envelopes} for i in (0, 1)
    }
    assert all(env["status"] == "SUCCESS" and env["dialogue"] for env in envelopes)
    saved = json.loads((root / "summary.json").read_text())
    assert saved == json.loads(json.dumps(summary))
    for profile in ("strict", "shoppingbench"):
        overall = saved["profiles"][profile]["overall"]
        for key in ("greedy_asr", "pass@1"):
            assert {"value", "ci_low", "ci_high"} <= set(overall[key])
            assert overall[key]["ci_low"] <= overall[key]["value"] <= overall[key]["ci_high"]
        assert set(overall["pass@k"]) == set(overall["pass^k"]) == {"1", "2"}
        assert {"Product", "Shop", "Voucher"} <= set(saved["profiles"][profile])
        assert "overall" in saved["shortcut_floor"][profile]
    assert saved["decoding"]["mode"] == "greedy" and saved["decoding"]["n"] == 2
    assert len(saved["suite"]["sha256"]) == 64 and saved["suite"]["partition"] == "unknown"
    assert saved["label"] == "unchecked"
    # The deterministic planner solves a problem in both samples or in neither.
    strict = saved["profiles"]["strict"]["overall"]
    assert strict["pass@k"]["2"]["value"] == strict["pass@1"]["value"] == strict["pass^k"]["2"]["value"]


def test_kill_and_resume_plays_exactly_the_missing_episodes(make_config) -> None:
    config = make_config(samples=2, concurrency=1)
    run_until_killed(config, after=3)
    root = config.out
    before = len(_lines(root / "episodes.jsonl"))  # the episode in flight at the kill may still land
    assert 3 <= before <= 4
    # A kill can also leave one envelope without its record, and a torn line.
    with open(root / "output.jsonl", "a") as fh:
        fh.write(json.dumps(_lines(root / "output.jsonl")[0]) + "\n" + '{"problem_id": "torn')
    resumed = run_eval(config).dump()
    episodes = _lines(root / "episodes.jsonl")
    envelopes = _lines(root / "output.jsonl")
    expected = resumed["episodes"]["expected"]
    assert len(episodes) == len(envelopes) == expected
    assert resumed["throughput"]["episodes_this_call"] == expected - before
    assert len({(e["problem_id"], e["sample_idx"]) for e in episodes}) == expected
    assert [e["problem_id"] for e in envelopes] == [e["problem_id"] for e in episodes]  # still aligned
    again = run_eval(config).dump()
    assert again["throughput"]["episodes_this_call"] == 0
    assert again["profiles"] == resumed["profiles"]


def test_a_different_run_in_the_directory_is_refused(make_config) -> None:
    run_eval(make_config(limit=2))
    with pytest.raises(RunDirError, match="samples: 1 -> 3"):
        run_eval(make_config(limit=2, samples=3))
    run_eval(make_config(limit=2, concurrency=3))  # concurrency does not change outcomes: resumable
    run_eval(make_config(limit=2, threads=2))  # nor do intra-op threads


def test_the_suites_web_pages_are_part_of_the_runs_identity(make_config, bank, tmp_path) -> None:
    from shoparena.env.knowledge import knowledge_path_for

    suite = tmp_path / "suite.json"
    suite.write_bytes(bank.read_bytes())
    config = make_config(limit=2).model_copy(update={"suite": suite})
    run_eval(config)
    page = {"url": "https://kb.example/wiki/a", "title": "A (company)", "content": "Brand: A."}
    knowledge_path_for(suite).write_text(json.dumps(page) + "\n")  # other pages: other web episodes
    with pytest.raises(RunDirError, match="suite_knowledge"):
        run_eval(config)


def _corpus(tmp_path, records) -> object:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "problems.json").write_text(json.dumps(records))
    return corpus


def test_leak_guard_refuses_a_leaked_suite(make_config, bank, tmp_path) -> None:
    suite = json.loads(bank.read_text())
    leaked = _corpus(tmp_path, [dict(r, split="train", cluster_id="c0") for r in suite[:1]])
    with pytest.raises(LeakError, match="leak cluster"):
        run_eval(make_config(train_corpus=leaked, limit=2))
    labelled = run_eval(make_config(out="leaky", train_corpus=leaked, allow_leak=True, limit=2)).dump()
    assert labelled["label"] == "leaked" and labelled["leak"]["straddling_clusters"] >= 1
    assert any("LEAKED" in note for note in labelled["notes"])


def test_leak_guard_passes_a_held_out_suite(make_config, bank, tmp_path) -> None:
    suite = json.loads(bank.read_text())
    # The same problems in the corpus's eval split are not training data: no leak.
    corpus = _corpus(tmp_path, [dict(r, split="eval", cluster_id=f"c{i}") for i, r in enumerate(suite)])
    summary = run_eval(make_config(train_corpus=corpus, limit=2)).dump()
    assert summary["label"] == "held_out" and summary["leak"]["train_problems"] == 0


class _SlowSearcher:
    """Searches forever, 0.2 s per call; the third problem's second call is refused (HTTP 400, the
    policy's own context overflowing: its failure, not the server's)."""

    def complete(self, request):
        import time

        from shoparena.llm.types import BackendError, ChatResponse

        query = next(m["content"] for m in request.messages if m["role"] == "user")
        if "boom" in query and len(request.messages) > 2:
            raise BackendError("HTTP 400: context length exceeded", status_code=400)
        if "boom" not in query:
            time.sleep(0.2)
        function = {"name": "find_product", "arguments": '{"q": "x"}'}
        call = {"id": "c", "type": "function", "function": function}
        return ChatResponse(tool_calls=[call])


def test_timed_out_and_failed_episodes_count_as_failures(make_config, bank, tmp_path) -> None:
    suite = json.loads(bank.read_text())[:3]
    suite[2]["query"] = "boom " + suite[2]["query"]
    path = tmp_path / "suite.json"
    path.write_text(json.dumps(suite))
    config = make_config("openai:http://unused.invalid/v1#m", limit=None, episode_timeout_s=0.3)
    config = config.model_copy(update={"suite": path})
    summary = run_eval(config, backend=_SlowSearcher()).dump()
    rows = _lines(config.out / "episodes.jsonl")
    assert sorted(r["status"] for r in rows) == ["FAILED", "TIMED_OUT", "TIMED_OUT"]
    failed = next(r for r in rows if r["status"] == "FAILED")
    assert failed["failed_calls"] == 1 and "context length exceeded" in failed["error"]
    assert summary["episodes"]["by_status"] == {"TIMED_OUT": 2, "FAILED": 1}
    for profile in ("strict", "shoppingbench"):
        overall = summary["profiles"][profile]["overall"]
        assert overall["problems"] == 3 and overall["pass@1"]["value"] == 0.0
