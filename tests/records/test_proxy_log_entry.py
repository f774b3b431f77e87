"""ProxyLogEntry: round trip, the one rule for a missing kind, strict writers, lenient agent-written reads."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from shoparena.agent_sdk.logs import RequestLog
from shoparena.records.proxy_log import (
    ParsedCall,
    ProofKind,
    ProxyLogEntry,
    is_summary,
    proxy_entries,
    proxy_entry,
)


def _full_entry() -> ProxyLogEntry:
    return ProxyLogEntry(
        kind="summary", method="POST", path="/inference/chat/completions", timestamp=1777712347905,
        duration_ms=7790.4, status_code=200, json_data={"model": "m", "stop": ["</x>"]},
        response={"choices": [{"message": {"content": "é \u2028 ok"}}]}, model="m", requested_model="n",
        usage={"completion_tokens": 71}, parsed_tool_names=["find_product"], problem_id="p",
        parsed_tool_calls=[ParsedCall(id="a", name="find_product", arguments='{"q": "x"}')],
    )


def test_an_entry_round_trips_through_its_line():
    entry = _full_entry()
    line = entry.to_line()
    assert "\n" not in line and "\u2028" in line  # written unescaped, read back by shoparena.jsonl
    again = proxy_entry(json.loads(line))
    assert again == entry
    assert list(json.loads(line))[:6] == ["kind", "method", "path", "timestamp", "duration_ms", "status_code"]
    dispatch = ProxyLogEntry(
        path="/search/find_product", proof=ProofKind.MATCHED_EMITTED, nonce_status="missing"
    )
    assert proxy_entry(json.loads(dispatch.to_line())) == dispatch
    assert json.loads(dispatch.to_line()) == {
        "kind": "summary", "path": "/search/find_product", "nonce_status": "missing",
        "proof": "matched_emitted",
    }


@pytest.mark.parametrize(
    ("raw", "summary"),
    [({"path": "/search/find_product"}, True), ({"kind": "summary"}, True), ({"kind": "attempt"}, False),
     ({"kind": "Summary"}, False), ({"kind": 5}, False), ({"kind": None}, False)],
)
def test_one_rule_for_kind_on_raw_objects_and_typed_entries(raw, summary):
    assert is_summary(raw) is summary
    entry = proxy_entry(raw)
    assert entry is not None and entry.is_summary is summary


def test_our_writers_fail_on_a_wrong_field():
    with pytest.raises(ValidationError, match="status_code"):
        ProxyLogEntry(status_code="200")
    with pytest.raises(ValidationError, match="extra"):
        ProxyLogEntry(path="/x", headers={})
    entry = ProxyLogEntry(path="/x")
    with pytest.raises(ValidationError, match="duration_ms"):
        entry.duration_ms = "slow"


def test_agent_written_entries_are_read_without_raising_bad_fields_dropped():
    raw = [
        "not an object", 7, None,
        {"path": "/search/find_product", "status_code": "200", "headers": {"x": 1}, "nonce_status": "valid",
         "proof": "made_up", "parsed_tool_names": ["view_product_information", 3, None], "timestamp": True},
        {"kind": "attempt", "path": "/inference/chat/completions", "attempt": "first"},
    ]
    entries = proxy_entries(raw)
    assert len(entries) == 2
    first, second = entries
    assert first.path == "/search/find_product" and first.nonce_status == "valid"
    assert first.status_code is None and first.proof is None and first.timestamp is None
    assert first.parsed_tool_names == ["view_product_information"]
    assert not second.is_summary and second.attempt is None
    assert proxy_entries(None) == []


def test_the_sandbox_request_log_writes_valid_entries(tmp_path):
    # agent_sdk is stdlib only inside the sandbox, so it cannot build the model: this test holds it to it.
    path = tmp_path / "requests.jsonl"
    log = RequestLog(str(path))
    log.record_attempt("POST", "/inference/chat/completions", 0, 12.34, None, "URLError")
    log.record("POST", "/inference/chat/completions", json_data={"model": "m"}, status_code=200,
               response_body={"choices": []}, duration_ms=20.0)
    log.record("GET", "/search/find_product", params={"q": "mug", "page": None}, status_code=200,
               response_body=[{"product_id": "1"}], duration_ms=3.0)
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line]
    entries = [ProxyLogEntry.model_validate(line) for line in lines]  # strict: no field dropped
    assert [e.kind for e in entries] == ["attempt", "summary", "summary"]
    assert entries[0].error_class == "URLError" and entries[0].attempt == 0
    assert entries[2].params == {"q": "mug"} and entries[2].response == [{"product_id": "1"}]
