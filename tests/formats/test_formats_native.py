"""Native chat format: SN15 adapter, Hermes parser/renderer, chat <-> trajectory conversions."""

from __future__ import annotations

import copy

import pytest

from shoparena.formats._common import FormatError
from shoparena.formats.io import read_chat_rows
from shoparena.formats.native import (
    chat_to_trajectory,
    native_tool_call,
    normalise_native_arguments,
    parse_hermes_completion,
    read_tool_schemas,
    render_hermes_prompt,
    text_to_result,
    trajectory_to_chat,
)
from shoparena.formats.tagged import parse_completion, tool_call_id
from shoparena.records.trajectory import Trajectory
from world import SHARED_DATA

SN15_ROWS = SHARED_DATA / "oro" / "sft_corpus_prefix_examples.jsonl"
SN15_TOOLS = [
    {
        "type": "function",
        "name": "find_product",
        "description": "Search.",
        "parameters": {
            "additionalProperties": True,
            "properties": {"page": {"type": "integer"}, "q": {"type": "string"}, "query": {"type": "string"}},
            "type": "object",
        },
    },
    {
        "type": "function",
        "name": "recommend_product",
        "description": "Recommend.",
        "parameters": {
            "additionalProperties": True,
            "properties": {
                "product_id": {"type": "string"},
                "product_ids": {"items": {"type": "string"}, "type": "array"},
            },
            "type": "object",
        },
    },
]


# --- adapter ---
@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        ("find_product", {"query": "tea", "price": "0-50"}, {"q": "tea", "price": "0-50", "page": 1}),
        (
            "find_product",
            {"q": "tea", "query": "other", "page": 3},
            {"q": "tea", "query": "other", "page": 3},
        ),
        ("recommend_product", {"product_ids": ["12", "34"]}, {"product_ids": "12,34"}),
        ("recommend_product", {"product_id": "12"}, {"product_ids": "12"}),
        ("view_product_information", {"x": 1, "product_ids": [5, "6"]}, {"x": 1, "product_ids": "5,6"}),
        (
            "recommend_product",
            {"product_ids": "1,2", "product_id": "3"},
            {"product_ids": "1,2", "product_id": "3"},
        ),
        ("recommend_product", {"product_ids": [{"id": 1}]}, {"product_ids": [{"id": 1}]}),
        ("terminate", {}, {}),
    ],
)
def test_normalise_native_arguments(name: str, arguments: dict, expected: dict) -> None:
    out = normalise_native_arguments(name, arguments)
    assert out == expected
    assert list(out) == list(expected)  # key order feeds the id


def test_native_call_id_is_computed_on_normalised_parameters() -> None:
    call = native_tool_call(
        "find_product", '{"query": "dental elastics", "price": "above:10"}', call_id="call_9"
    )
    assert call.parameters == {"q": "dental elastics", "price": "above:10", "page": 1}
    assert call.tool_call_id == tool_call_id("find_product", call.parameters)
    assert call.native_id == "call_9"
    assert call.native_arguments == '{"query": "dental elastics", "price": "above:10"}'


def test_native_invalid_arguments_are_flagged() -> None:
    bad = native_tool_call("find_product", '{"q": "x",')
    assert bad.parameters == {} and "not valid JSON" in (bad.invalid_reason or "")
    listy = native_tool_call("find_product", "[1, 2]")
    assert "not a JSON object" in (listy.invalid_reason or "") and listy.unknown_keys["parameters"] == [1, 2]


# --- Hermes parser ---
def test_parse_hermes_multiple_calls_think_and_text() -> None:
    text = (
        "<think>\nCompare both.\n</think>\n\nChecking two items.\n"
        '<tool_call>\n{"name": "view_product_information", "arguments": {"product_ids": ["1", "2"]}}\n'
        "</tool_call>\n"
        '<tool_call>\n{"name": "find_product", "arguments": "{\\"q\\": \\"tea\\"}"}\n</tool_call>\n'
        "Anything else?"
    )
    parsed = parse_hermes_completion(text)
    assert parsed.think == "Compare both."
    assert parsed.response == "Checking two items.\n\n\nAnything else?"
    assert [(c.name, c.parameters) for c in parsed.tool_calls] == [
        ("view_product_information", {"product_ids": "1,2"}),
        ("find_product", {"q": "tea", "page": 1}),
    ]
    assert parsed.parse_errors == []


def test_parse_hermes_real_model_quirks() -> None:
    text = (
        "I will search first.</think>\n"  # Qwen3: the opening <think> was in the prompt
        '<tool_call>\n```json\n{"name": "find_product", "parameters": {"q": "mug"}}\n```\n</tool_call>\n'
        '<tool_call>{"arguments": {"q": "x"}}</tool_call>\n'
        '<tool_call>{"name": "recommend_product", "arguments": {"product_ids": "1"}} extra</tool_call>\n'
        '<tool_call>\n{"name": "terminate", "arguments": {"status": '
    )
    parsed = parse_hermes_completion(text)
    assert parsed.think == "I will search first."
    assert [c.name for c in parsed.tool_calls] == ["find_product", "recommend_product"]
    errors = {(e.element, e.key): e.message for e in parsed.parse_errors}
    assert errors[(1, "name")] == "required key is missing"
    assert "unclosed" in errors[(3, None)]
    repairs = " | ".join(r.message for r in parsed.repairs)
    assert "code fence" in repairs and "'parameters'" in repairs and "ignored text" in repairs
    assert parsed.response == ""


def test_parse_hermes_reasoning_channel_and_empty() -> None:
    parsed = parse_hermes_completion("Final answer.", "<think>why</think>")
    assert (parsed.think, parsed.response, parsed.tool_calls) == ("why", "Final answer.", [])
    assert parse_hermes_completion(None).content == ""


def test_render_hermes_prompt_structure_and_parse_back() -> None:
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "pink mug"},
        {
            "role": "assistant",
            "content": "",
            "reasoning_content": "search it",
            "tool_calls": [
                {
                    "id": "a",
                    "type": "function",
                    "function": {"name": "find_product", "arguments": '{"q": "mug"}'},
                },
                {"id": "b", "type": "function", "function": {"name": "terminate", "arguments": {}}},
            ],
        },
        {"role": "tool", "tool_call_id": "a", "content": "[]"},
        {"role": "tool", "tool_call_id": "b", "content": "done"},
    ]
    text = render_hermes_prompt(messages, SN15_TOOLS, add_generation_prompt=True)
    assert text.startswith("<|im_start|>system\nBe brief.\n\n# Tools")
    assert text.count('{"type": "function", "function": {"name": ') == 2
    assert text.count("<|im_start|>user") == 2  # the query, then both tool results in one turn
    assert "<tool_response>\n[]\n</tool_response>\n<tool_response>\ndone\n</tool_response><|im_end|>" in text
    assert text.endswith("<|im_start|>assistant\n")
    body = text.split("<|im_start|>assistant\n")[1].split("<|im_end|>")[0]
    assert body.startswith("<think>\nsearch it\n</think>\n\n<tool_call>\n")
    parsed = parse_hermes_completion(body)
    assert [(c.name, c.parameters) for c in parsed.tool_calls] == [
        ("find_product", {"q": "mug", "page": 1}),
        ("terminate", {}),
    ]
    assert parsed.think == "search it"


# --- SN15 rows ---
def test_real_sn15_rows_load_and_round_trip() -> None:
    rows = list(read_chat_rows(SN15_ROWS))
    assert [r.id for r in rows] == ["oro-eval-row-0", "oro-eval-row-50", "oro-eval-row-53"]
    for row in rows:
        schemas = row.tool_schemas()
        assert [s.name for s in schemas] == [
            "find_product",
            "view_product_information",
            "recommend_product",
            "terminate",
        ]
        assert schemas[2].property_type("product_ids") == "array"
        assert schemas[0].property_type("page") == "integer"
        assert read_tool_schemas(row.tools) == schemas
        assert [s.to_flat() for s in schemas] == row.tools
        traj = chat_to_trajectory(row.messages)
        assert traj.query == row.messages[1]["content"] and traj.steps == []
        assert traj.system_prompt == row.messages[0]["content"]
        assert trajectory_to_chat(traj, row.tools) == row.messages


# --- chat <-> trajectory ---
def _conversation() -> list[dict]:
    return [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "dental elastics above 10 PHP"},
        {
            "role": "assistant",
            "content": None,
            "reasoning_content": "Search with a price filter.",
            "tool_calls": [
                {
                    "id": "call_a1",
                    "type": "function",
                    "function": {
                        "name": "find_product",
                        "arguments": '{"query": "dental elastics", "price": "10-"}',
                    },
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_a1", "content": '[{"product_id": "55", "price": 12.5}]'},
        {
            "role": "assistant",
            "content": "<think>55 fits.</think>Recommending 55.",
            "tool_calls": [
                {
                    "id": "call_b2",
                    "type": "function",
                    "function": {"name": "recommend_product", "arguments": '{"product_ids": ["55"]}'},
                },
                {"id": "call_c3", "type": "function", "function": {"name": "terminate", "arguments": "{}"}},
            ],
            "refusal": None,
        },
        {
            "role": "tool",
            "tool_call_id": "call_b2",
            "content": "Having recommended the products to the user: 55.",
        },
        {"role": "tool", "tool_call_id": "call_c3", "content": "The interaction has been completed"},
    ]


def test_chat_to_trajectory_normalises_and_round_trips_exactly() -> None:
    messages = _conversation()
    traj = chat_to_trajectory(copy.deepcopy(messages), problem_id="p1")
    assert traj.problem_id == "p1" and traj.query == "dental elastics above 10 PHP"
    first, second = traj.steps
    assert first.think == "Search with a price filter." and first.content_format == "native"
    (search,) = first.tool_calls
    assert search.parameters == {"q": "dental elastics", "price": "10-", "page": 1}
    assert search.result == [{"product_id": "55", "price": 12.5}]
    assert second.think == "55 fits." and second.response == "Recommending 55."
    assert [c.parameters for c in second.tool_calls] == [{"product_ids": "55"}, {}]
    assert traj.last_recommendation() is second.tool_calls[0]
    assert trajectory_to_chat(traj) == messages


def test_tool_results_match_by_id_then_position() -> None:
    messages = _conversation()
    messages[5]["tool_call_id"], messages[6]["tool_call_id"] = "call_c3", "unknown"
    traj = chat_to_trajectory(messages)
    recommend, terminate = traj.steps[1].tool_calls
    assert terminate.result == "Having recommended the products to the user: 55."
    assert recommend.result == "The interaction has been completed"
    assert any("matched by position" in e for e in traj.steps[1].parse_errors)


def test_chat_errors_name_the_message() -> None:
    with pytest.raises(FormatError, match=r"messages\[2\]\.role: unknown role 'robot'"):
        chat_to_trajectory(
            [{"role": "system", "content": ""}, {"role": "user", "content": "q"}, {"role": "robot"}]
        )
    with pytest.raises(FormatError, match=r"messages\[1\]: tool result before any assistant turn"):
        chat_to_trajectory(
            [{"role": "user", "content": "q"}, {"role": "tool", "tool_call_id": "x", "content": ""}]
        )
    with pytest.raises(FormatError, match=r"messages\[1\]\.tool_calls\[0\]\.function"):
        chat_to_trajectory(
            [{"role": "user", "content": "q"}, {"role": "assistant", "tool_calls": [{"id": "1"}]}]
        )
    with pytest.raises(FormatError, match=r"messages\[2\]\.role: only one user turn"):
        chat_to_trajectory(
            [{"role": "user", "content": "q"}, {"role": "assistant"}, {"role": "user", "content": "?"}]
        )


def test_hermes_text_turns_with_tool_response_user_turn() -> None:
    messages = [
        {"role": "user", "content": "mug"},
        {
            "role": "assistant",
            "content": '<think>go</think>\n<tool_call>\n{"name": "find_product", "arguments": {"q": "mug"}}\n'
            "</tool_call>",
        },
        {"role": "user", "content": "<tool_response>\n[]\n</tool_response>"},
    ]
    traj = chat_to_trajectory(messages)
    (step,) = traj.steps
    assert step.content_format == "hermes" and step.think == "go"
    assert step.tool_calls[0].result == [] and step.tool_calls[0].has_result
    chat = trajectory_to_chat(traj)
    assert chat[1] == messages[1]  # text kept verbatim, no duplicate structured calls


def test_tagged_to_native_to_tagged_keeps_calls() -> None:
    content = (
        "<think>pick</think>\n<tool_call>["
        '{"name": "find_product", "parameters": {"q": "mug", "page": 1}},'
        '{"name": "recommend_product", "parameters": {"product_ids": "4,5"}},'
        '{"name": "terminate", "parameters": {"status": "success"}}]</tool_call>'
    )
    step = parse_completion(content).to_step(1)
    for i, call in enumerate(step.tool_calls):
        call.result, call.has_result = {"i": i, "url": "a/b"}, True
    traj = Trajectory(query="mug", steps=[step])
    chat = trajectory_to_chat(traj, SN15_TOOLS)
    args = chat[1]["tool_calls"][1]["function"]["arguments"]
    assert args == '{"product_ids": ["4", "5"]}'  # the SN15 schema declares an array
    back = chat_to_trajectory(chat)
    got = [(c.name, c.parameters, c.tool_call_id, c.result) for c in back.steps[0].tool_calls]
    assert got == [(c.name, c.parameters, c.tool_call_id, c.result) for c in step.tool_calls]
    assert back.steps[0].think == "pick"


def test_text_to_result_only_decodes_exact_json() -> None:
    assert text_to_result('[{"a": 1}]') == [{"a": 1}]
    assert text_to_result('[{"a":1}]') == '[{"a":1}]'  # would not re-encode identically: kept as text
    assert text_to_result('"quoted"') == '"quoted"'
    assert text_to_result("plain") == "plain"


def test_tool_schema_errors_name_the_field() -> None:
    with pytest.raises(FormatError, match=r"tools\[1\]: ToolSchema\.name: expected a non-empty string"):
        read_tool_schemas([{"name": "ok"}, {"type": "function", "description": "no name"}])
    with pytest.raises(FormatError, match=r"tools\[0\]: ToolSchema\.parameters of 'x': expected an object"):
        read_tool_schemas([{"name": "x", "parameters": []}])
