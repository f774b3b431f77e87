"""Format and length rewards (environment spec §8.6).

This is the *reward* for the tagged-output grammar; reading and writing trajectory formats (ORO envelopes,
ShoppingBench rollouts, native chat) is :mod:`shoparena.formats`, one layer below.

``format_reward`` checks the tagged-output grammar of one step's text. The text is the step re-rendered from
its parsed roles (ShoppingBench serialisation, via
:func:`shoparena.formats.tagged.render_step_content`); in the strict profile the rendered tool-call list
includes each call's result, so tags inside tool results count.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import orjson

from shoparena.formats._common import tool_call_dict
from shoparena.formats.tagged import render_step_content
from shoparena.scoring.profiles import OUTPUT_ROLES, ScoringProfile

if TYPE_CHECKING:
    from shoparena.records.trajectory import Step, Trajectory


_TAGS: dict[str, tuple[str, str]] = {role: (f"<{role}>", f"</{role}>") for role in OUTPUT_ROLES}


def _valid_call_list(body: str) -> bool:
    try:
        calls = orjson.loads(body)
    except orjson.JSONDecodeError:
        return False
    if not isinstance(calls, list):
        return False
    return all(
        isinstance(call, dict)
        and isinstance(call.get("name"), str)
        and isinstance(call.get("parameters"), dict)
        for call in calls
    )


def format_reward(text: str, roles: Sequence[str] = OUTPUT_ROLES) -> float:
    """1.0 iff ``text`` follows the tagged grammar for ``roles``, else 0.0.

    Rules: think present (when in ``roles``); tool_call or response present (a role is present when its
    open or close tag occurs); each present role has exactly one open and one close tag, open first; the
    tool_call body is a JSON list of objects with a string ``name`` and an object ``parameters``; no
    role's tag lies strictly inside another present role's span.

    >>> format_reward('<think>a</think>\\n<tool_call>[{"name": "terminate", "parameters": {}}]</tool_call>')
    1.0
    >>> format_reward('<tool_call>[]</tool_call>')
    0.0
    >>> format_reward('<tool_call>[]</tool_call>', ["tool_call"])
    1.0
    """
    # A tag cannot overlap itself ("<" only starts it), so str.count equals the number of occurrences; a
    # present role needs exactly one of each tag, which is checked before any position is looked up.
    spans: dict[str, tuple[int, int]] = {}
    for role in roles:
        open_tag, close_tag = _TAGS.get(role) or (f"<{role}>", f"</{role}>")
        n_open, n_close = text.count(open_tag), text.count(close_tag)
        if not n_open and not n_close:
            continue
        if n_open != 1 or n_close != 1:
            return 0.0
        open_at, close_at = text.find(open_tag), text.find(close_tag)
        if open_at >= close_at:
            return 0.0
        spans[role] = (open_at, close_at)
    if "think" in roles and "think" not in spans:
        return 0.0
    if "tool_call" not in spans and "response" not in spans:
        return 0.0
    if "tool_call" in spans:
        open_at, close_at = spans["tool_call"]
        if not _valid_call_list(text[open_at + len("<tool_call>") : close_at]):
            return 0.0
    if len(spans) > 1:
        for role, (open_i, close_i) in spans.items():
            for other, (open_j, close_j) in spans.items():
                if other != role and (open_i < open_j < close_i or open_i < close_j < close_i):
                    return 0.0
    return 1.0


def render_step(step: Step, *, include_results: bool) -> str:
    """The step re-rendered from its parsed roles (what the format grammar is checked on)."""
    return render_step_content(step, include_results=include_results)


#: orjson refuses what ``json`` would write differently or not at all (subclasses, dataclasses, dates).
_DUMPS_OPTIONS = (
    orjson.OPT_PASSTHROUGH_SUBCLASS | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME
)
_OPEN_TAGS: dict[str, bytes] = {role: f"<{role}>".encode() for role in OUTPUT_ROLES}


class StepChecks(dict[tuple[int, tuple[str, ...]], float | None]):
    """The fast verdicts of steps without their results, by step (``id``) and roles, shared by the profiles
    that score one trajectory (:meth:`shoparena.scoring.bench.ScoringBench.score`): the strict check adds only
    its results to what the other profile checked. Live no longer than the steps (an ``id`` is reused only
    after its object is gone)."""


def _rendered_step_verdict(
    step: Step, include_results: bool, roles: Sequence[str], checks: StepChecks | None = None
) -> float | None:
    """``format_reward(render_step(step, ...), roles)`` without writing and re-parsing the call list.

    In the rendered text the call list (every tool result with it: the bulk of a step) is ujson's
    compact ASCII JSON with ``/`` escaped, so no closing tag occurs inside it, and an opening tag of a
    checked role inside it fails the check (that tag is then doubled, or open without a close). The
    verdict is therefore 0 when a call string holds such a tag; else it is the verdict of the text with
    the list replaced by ``[]``, and 0 if the list is not one of ``{name: str, parameters: object}``.
    The tags are looked up in orjson's dumps: orjson escapes no tag character and writes every string the
    list holds, and a tag (no quote in it) lies inside one string. The results are their own dumps: the
    list with them holds the strings of the list without them and theirs, so the verdict with results is
    the one without (``checks`` may hold it) unless a result holds a tag. ``None`` (render and check the
    full text) where the encoders may differ: raw message overrides, a ``null`` in a dump (orjson writes
    NaN and infinities as ``null``, ``json`` as ``NaN``, which fails the check), whatever orjson refuses.
    ``tests/scoring`` compares both verdicts.
    """
    if step.unknown_keys.get("message") or not step.tool_calls:  # a key order alone changes no role text
        return None
    results = _results_verdict(step, roles) if include_results else 1.0
    if results is None:
        return None
    if checks is None:
        calls = _calls_verdict(step, roles)
    else:
        key = (id(step), tuple(roles))
        if key not in checks:
            checks[key] = _calls_verdict(step, roles)
        calls = checks[key]
    return None if calls is None else min(calls, results)


def _tags_verdict(value: object, roles: Sequence[str]) -> float | None:
    """0 when orjson's dump of ``value`` holds an opening tag of ``roles``, else 1; None where the dump may
    not be ``json``'s (a ``null``: NaN and infinities; a value orjson refuses)."""
    try:
        body = orjson.dumps(value, option=_DUMPS_OPTIONS)
    except TypeError:
        return None
    if b"null" in body:
        return None
    return 0.0 if any((_OPEN_TAGS.get(role) or f"<{role}>".encode()) in body for role in roles) else 1.0


def _results_verdict(step: Step, roles: Sequence[str]) -> float | None:
    """:func:`_tags_verdict` of the step's results together: None if any is None, else the least."""
    verdicts = [_tags_verdict(call.result, roles) for call in step.tool_calls if call.has_result]
    return None if None in verdicts else min(verdicts, default=1.0)


def _calls_verdict(step: Step, roles: Sequence[str]) -> float | None:
    """The fast verdict of ``step`` rendered without its results (see :func:`_rendered_step_verdict`)."""
    calls = [tool_call_dict(c, with_result=False) for c in step.tool_calls]
    tags = _tags_verdict(calls, roles)
    if tags != 1.0:
        return tags
    if "tool_call" in roles and not all(
        isinstance(c.get("name"), str) and isinstance(c.get("parameters"), dict) for c in calls
    ):
        return 0.0
    parts = [f"<think>{step.think}</think>"] if step.think else []
    parts.append("<tool_call>[]</tool_call>")
    if step.response:
        parts.append(f"<response>{step.response}</response>")
    return format_reward("\n".join(parts), roles)


def has_valid_timestamp(step: Step) -> bool:
    """ORO: ``extra_info.timestamp`` must be a positive int or float."""
    ts = step.timestamp
    return isinstance(ts, int | float) and ts > 0


def step_format(
    step: Step,
    scoring_profile: ScoringProfile,
    *,
    roles: Sequence[str] = OUTPUT_ROLES,
    raw_content: bool = False,
    checks: StepChecks | None = None,
) -> float:
    """Format score of one step under a profile (strict: ×penalty without a valid timestamp).

    Args:
        step: The step.
        scoring_profile: The scoring profile.
        roles: Roles the grammar checks (no-think runs: ``["tool_call"]``).
        raw_content: Check the raw completion content instead of the re-rendered roles (SB web evaluation).
        checks: Checks shared with the other profile scoring the same trajectory.
    """
    score = (
        None
        if raw_content
        else _rendered_step_verdict(step, scoring_profile.format_includes_results, roles, checks)
    )
    if score is None:
        text = (
            step.content
            if raw_content
            else render_step(step, include_results=scoring_profile.format_includes_results)
        )
        score = format_reward(text, roles)
    if scoring_profile.timestamp_penalty != 1.0 and not has_valid_timestamp(step):
        score *= scoring_profile.timestamp_penalty
    return score


def trajectory_format(
    trajectory: Trajectory,
    scoring_profile: ScoringProfile,
    *,
    roles: Sequence[str] = OUTPUT_ROLES,
    raw_content: bool = False,
    checks: StepChecks | None = None,
) -> float:
    """Mean step format score; 0 for a trajectory without steps (``checks``: see :func:`step_format`)."""
    if not trajectory.steps:
        return 0.0
    total = sum(
        step_format(s, scoring_profile, roles=roles, raw_content=raw_content, checks=checks)
        for s in trajectory.steps
    )
    return total / len(trajectory.steps)


def length_reward(trajectory: Trajectory) -> float:
    """1/len(steps) when the last step calls ``terminate``, else 0 (reported, never used for success)."""
    if not trajectory.steps:
        return 0.0
    if any(call.name == "terminate" for call in trajectory.steps[-1].tool_calls):
        return 1.0 / len(trajectory.steps)
    return 0.0
