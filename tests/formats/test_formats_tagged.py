"""ShoppingBench tagged format: ids, ujson dialect, parser, stop rules, prompts and re-rendering."""

from __future__ import annotations

import json

import pytest

from shoparena.formats.tagged import (
    HISTORY_HEADER,
    MAX_STEPS,
    ParsedStep,
    build_history_message,
    build_prompt_messages,
    build_system_prompt,
    parse_completion,
    render_model_output,
    render_step_content,
    should_stop,
    tool_call_id,
    ujson_dumps,
)
from shoparena.records.message import ToolSchema
from shoparena.records.trajectory import Step, ToolCall


# --- tool_call_id ---
@pytest.mark.parametrize(
    ("name", "parameters", "expected"),
    [
        ("terminate", {"status": "success"}, "NR0gqQng"),
        ("find_product", {"q": "hosport waist bag", "price": "180-505"}, "0F6wQPb_"),
        ("find_product", {"price": "180-505", "q": "hosport waist bag"}, "7aHeHyUn"),
    ],
)
def test_tool_call_id_spec_examples(name: str, parameters: dict, expected: str) -> None:
    assert tool_call_id(name, parameters) == expected


def test_tool_call_id_hashes_python_repr_not_json() -> None:
    # Python repr writes True/None and single quotes; a JSON-text hash would differ.
    params = {"flag": True, "none": None, "n": 1.0}
    assert tool_call_id("x", params) != tool_call_id("x", json.loads(json.dumps(params)) | {"flag": 1})
    assert len(tool_call_id("x", params)) == 8
    assert "=" not in tool_call_id("x", params)


# --- ujson dialect ---
def test_ujson_dumps_compact_ascii_and_slash_escaped() -> None:
    obj = {
        "url": "https://a.b/c",
        "title": "café ☕ 😀",
        "nl": "a\nb",
        "tag": "</think>",
        "n": [1, 2.5, None],
    }
    text = ujson_dumps(obj)
    assert text == (
        '{"url":"https:\\/\\/a.b\\/c","title":"caf\\u00e9 \\u2615 \\ud83d\\ude00","nl":"a\\nb",'
        '"tag":"<\\/think>","n":[1,2.5,null]}'
    )
    assert json.loads(text) == obj
    assert text.isascii()


# --- parser ---
def test_parse_full_completion() -> None:
    content = (
        "<think> Need a search. </think>\n"
        '<tool_call>[{"name": "find_product", "parameters": {"q": "hosport waist bag", "price": "180-505"}}]'
        "</tool_call>\n<response> Searching. </response>"
    )
    parsed = parse_completion(content)
    assert parsed.think == "Need a search."
    assert parsed.response == "Searching."
    assert [(c.name, c.parameters, c.tool_call_id) for c in parsed.tool_calls] == [
        ("find_product", {"q": "hosport waist bag", "price": "180-505"}, "0F6wQPb_")
    ]
    assert parsed.parse_errors == []
    assert list(parsed.tool_calls[0].parameters) == ["q", "price"]  # parsed key order kept


def test_think_falls_back_to_reasoning_content_without_tags() -> None:
    parsed = parse_completion(
        '<tool_call>{"name": "terminate", "parameters": {"status": "success"}}</tool_call>',
        "<think>\n  deep thoughts </think>",
    )
    assert parsed.think == "deep thoughts"
    # A whitespace-only think block counts as missing too.
    assert parse_completion("<think>   </think>", "fallback").think == "fallback"
    # A non-empty think block wins over reasoning_content.
    assert parse_completion("<think>mine</think>", "other").think == "mine"


def test_none_content_is_empty_string() -> None:
    parsed = parse_completion(None)
    assert parsed.content == ""
    assert parsed.is_empty()
    assert should_stop(parsed)


def test_single_object_is_wrapped_in_a_list() -> None:
    parsed = parse_completion(
        '<tool_call>{"name": "terminate", "parameters": {"status": "success"}}</tool_call>'
    )
    assert [c.tool_call_id for c in parsed.tool_calls] == ["NR0gqQng"]


def test_missing_parameters_empties_the_whole_list_and_says_why() -> None:
    content = (
        '<think>t</think><tool_call>[{"name": "find_product", "parameters": {"q": "x", "page": 1}}, '
        '{"name": "terminate"}, {"parameters": {}}]</tool_call>'
    )
    parsed = parse_completion(content)
    assert parsed.tool_calls == []
    reasons = [(e.element, e.key, e.message) for e in parsed.parse_errors]
    assert (1, "parameters", "required key is missing") in reasons
    assert (2, "name", "required key is missing") in reasons
    assert str(parsed.parse_errors[0]) == "tool_call[1].parameters: required key is missing"


def test_invalid_json_reports_position() -> None:
    body = '[{"name": "terminate" "parameters": {}}]'
    parsed = parse_completion(f"<tool_call>{body}</tool_call>")
    assert parsed.tool_calls == []
    (error,) = parsed.parse_errors
    assert error.position == body.index('"parameters"')  # the missing comma
    assert f"line 1 column {error.position + 1}" in error.message


@pytest.mark.parametrize(
    ("body", "fragment"),
    [("5", "got number"), ('"x"', "got string"), ("[1]", "expected an object, got number")],
)
def test_wrong_json_shapes_are_errors(body: str, fragment: str) -> None:
    parsed = parse_completion(f"<tool_call>{body}</tool_call>")
    assert parsed.tool_calls == []
    assert fragment in str(parsed.parse_errors[0])


def test_non_object_parameters_are_an_invalid_call_not_a_crash() -> None:
    parsed = parse_completion('<tool_call>[{"name": "find_product", "parameters": "red shoes"}]</tool_call>')
    (call,) = parsed.tool_calls  # upstream keeps the element; we flag it for an error observation
    assert call.parameters == {}
    assert call.unknown_keys == {"parameters": "red shoes"}
    assert "parameters is not a JSON object" in (call.invalid_reason or "")
    assert call.tool_call_id == tool_call_id("find_product", "red shoes")
    rendered = render_step_content(parsed.to_step(1), include_results=False)
    assert '"parameters":"red shoes"' in rendered


def test_first_match_wins_and_text_outside_tags_is_ignored() -> None:
    content = (
        "Sure! <think>first</think> noise <think>second</think>\n"
        '<tool_call>[{"name": "terminate", "parameters": {"status": "success"}}]</tool_call>'
        '<tool_call>[{"name": "terminate", "parameters": {"status": "failure"}}]</tool_call> trailing'
    )
    parsed = parse_completion(content)
    assert parsed.think == "first"
    assert [c.parameters["status"] for c in parsed.tool_calls] == ["success"]


def test_empty_think_block_quirk_matches_upstream_regex() -> None:
    # `.+?` needs one character, so an empty block swallows up to the next closing tag.
    assert parse_completion("<think></think>abc</think>").think == "</think>abc"


def test_code_fence_and_trailing_text_strict_vs_lenient() -> None:
    fenced = '<think>t</think><tool_call>```json\n[{"name": "terminate", "parameters": {}}]\n```</tool_call>'
    assert parse_completion(fenced).tool_calls == []
    lenient = parse_completion(fenced, lenient=True)
    assert [c.name for c in lenient.tool_calls] == ["terminate"]
    assert lenient.parse_errors == [] and lenient.repairs[0].fatal is False

    trailing = '<tool_call>[{"name": "terminate", "parameters": {}}] and then I stop</tool_call>'
    assert parse_completion(trailing).tool_calls == []
    fixed = parse_completion(trailing, lenient=True)
    assert [c.name for c in fixed.tool_calls] == ["terminate"]
    assert "ignored text" in fixed.repairs[0].message


def test_unopened_think_lenient_only() -> None:
    content = 'I should search.</think>\n<tool_call>[{"name": "terminate", "parameters": {}}]</tool_call>'
    assert parse_completion(content).think == ""
    assert parse_completion(content, lenient=True).think == "I should search."


def test_nested_tag_inside_json_string_is_cut_at_first_close() -> None:
    content = '<tool_call>[{"name": "find_product", "parameters": {"q": "a </tool_call> b"}}]</tool_call>'
    parsed = parse_completion(content)
    assert (
        parsed.tool_calls == []
        and parsed.tool_call_text == '[{"name": "find_product", "parameters": {"q": "a'
    )


# --- stop rules ---
def _call(name: str, **params: object) -> ToolCall:
    return ToolCall(name=name, parameters=dict(params), tool_call_id=tool_call_id(name, dict(params)))


def test_stop_rules() -> None:
    assert MAX_STEPS == 30
    assert should_stop(ParsedStep())
    assert not should_stop(ParsedStep(response="Here you go"))
    assert not should_stop(ParsedStep(think="hmm"))
    assert should_stop(
        ParsedStep(tool_calls=[_call("find_product", q="x"), _call("terminate", status="success")])
    )
    assert not should_stop(Step(index=1, tool_calls=[_call("recommend_product", product_ids="1")]))


# --- history and prompts ---
def _step_with_results() -> Step:
    search = _call("find_product", q="bag/pouch", page=1)
    search.result, search.has_result = [{"product_id": "7", "title": "Bag"}], True
    unknown = _call("python_execute", code="1")  # unknown tools run nothing and leave no obs entry
    return Step(index=1, think="look", tool_calls=[search, unknown], response="")


def test_history_message_layout() -> None:
    step = _step_with_results()
    empty = Step(index=2)
    final = Step(index=3, response="Done.")
    text = build_history_message("pink bag", [step, empty, final])
    ids = [c.tool_call_id for c in step.tool_calls]
    expected = (
        HISTORY_HEADER
        + "<user>pink bag</user>\n\n"
        + "<think>look</think>\n"
        + '<tool_call>[{"name":"find_product","parameters":{"q":"bag\\/pouch","page":1},'
        + f'"tool_call_id":"{ids[0]}"}},'
        + f'{{"name":"python_execute","parameters":{{"code":"1"}},"tool_call_id":"{ids[1]}"}}]</tool_call>\n'
        + f'<obs>[{{"tool_call_id":"{ids[0]}","results":[{{"product_id":"7","title":"Bag"}}]}}]</obs>'
        + "\n\n<response>Done.</response>"
    )
    assert text == expected
    assert build_history_message("q", []) == HISTORY_HEADER + "<user>q</user>"
    messages = build_prompt_messages("SYS", "q", [step])
    assert [m["role"] for m in messages] == ["system", "user"] and messages[0]["content"] == "SYS"


def test_system_prompt_numbers_tools_by_registry_position() -> None:
    tools = [
        {"name": "terminate", "description": "End.", "parameters": {"type": "object", "properties": {}}},
        ToolSchema(
            name="find_product", description="Search.", parameters={"type": "object", "required": ["q"]}
        ),
        {"type": "function", "function": {"name": "my_helper", "description": "Extra.", "parameters": {}}},
        {"name": "recommend_product", "description": "Recommend / pick.", "parameters": {}},
    ]
    prompt = build_system_prompt(tools, template="TOOLS:\n<|toolkit_description|>\nEND")
    assert prompt == (
        "TOOLS:\n"
        '1. Name: find_product\nDescription: Search.\nParameters: {"type":"object","required":["q"]}\n\n'
        "3. Name: recommend_product\nDescription: Recommend / pick.\nParameters: {}\n\n"
        '4. Name: terminate\nDescription: End.\nParameters: {"type":"object","properties":{}}\n\n'
        "6. Name: my_helper\nDescription: Extra.\nParameters: {}\nEND"
    )
    default = build_system_prompt(tools)
    assert "1. Name: find_product" in default and "<|toolkit_description|>" not in default


# --- re-rendering for the format reward ---
def test_render_step_content_oro_and_sb_flavours() -> None:
    step = _step_with_results()
    step.tool_calls[0].result = [{"description": "<think>sneaky</think> text"}]
    step.response = "ok"
    oro = render_step_content(step, include_results=True)
    sb = render_step_content(step, include_results=False)
    assert oro.splitlines()[0] == "<think>look</think>"
    assert '"result":[{"description":"<think>sneaky<\\/think> text"}]' in oro
    assert '"result"' not in sb and '"tool_call_id"' in sb
    assert sb.endswith("<response>ok</response>")
    # Only non-empty roles are rendered; obs never is.
    assert render_step_content(Step(index=1, response="r"), include_results=True) == "<response>r</response>"
    assert "<obs>" not in oro


def test_render_model_output_parses_back() -> None:
    step = Step(index=1, think="t", tool_calls=[_call("find_product", q="a/b", page=2)], response="r")
    text = render_model_output(step)
    assert '{"name": "find_product", "parameters": {"q": "a/b", "page": 2}}' in text
    again = parse_completion(text)
    assert [(c.name, c.parameters, c.tool_call_id) for c in again.tool_calls] == [
        (c.name, c.parameters, c.tool_call_id) for c in step.tool_calls
    ]
    assert (again.think, again.response) == ("t", "r")


# --- untrusted text (issue 52): linear parsing, nesting depth a parse issue --------------------------------
def test_unclosed_tags_parse_in_linear_time() -> None:
    from hang_guard import no_hang

    hostile = [
        "<tool_call>" * 70_000,  # hung the env server past SIGTERM
        "<think>" * 30_000 + "<response>" * 30_000 + "</think",
        "<tool_call>```" + " " * 200_000,  # the lenient code-fence pattern was quadratic on spaces
    ]
    with no_hang():
        for text in hostile:
            parsed = parse_completion(text, lenient=True)
            assert parsed.is_empty() and parsed.tool_calls == []
        fenced = "<tool_call>```json\n" + " " * 200_000 + "[]\n```</tool_call>"
        parsed = parse_completion(fenced, lenient=True)
        assert parsed.tool_call_text is not None and not parsed.parse_errors


@pytest.mark.parametrize("depth", [65, 3_000, 50_000])
def test_deeply_nested_tool_call_is_a_parse_issue(depth: int) -> None:
    nested = "[" * depth + "]" * depth
    call = f'[{{"name": "find_product", "parameters": {{"q": {nested}}}}}]'
    text = f"<think>t</think><tool_call>{call}</tool_call>"
    parsed = parse_completion(text)  # used to raise RecursionError at 3,000
    assert parsed.tool_calls == []
    expected = "tool_call: nested deeper than 64 levels (arrays and objects)"
    assert [str(e) for e in parsed.parse_errors] == [expected]


def test_deep_python_parameters_are_an_invalid_call() -> None:
    from shoparena.formats.tagged import make_tool_call

    deep: dict = {}
    for _ in range(200):
        deep = {"a": deep}
    call = make_tool_call("find_product", deep, "id")
    assert call.parameters == {} and "nested deeper than 64" in (call.invalid_reason or "")
    assert call.unknown_keys == {}
