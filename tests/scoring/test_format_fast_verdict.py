"""The strict format check's fast verdict equals the verdict of the fully rendered step, step by step."""

from __future__ import annotations

import itertools
import math
import random
from typing import Any

from shoparena.formats._common import message_dict
from shoparena.formats._steps import step_from_dict, step_to_dict
from shoparena.formats.tagged import OUTPUT_ROLES, _render_roles, render_step_content
from shoparena.records.trajectory import Step, ToolCall, Trajectory
from shoparena.scoring.format_reward import StepChecks, _rendered_step_verdict, format_reward

#: Strings that move the verdict: every role's tags (open, close, escaped), slashes, quotes, non-ASCII.
_TEXTS = [
    "plain",
    "<think>",
    "</think>",
    "<tool_call>",
    "</tool_call>",
    "<response>",
    "</response>",
    "<\\/think>",
    "a/b",
    'q"uote\\',
    "café 🇵🇭",
    "null",
    "\u2028\x00\x1f",
]
#: Values a tool result may hold, NaN and infinities included (the stdlib reader accepts them).
_VALUES: list[Any] = [
    None,
    True,
    0,
    -7,
    2**63 - 1,
    2**70,
    1.5,
    1e300,
    5e-324,
    math.nan,
    math.inf,
    -math.inf,
    [],
    {},
    {1: "int key"},
    *_TEXTS,
]


def _value(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if depth < 3 and roll < 0.25:
        return {rng.choice(_TEXTS): _value(rng, depth + 1) for _ in range(rng.randrange(3))}
    if depth < 3 and roll < 0.4:
        return [_value(rng, depth + 1) for _ in range(rng.randrange(3))]
    return rng.choice(_VALUES)


def _steps() -> list[Step]:
    rng = random.Random(11)
    steps = []
    for i in range(3000):
        calls = [
            ToolCall(
                name=rng.choice(["find_product", "terminate", "<response>", "a/b"]),
                parameters={rng.choice(_TEXTS): _value(rng, 1)} if rng.random() < 0.8 else {},
                tool_call_id=rng.choice(["", "call_1"]),
                result=_value(rng),
                has_result=rng.random() < 0.9,
            )
            for _ in range(rng.randrange(0, 3))
        ]
        steps.append(
            Step(
                index=i + 1,
                think=rng.choice(["", "ok", "x <response> y", "</think>"]),
                tool_calls=calls,
                response=rng.choice(["", "", "done", "<think>"]),
            )
        )
    return steps


ROLE_SETS = [("think", "tool_call", "response"), ("tool_call",), ("think", "response")]


def test_verdicts_equal_the_full_renderings() -> None:
    seen: set[float | None] = set()
    for step, with_results, roles in itertools.product(_steps(), (True, False), ROLE_SETS):
        try:
            expected = format_reward(render_step_content(step, include_results=with_results), roles)
        except (TypeError, ValueError):
            continue  # the full rendering refuses it (no verdict to keep)
        fast = _rendered_step_verdict(step, with_results, roles)
        assert fast is None or fast == expected, (step, roles)
        seen.add(fast)
    assert seen == {None, 0.0, 1.0}  # every outcome occurs


def test_checks_shared_between_profiles_give_the_same_verdicts() -> None:
    """One StepChecks across both profiles (either first) and every role set: each verdict equals the one
    computed alone, a result's tag still fails the profile with results after the other one passed."""
    steps = _steps()
    alone = {
        (i, with_results, roles): _rendered_step_verdict(step, with_results, roles)
        for i, step in enumerate(steps)
        for with_results in (True, False)
        for roles in ROLE_SETS
    }
    for order in ((False, True), (True, False)):
        checks = StepChecks()
        for i, step in enumerate(steps):
            for roles in ROLE_SETS:
                for with_results in order:
                    shared = _rendered_step_verdict(step, with_results, roles, checks)
                    assert shared == alone[(i, with_results, roles)], (step, roles, with_results)
        assert len(checks) == sum(1 for s in steps if s.tool_calls) * len(ROLE_SETS)
    tagged = [k for k, v in alone.items() if k[1] and v == 0.0 and alone[(k[0], False, k[2])] == 1.0]
    assert tagged  # the case where the shared check alone would pass a failing step


def test_plain_results_take_the_fast_verdict() -> None:
    result = {"u": "a/b </think>", "t": "é"}
    step = Step(
        index=1,
        think="t",
        tool_calls=[ToolCall(name="find_product", parameters={"q": "x"}, result=result, has_result=True)],
    )
    assert _rendered_step_verdict(step, True, ROLE_SETS[0]) == 1.0
    assert format_reward(render_step_content(step, include_results=True)) == 1.0


def _reread(step: Step, rng: random.Random) -> Step:
    """``step`` written as an ORO step and read back, its message keys in a random order: what the corpus
    ingests (a step read from a file carries the message's key order)."""
    obj = step_to_dict(step, Trajectory(steps=[step]), mode="oro", position=0)
    message = obj["completion"]["message"]
    keys = list(message)
    rng.shuffle(keys)
    if rng.random() < 0.3:  # an empty role the writer would leave out
        message.setdefault(rng.choice(["think", "response"]), "")
        keys = list(message)
    obj["completion"]["message"] = {k: message[k] for k in keys}
    return step_from_dict(obj, position=0, path="dialogue[0]")


def test_steps_read_from_files_take_the_fast_path_with_the_same_text_and_verdict() -> None:
    rng = random.Random(5)
    fast_taken = ordered = 0
    for step in _steps()[:1500]:
        parsed = _reread(step, rng)
        assert "message" in parsed.key_order  # the case this test is about
        ordered += bool(parsed.key_order["message"])
        for with_results in (True, False):
            try:
                full = _render_roles(
                    message_dict(parsed, with_results=with_results, with_obs=False), OUTPUT_ROLES
                )
            except (TypeError, ValueError):
                continue
            if parsed.unknown_keys.get("message"):
                continue  # raw overrides render through message_dict, as before
            assert render_step_content(parsed, include_results=with_results) == full
            for roles in ROLE_SETS:
                fast = _rendered_step_verdict(parsed, with_results, roles)
                assert fast is None or fast == format_reward(full, roles), (parsed, roles)
                fast_taken += fast is not None
    assert fast_taken > 1000 and ordered > 1000
