"""Format grammar (environment spec §8.6) and the rendering path."""

from __future__ import annotations

import pytest
from scoring_helpers import step

from shoparena.records.trajectory import ToolCall, Trajectory
from shoparena.scoring import (
    SHOPPINGBENCH,
    STRICT,
    format_reward,
    length_reward,
    render_step,
    trajectory_format,
)

CALL = '<tool_call>[{"name": "find_product", "parameters": {"q": "x"}}]</tool_call>'


@pytest.mark.parametrize(
    ("text", "roles", "expected"),
    [
        (f"<think>a</think>\n{CALL}", None, 1.0),
        ("<think>a</think>\n<response>hi</response>", None, 1.0),
        (CALL, None, 0.0),  # missing think
        (CALL, ["tool_call"], 1.0),  # no-think roles
        ("<think>a</think>", None, 0.0),  # neither tool_call nor response
        (f"<think>a<think>b</think>\n{CALL}", None, 0.0),  # two opens
        (f"</think>a<think>\n{CALL}", None, 0.0),  # close before open
        (f"<think>a\n{CALL}", None, 0.0),  # unclosed
        (f"<think>a {CALL}</think>", None, 0.0),  # tool_call nested inside think
        ('<think>a</think><tool_call>{"name": "x", "parameters": {}}</tool_call>', None, 0.0),  # not a list
        ('<think>a</think><tool_call>[{"name": "x"}]</tool_call>', None, 0.0),  # no parameters
        ('<think>a</think><tool_call>[{"name": 1, "parameters": {}}]</tool_call>', None, 0.0),
        ('<think>a</think><tool_call>[{"name": "x", "parameters": []}]</tool_call>', None, 0.0),
        ("<think>a</think><tool_call>[not json</tool_call>", None, 0.0),
        ("<think>a</think><tool_call>[]</tool_call>", None, 1.0),  # an empty list is a list
        ("<think>a <b> c</think><response>ok</response>", None, 1.0),  # other tags are not roles
    ],
)
def test_format_grammar(text: str, roles: list[str] | None, expected: float) -> None:
    assert (format_reward(text) if roles is None else format_reward(text, roles)) == expected


def _result_step(result: object):
    s = step(calls=[("find_product", {"q": "x"})])
    s.tool_calls[0] = ToolCall(name="find_product", parameters={"q": "x"}, result=result, has_result=True)
    return s


def test_tags_inside_results_break_strict_only() -> None:
    s = _result_step([{"description": "see <think> here"}])
    assert "<think>" in render_step(s, include_results=True)
    assert "<think>" not in render_step(s, include_results=False).split("</think>", 1)[1]
    traj = Trajectory(steps=[s])
    assert trajectory_format(traj, SHOPPINGBENCH) == 1.0
    assert trajectory_format(traj, STRICT) == 0.0


def test_closing_tags_in_results_survive_slash_escaping() -> None:
    s = _result_step([{"description": "a </think> b"}])
    text = render_step(s, include_results=True)
    assert "<\\/think>" in text
    assert trajectory_format(Trajectory(steps=[s]), STRICT) == 1.0


def test_length_reward() -> None:
    done = Trajectory(steps=[step(1), step(2, calls=[("terminate", {"status": "success"})])])
    assert length_reward(done) == 0.5
    assert length_reward(Trajectory(steps=[step(1, calls=[("find_product", {"q": "x"})])])) == 0.0
    assert length_reward(Trajectory()) == 0.0


def test_format_of_empty_trajectory_is_zero() -> None:
    assert trajectory_format(Trajectory(), STRICT) == 0.0


def test_rendering_path_uses_formats_module() -> None:
    tagged = pytest.importorskip("shoparena.formats.tagged")
    s = step(calls=[("find_product", {"q": "a/b"})])
    assert render_step(s, include_results=False) == tagged.render_step_content(s, include_results=False)
    assert "a\\/b" in render_step(s, include_results=False)
