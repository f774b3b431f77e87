"""Property: tagged ↔ native ↔ ORO ↔ SB conversions keep tool names, arguments, ids, results and order."""

from __future__ import annotations

import json
import re
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shoparena.formats.io import parse_trajectory_line
from shoparena.formats.native import chat_to_trajectory, trajectory_to_chat
from shoparena.formats.oro import dumps_oro_line
from shoparena.formats.sb import dumps_sb_line
from shoparena.formats.tagged import parse_completion, render_history_entry, render_model_output, tool_call_id
from shoparena.records.trajectory import EpisodeStatus, Step, ToolCall, Trajectory

# Text without '<' (tags in free text are out of scope) and stripped, as the tag parser strips roles.
_text = st.text(st.characters(blacklist_characters="<", blacklist_categories=("Cs",)), max_size=20).map(
    str.strip
)
_scalar = st.one_of(
    st.integers(-(10**12), 10**12),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
    st.none(),
    _text,
)
_json = st.recursive(
    _scalar,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
    max_leaves=8,
)
_ids = st.lists(st.from_regex(r"[0-9]{1,6}", fullmatch=True), min_size=1, max_size=3).map(",".join)
# Results: anything JSON-shaped except strings that themselves parse as JSON (the one documented lossy case).
_result = st.one_of(
    st.lists(
        st.dictionaries(st.sampled_from(["product_id", "title", "price"]), _scalar, max_size=3), max_size=3
    ),
    st.text(max_size=20).map(lambda s: "r:" + s),
    st.dictionaries(_text, _json, max_size=3),
)


@st.composite
def _call(draw: st.DrawFn) -> ToolCall:
    name = draw(
        st.sampled_from(["find_product", "view_product_information", "recommend_product", "terminate", "x"])
    )
    if name == "find_product":
        params: dict[str, Any] = {"q": draw(_text), "page": draw(st.integers(1, 5))}
        if draw(st.booleans()):
            params["price"] = draw(st.sampled_from(["0-100", "1000-", "above:10"]))
        if draw(st.booleans()):
            params = dict(reversed(list(params.items())))  # key order matters for the id
    elif name in {"view_product_information", "recommend_product"}:
        params = {"product_ids": draw(_ids)}
    elif name == "terminate":
        params = {"status": draw(st.sampled_from(["success", "failure"]))}
    else:
        params = draw(st.dictionaries(st.sampled_from(["a", "b", "c/d"]), _json, max_size=3))
    call = ToolCall(name=name, parameters=params, tool_call_id=tool_call_id(name, params))
    if draw(st.booleans()):
        call.result, call.has_result = draw(_result), True
    return call


@st.composite
def _trajectory(draw: st.DrawFn) -> Trajectory:
    steps = []
    for i in range(draw(st.integers(1, 4))):
        # Identical calls share an id, and SB's obs list cannot say which of them ran: keep ids unique here
        # (test_sb_rollout_round_trip_and_obs_attachment covers duplicates that all ran, as upstream has).
        calls = draw(st.lists(_call(), max_size=3, unique_by=lambda c: c.tool_call_id))
        step = Step(
            index=i + 1,
            think=draw(_text),
            tool_calls=calls,
            response=draw(_text),
            timestamp=1_700_000_000_000 + 1000 * i,
        )
        step.content = render_model_output(step)
        steps.append(step)
    return Trajectory(problem_id=draw(st.none() | st.uuids().map(str)), query=draw(_text), steps=steps)


def _calls(traj: Trajectory) -> list[list[tuple[Any, ...]]]:
    return [
        [
            (c.name, c.parameters, list(c.parameters), c.tool_call_id, c.has_result, c.result)
            for c in s.tool_calls
        ]
        for s in traj.steps
    ]


def _roles(traj: Trajectory) -> list[tuple[str, str]]:
    return [(s.think, s.response) for s in traj.steps]


_settings = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_settings
@given(_trajectory())
def test_oro_and_sb_lines_round_trip(traj: Trajectory) -> None:
    oro_line = dumps_oro_line(traj)
    oro = parse_trajectory_line(oro_line)
    assert oro.status is EpisodeStatus.SUCCESS and oro.problem_id == traj.problem_id
    assert _calls(oro) == _calls(traj) and _roles(oro) == _roles(traj)
    assert dumps_oro_line(oro) == oro_line  # read-then-write is byte-exact

    sb_line = dumps_sb_line(traj, system_prompt="S")
    sb = parse_trajectory_line(sb_line)
    assert _calls(sb) == _calls(traj) and _roles(sb) == _roles(traj)
    assert dumps_sb_line(sb) == sb_line
    assert [s.timestamp for s in sb.steps] == [s.timestamp for s in traj.steps]


@_settings
@given(_trajectory())
def test_native_round_trip(traj: Trajectory) -> None:
    tools = [
        {
            "type": "function",
            "name": "recommend_product",
            "description": "",
            "parameters": {"type": "object", "properties": {"product_ids": {"type": "array"}}},
        },
    ]
    chat = trajectory_to_chat(traj, tools)
    back = chat_to_trajectory(chat)
    assert back.query == traj.query
    assert _calls(back) == _calls(traj)
    # ...and on through an ORO line, then back to chat with the same ids.
    via_oro = parse_trajectory_line(dumps_oro_line(back))
    assert _calls(via_oro) == _calls(traj)
    ids = [c["id"] for m in trajectory_to_chat(via_oro, tools) for c in m.get("tool_calls", [])]
    assert ids == [c.tool_call_id for s in traj.steps for c in s.tool_calls]
    assert trajectory_to_chat(back, tools) == chat


@_settings
@given(_trajectory())
def test_tagged_round_trip(traj: Trajectory) -> None:
    for step in traj.steps:
        parsed = parse_completion(step.content)
        assert (parsed.think, parsed.response) == (step.think, step.response)
        assert [(c.name, c.parameters, c.tool_call_id) for c in parsed.tool_calls] == [
            (c.name, c.parameters, c.tool_call_id) for c in step.tool_calls
        ]
        assert parsed.parse_errors == []
        # The history entry carries the calls (with ids) as ujson text that decodes back to them.
        match = re.search("<tool_call>(.*?)</tool_call>", render_history_entry(step), re.DOTALL)
        listed = json.loads(match.group(1)) if match else []
        assert listed == [
            {"name": c.name, "parameters": c.parameters, "tool_call_id": c.tool_call_id}
            for c in step.tool_calls
        ]
