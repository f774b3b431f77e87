"""The report's example conversations come from ``formats.native.trajectory_to_chat`` (the one trajectory →
chat), read for a person: reasoning as the assistant's text, the answer after the tool results, tool turns
labelled with their call's name, no system turn."""

from __future__ import annotations

from shoparena.formats.native import chat_to_trajectory
from shoparena.formats.tagged import tool_call_id
from shoparena.records.trajectory import Step, ToolCall, Trajectory
from shoparena.report.data import trajectory_messages
from shoparena.report.html import _message_html


def _call(name: str, parameters: dict, result: object) -> ToolCall:
    return ToolCall(
        name=name,
        parameters=parameters,
        tool_call_id=tool_call_id(name, parameters),
        result=result,
        has_result=True,
    )


def test_a_tagged_step_shows_reasoning_then_results_then_its_answer() -> None:
    traj = Trajectory(
        query="red mug",
        system_prompt="You are a shopping agent.",
        steps=[
            Step(
                index=1, think="search first", tool_calls=[_call("find_product", {"q": "mug"}, [{"id": "7"}])]
            ),
            Step(
                index=2,
                think="P7 fits",
                tool_calls=[_call("recommend_product", {"product_ids": "7"}, "ok")],
                response="I recommend 7.",
            ),
        ],
    )
    messages = trajectory_messages(traj)
    assert [(m["role"], m.get("name"), m["content"]) for m in messages] == [
        ("user", None, "red mug"),
        ("assistant", None, "search first"),
        ("tool", "find_product", '[{"id": "7"}]'),
        ("assistant", None, "P7 fits"),
        ("tool", "recommend_product", "ok"),
        ("assistant", None, "I recommend 7."),
    ]
    html = "".join(_message_html(m) for m in messages)
    assert "→ find_product({&quot;q&quot;: &quot;mug&quot;})" in html
    assert "tool · recommend_product" in html and "shopping agent" not in html


def test_a_native_step_without_reasoning_shows_its_content_once_and_the_calls_as_written() -> None:
    traj = chat_to_trajectory(
        [
            {"role": "user", "content": "tea"},
            {
                "role": "assistant",
                "content": "looking",
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "find_product", "arguments": '{"q": "tea"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "[]"},
            {"role": "assistant", "content": "nothing found"},
        ]
    )
    messages = trajectory_messages(traj)
    assert [(m["role"], m.get("name"), m["content"]) for m in messages] == [
        ("user", None, "tea"),
        ("assistant", None, "looking"),
        ("tool", "find_product", "[]"),
        ("assistant", None, "nothing found"),
    ]
    # the arguments the model wrote, not the adapter's normalised ones (which add page=1)
    assert messages[1]["tool_calls"][0]["function"]["arguments"] == '{"q": "tea"}'
