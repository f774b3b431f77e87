"""What the environment refuses in a policy's output before running it, as the policy's own failure.

A policy's action is untrusted text. Two things in it must never reach the harness as they are:

* a **lone surrogate** (``"shoes \\ud83d"``: half of a UTF-16 pair, which models do emit through JSON
  escapes) is not valid Unicode: nothing can hash, store or send it. Every one in the step's text and its
  calls is replaced with U+FFFD, and a call whose name or arguments held one is answered with an error
  observation instead of being run (``invalid_reason``), exactly like any other malformed call: the
  episode goes on and is scored. It is never an infrastructure failure.
* **too many calls in one step**: calls past ``max_calls`` are dropped from the step (noted in its
  ``parse_errors``) so one action cannot cost unbounded time, memory and response size.
* **too long an action**: text over ``formats.scan.MAX_ACTION_CHARS`` (a completion's content, reasoning
  and native call arguments together) is not parsed at all (:func:`oversized_action`): the step holds the
  first characters and one parse issue, parses to nothing, and the episode ends as an empty step. Every
  door (env server, Gymnasium, verifiers, ``eval run``) goes through ``ShopEnv.step``, so all four classify
  it the same, as they do a tool call nested deeper than ``formats.scan.MAX_JSON_DEPTH`` (a parse issue).
"""

from __future__ import annotations

from typing import Any

from shoparena.formats.tagged import ParsedStep, ParseIssue
from shoparena.records.trajectory import Step
from shoparena.records.unicode import (
    REPLACEMENT,
    first_lone_surrogate,
    has_lone_surrogate,
    replace_lone_surrogates,
)


def action_chars(action: Any, reasoning_content: str | None = None) -> tuple[str, int]:
    """``(text, size)`` of an action: its text (content) and the characters it asks to parse (content,
    reasoning and native call arguments)."""
    reasoning = reasoning_content if isinstance(reasoning_content, str) else ""
    if isinstance(action, str):
        return action, len(action) + len(reasoning)
    if not isinstance(action, dict):
        return "", 0
    content = action.get("content") if isinstance(action.get("content"), str) else ""
    size = len(content) + len(reasoning)
    if isinstance(action.get("reasoning_content"), str):
        size += len(action["reasoning_content"])
    calls = action.get("tool_calls")
    for call in calls if isinstance(calls, list) else ():
        function = call.get("function") if isinstance(call, dict) else None
        arguments = function.get("arguments") if isinstance(function, dict) else None
        size += len(arguments) if isinstance(arguments, str) else 0
    return content, size


def oversized_action(action: Any, cap: int | None, reasoning_content: str | None = None) -> ParsedStep | None:
    """The step recorded for an action over ``cap`` characters (not parsed: its first ``cap`` characters
    and one parse issue), or None when it is within the cap."""
    if cap is None:
        return None
    text, size = action_chars(action, reasoning_content)
    if size <= cap:
        return None
    issue = ParseIssue("action", f"{size:,} characters, over the cap of {cap:,}; not parsed")
    return ParsedStep(content=text[:cap], parse_errors=[issue])


def refuse_invalid_output(step: Step, *, max_calls: int | None = None) -> None:
    """Make ``step`` (parsed from a policy's action, not yet run) safe to run and record, in place."""
    if max_calls is not None and len(step.tool_calls) > max_calls:
        step.parse_errors.append(
            f"tool_calls: {len(step.tool_calls)} calls in one step, over the cap of {max_calls}; "
            f"only the first {max_calls} were run"
        )
        del step.tool_calls[max_calls:]
    for name in ("think", "response", "content", "reasoning_content"):
        text = getattr(step, name)
        if has_lone_surrogate(text):
            setattr(step, name, replace_lone_surrogates(text))
            step.parse_errors.append(f"{name}: a lone surrogate (invalid Unicode), replaced with U+FFFD")
    step.parse_errors = [replace_lone_surrogates(e) for e in step.parse_errors]
    for call in step.tool_calls:
        hit = first_lone_surrogate(call.name, "name") or first_lone_surrogate(call.parameters, "parameters")
        if hit is None and first_lone_surrogate([call.native_arguments, call.unknown_keys]) is None:
            continue
        if hit is not None and call.invalid_reason is None:
            where, code = hit
            call.invalid_reason = f"{where}: a lone surrogate {code} is not valid Unicode"
        call.name = replace_lone_surrogates(call.name)
        call.parameters = replace_lone_surrogates(call.parameters)
        call.native_arguments = replace_lone_surrogates(call.native_arguments)
        call.unknown_keys = replace_lone_surrogates(call.unknown_keys)
        if call.invalid_reason is not None:
            call.invalid_reason = replace_lone_surrogates(call.invalid_reason)


__all__ = [
    "REPLACEMENT",
    "action_chars",
    "first_lone_surrogate",
    "oversized_action",
    "refuse_invalid_output",
    "replace_lone_surrogates",
]
