"""Envelopes, executor defaults, bucketing and the resumable output log."""

from __future__ import annotations

import json

import pytest

from shoparena.runs.envelopes import EnvelopeLog, apply_executor_defaults, bucket_proxy_calls, make_envelope


def test_make_envelope_shape():
    env = make_envelope("p1", "FAILED", 1.23456, error={"type": "X", "message": "m"}, dialogue=[{"a": 1}])
    assert list(env) == [
        "problem_id",
        "status",
        "execution_time",
        "inference_failure_count",
        "inference_total",
        "error",
        "dialogue",
    ]
    assert env["dialogue"] is None and env["execution_time"] == 1.235
    with pytest.raises(ValueError, match="status"):
        make_envelope("p", "SKIPPED", 0)


def test_bucketing_rules():
    stamps = [100, 200, None]
    calls = [
        {"kind": "summary", "timestamp": 50},
        {"kind": "summary", "timestamp": 150},
        {"kind": "summary", "timestamp": 250},
        {"kind": "attempt", "timestamp": 160},
    ]
    buckets = bucket_proxy_calls(stamps, calls)
    assert [c["timestamp"] for c in buckets[0]] == [50, 150]
    assert [c["timestamp"] for c in buckets[1]] == [250]
    assert buckets[2] == []


def test_executor_defaults_replace_agent_proxy_calls():
    dialogue = [{"extra_info": {"proxy_calls": ["forged"], "timestamp": 10}}, {"completion": {}}, "junk"]
    out = apply_executor_defaults(
        dialogue,
        query="q",
        problem_id="p",
        execution_time=2.5,
        trusted_calls=[{"kind": "summary", "timestamp": 11}],
        now_ms=99,
    )
    assert out[0]["extra_info"] == {
        "timestamp": 10,
        "step": 1,
        "query": "q",
        "problem_id": "p",
        "execution_time": 2.5,
        "proxy_calls": [{"kind": "summary", "timestamp": 11}],
    }
    assert out[1]["extra_info"] == {"step": 2, "query": "q", "timestamp": 99, "problem_id": "p"}
    assert out[2] == "junk"


def test_log_repairs_torn_line_and_never_duplicates(tmp_path):
    path = tmp_path / "output.jsonl"
    good = json.dumps(make_envelope("a", "SUCCESS", 1, dialogue=[]))
    path.write_text(good + "\n" + '{"problem_id": "b", "sta')
    log = EnvelopeLog(path)
    assert log.done() == {"a"}
    assert log.append(make_envelope("a", "FAILED", 1, error={"type": "X", "message": ""})) is False
    assert log.append(make_envelope("b", "SUCCESS", 1, dialogue=[])) is True
    lines = path.read_text().splitlines()
    assert [json.loads(line)["problem_id"] for line in lines] == ["a", "b"]


def test_log_resume_over_a_large_torn_line_writes_ascii_oro_lines(tmp_path):
    path = tmp_path / "output.jsonl"
    dialogue = [{"completion": {"message": {"content": "é"}}}]
    done = json.dumps(make_envelope("a", "SUCCESS", 1, dialogue=dialogue), ensure_ascii=False)
    torn = json.dumps(make_envelope("b", "SUCCESS", 1, dialogue=[{"x": "y" * 300_000}]))[:200_000]
    path.write_text(done + "\n" + torn, encoding="utf-8")
    log = EnvelopeLog(path)
    assert log.repaired_bytes == 200_000 and log.done() == {"a"}
    assert log.append(make_envelope("b", "FAILED", 2, error={"type": "X", "message": "ü"})) is True
    raw = path.read_bytes()
    appended = raw.split(b"\n")[1]
    assert appended.isascii() and b"\\u00fc" in appended and raw.endswith(b"\n")  # ORO's json.dumps defaults
    assert [e["problem_id"] for e in EnvelopeLog(path).read()] == ["a", "b"]
    assert EnvelopeLog(path).repaired_bytes == 0
