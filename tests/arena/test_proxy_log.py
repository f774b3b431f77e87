"""The one proxy-log reader: tool-call parser, entry roles, the trusted file, the shared pending walk."""

from __future__ import annotations

import json

import pytest
from proxy_log_fixtures import SCENARIOS, envelope, inference, reply, scenario_record

from shoparena.arena.proxy_log import (
    is_chat_call,
    is_inference,
    is_model_reply,
    parse_response_tool_calls,
    pending_target_walk,
    read_trusted_log,
    requested_tool_names,
)
from shoparena.arena.richness import trajectory_richness
from shoparena.formats.oro import from_oro_envelope
from shoparena.records.proxy_log import ProxyLogEntry, proxy_entries, proxy_entry


def test_parser_reads_native_calls_then_blocks_in_every_published_name_form():
    content = (
        '<tool_call>[{"name": "find_product", "parameters": {"q": "a"}},'
        ' {"tool": "view_product_information"},'
        ' {"function": {"name": "find_product", "arguments": {"q": "b"}}}, {"function": 3}, "x"]</tool_call>'
        "<tool_call>not json</tool_call>"
        '<tool_call>{"name": "recommend_product", "arguments": "{\\"product_ids\\": \\"1\\"}"}</tool_call>'
    )
    calls = parse_response_tool_calls(reply(content, native=[("n1", "terminate", {})]))
    assert [(c.call_id, c.name, c.arguments) for c in calls] == [
        ("n1", "terminate", "{}"),
        ("xml_0_0_0", "find_product", '{"q": "a"}'),
        ("xml_0_0_1", "view_product_information", "{}"),
        ("xml_0_0_2", "find_product", '{"q": "b"}'),
        ("xml_0_2", "recommend_product", '{"product_ids": "1"}'),
    ]


@pytest.mark.parametrize(
    "response",
    [None, [], "text", {"choices": {"a": 1}}, {"choices": [5, {"message": "hi"}]},
     {"choices": [{"message": {"tool_calls": 5, "content": 7}}]},
     {"choices": [{"message": {"tool_calls": [5, {"function": "find_product"}], "content": None}}]}],
)
def test_parser_never_raises_on_what_an_agent_wrote(response):
    assert parse_response_tool_calls(response) == []


def test_entry_roles():
    answered = proxy_entry(inference(1, reply()))
    failed = proxy_entry(inference(2, None, status=504))
    other = ProxyLogEntry(path="/inference/models", status_code=403)
    assert [is_inference(e) for e in (answered, failed, other)] == [True, True, True]
    assert [is_chat_call(e) for e in (answered, failed, other)] == [True, True, False]
    assert [is_model_reply(e) for e in (answered, failed, other)] == [True, False, False]


def test_requested_names_come_from_the_response_else_the_parsed_names():
    answer = reply(native=[("a", "find_product", {})])
    full = proxy_entry(inference(1, answer, parsed_tool_names=["terminate"]))
    truncated = proxy_entry(inference(1, None, response_truncated=True, parsed_tool_names=["terminate"]))
    assert requested_tool_names(full) == ["find_product"]
    assert requested_tool_names(truncated) == ["terminate"]


def test_the_trusted_log_keeps_summaries_and_skips_damage(tmp_path):
    path = tmp_path / "p.jsonl"
    lines = [
        json.dumps({"kind": "summary", "path": "/search/find_product", "status_code": 200}),
        json.dumps({"kind": "attempt", "path": "/search/find_product", "attempt": 0}),
        json.dumps({"path": "/inference/chat/completions", "status_code": 200, "note": "\u2028 inside"}),
        "{torn",
        "[1, 2]",
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    entries = read_trusted_log(path)
    assert [e.path for e in entries] == ["/search/find_product", "/inference/chat/completions"]
    assert read_trusted_log(tmp_path / "missing.jsonl") == []


@pytest.mark.parametrize("name", [n for n, s in SCENARIOS.items() if s["trusted"] is not None])
def test_arena_richness_and_the_corpus_walk_agree(name):
    """The published Variant A is one walk: the arena's pending_target is the corpus's richness_pending."""
    trusted = SCENARIOS[name]["trusted"]
    record = scenario_record(from_oro_envelope(envelope(name)), name, trusted)
    rich = trajectory_richness(name, trusted)
    walk = pending_target_walk([proxy_entries(trusted)])
    assert rich.pending_target == walk.richness and rich.llm_emitted_count == sum(walk.matched)
    if record.evidence.dispatches:
        assert rich.pending_target == record.evidence.richness_pending
    # The record's Variant B and proof share come from the same richness (its walk passed in, not redone).
    entries = [e for e in proxy_entries(trusted) if e.is_summary]
    assert trajectory_richness(name, entries, walk=pending_target_walk([entries])) == rich
    assert record.evidence.richness_nonce == rich.nonce_stamped
    assert record.evidence.nonce_counts == rich.nonce_statuses
    proved = any(e.proof is not None for e in entries)
    assert record.evidence.richness_proof == (rich.agentic_richness if proved else None)


def test_agent_written_proxy_calls_that_are_not_objects_never_raise():
    env = envelope("agent_written_log_with_forgeries")
    env["dialogue"][0]["extra_info"]["proxy_calls"].insert(1, "not an object")
    record = scenario_record(from_oro_envelope(env), "p", None)
    assert record.evidence.dispatches == 3 and record.evidence.forged
