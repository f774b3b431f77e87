"""The per-step teacher-grounded reward: ToolRL (distillation spec §6.4) on Hermes/native tool calls.

``R = R_format + R_correct`` with ``R_format ∈ {0, 1}`` and ``R_correct ∈ [−3, 3]`` (total in [−3, 4]).

Hermes adaptation (spec §6.4, design choice): a step is well formed when it is an optional single
``<think>…</think>`` block at the start (required when the teacher's step has one), followed by either one or
more well-formed ``<tool_call>{"name": str, "arguments": object}</tool_call>`` blocks (required when the
teacher called a tool) or, when the teacher answered without a call, non-empty text; tags are never
nested. Calls are normalised to a list of ``{name, parameters}`` before the correctness comparison.

Pure Python: no torch, so the reward is importable and testable anywhere.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from shoparena.formats.tool_blocks import strip_tool_call_blocks, tool_call_blocks

_TAGS = ("<think>", "</think>", "<tool_call>", "</tool_call>")
_THINK_RE = re.compile(r"^\s*<think>(.*?)</think>", re.DOTALL)

Call = dict[str, Any]  # {"name": str, "parameters": dict}


@dataclass(frozen=True, slots=True)
class StepReward:
    """One scored step: the two ToolRL terms and their sum."""

    format: float
    correct: float

    @property
    def total(self) -> float:
        return self.format + self.correct


def multiset_jaccard(a: Sequence[Any], b: Sequence[Any]) -> float:
    """J(a, b): 1 for equal lists, 0 when either is empty, else |a∩b| / (|a|+|b|−|a∩b|), multiset."""
    if list(a) == list(b):
        return 1.0
    if not a or not b:
        return 0.0
    common = sum((Counter(a) & Counter(b)).values())
    return common / (len(a) + len(b) - common)


def _tokens(text: str) -> set[str]:
    return set(text.replace(",", " ").split(" "))


def value_similarity(teacher: Any, predicted: Any) -> float:
    """Token Jaccard for two strings, 1/0 equality for two ints, 0 for anything else (floats included)."""
    if isinstance(teacher, str) and isinstance(predicted, str):
        a, b = _tokens(teacher), _tokens(predicted)
        return len(a & b) / len(a | b)
    if type(teacher) is int and type(predicted) is int:
        return 1.0 if teacher == predicted else 0.0
    return 0.0


def correctness(teacher: Sequence[Call], predicted: Sequence[Call] | None) -> float:
    """R_correct ∈ [−3, 3] of a predicted call list against the teacher's (spec §6.4 table).

    Args:
        teacher: The teacher's calls at this step, ``[{name, parameters}]`` (empty for a final answer).
        predicted: The policy's calls, or None when its tool call is missing or fails to parse.
    """
    if not teacher:
        return 0.0
    if not predicted:
        return -3.0
    if list(teacher) == list(predicted):
        return 3.0
    score = multiset_jaccard([c["name"] for c in teacher], [c["name"] for c in predicted])
    score_max = 1.0 + sum(1.0 + len(c["parameters"]) for c in teacher)
    used: set[int] = set()
    for call in teacher:
        best, best_idx = 0.0, None
        for idx, cand in enumerate(predicted):
            if idx in used or cand["name"] != call["name"]:
                continue
            params, cand_params = call["parameters"], cand["parameters"]
            total = multiset_jaccard(list(params), list(cand_params))
            total += sum(value_similarity(v, cand_params[k]) for k, v in params.items() if k in cand_params)
            if best_idx is None or total > best:
                best, best_idx = total, idx
        if best_idx is not None and best > 0:
            score += best
            used.add(best_idx)
    return 6.0 * score / score_max - 3.0


def normalise_call(raw: Any) -> Call | None:
    """``{name, arguments|parameters}`` (arguments a dict or a JSON string), or an OpenAI ``{function: ...}``
    tool call, as ``{name, parameters}``; None when it is not a well-formed call."""
    if not isinstance(raw, Mapping):
        return None
    body = raw.get("function") if isinstance(raw.get("function"), Mapping) else raw
    name = body.get("name")
    args = body.get("arguments", body.get("parameters", {}))
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except ValueError:
            return None
    if args is None:
        args = {}
    if not isinstance(name, str) or not name or not isinstance(args, dict):
        return None
    return {"name": name, "parameters": args}


def parse_hermes(text: str) -> tuple[list[Call] | None, bool, str]:
    """Split generated text into calls, think presence and answer text.

    Returns:
        ``(calls, has_think, answer)``: ``calls`` is the list of ``<tool_call>`` payloads normalised to
        ``{name, parameters}`` (``[]`` when there is no block, None when any block fails to parse).
    """
    has_think = False
    body = text
    match = _THINK_RE.match(body)
    if match:
        has_think = True
        body = body[match.end() :]
    calls: list[Call] = []
    blocks = tool_call_blocks(body)
    for block in blocks:
        if block.items is None:
            return None, has_think, ""
        for item in block.items:
            call = normalise_call(item)
            if call is None:
                return None, has_think, ""
            calls.append(call)
    answer = strip_tool_call_blocks(body, blocks).strip()
    return calls, has_think, answer


def _well_tagged(text: str) -> bool:
    """Each think tag at most once and only at the start; tool_call tags balanced and never nested."""
    if text.count("<think>") != text.count("</think>") or text.count("<think>") > 1:
        return False
    if "<think>" in text:
        match = _THINK_RE.match(text)
        if match is None or any(tag in match.group(1) for tag in _TAGS):
            return False
        text = text[match.end() :]
    depth = 0
    for tag in re.findall(r"</?tool_call>", text):
        depth += 1 if tag == "<tool_call>" else -1
        if depth not in (0, 1):
            return False
    return depth == 0 and "<think>" not in text and "</think>" not in text


def format_score(text: str, *, teacher_calls: bool, teacher_thinks: bool) -> float:
    """R_format ∈ {0, 1} of a generated step under the Hermes adaptation (module docstring)."""
    if not _well_tagged(text):
        return 0.0
    calls, has_think, answer = parse_hermes(text)
    if calls is None or (teacher_thinks and not has_think):
        return 0.0
    if teacher_calls:
        return 1.0 if calls else 0.0
    return 1.0 if (calls or answer) else 0.0


def completion_text(completion: Any) -> str:
    """The text of a TRL completion: a string, or a conversational list/dict of assistant messages (native
    ``tool_calls`` are rendered back as Hermes blocks so both formats score alike)."""
    if isinstance(completion, str):
        return completion
    messages = [completion] if isinstance(completion, Mapping) else list(completion or [])
    parts: list[str] = []
    for message in messages:
        reasoning = message.get("reasoning_content") or ""
        if reasoning:
            parts.append(f"<think>\n{reasoning.strip()}\n</think>\n\n")
        content = message.get("content") or ""
        parts.append(content if isinstance(content, str) else json.dumps(content))
        for raw in message.get("tool_calls") or []:
            call = normalise_call(raw)
            if call is not None:
                body = json.dumps({"name": call["name"], "arguments": call["parameters"]}, ensure_ascii=False)
                parts.append(f"\n<tool_call>\n{body}\n</tool_call>")
    return "".join(parts)


def teacher_calls_of(teacher_action: str | Iterable[Any]) -> list[Call]:
    """The ``teacher_action`` column (JSON list of ``{name, arguments}``) as ``[{name, parameters}]``."""
    raw = json.loads(teacher_action) if isinstance(teacher_action, str) else list(teacher_action)
    calls = [normalise_call(item) for item in raw]
    if any(c is None for c in calls):
        raise ValueError(f"teacher_action: malformed call in {teacher_action!r}")
    return [c for c in calls if c is not None]


def step_reward(
    completion: Any, teacher_action: str | Iterable[Any], *, teacher_thinks: bool = False
) -> StepReward:
    """Score one generated step against the teacher's next action (``teacher_action`` column)."""
    teacher = teacher_calls_of(teacher_action)
    text = completion_text(completion)
    fmt = format_score(text, teacher_calls=bool(teacher), teacher_thinks=teacher_thinks)
    calls, _, _ = parse_hermes(text) if _well_tagged(text) else (None, False, "")
    return StepReward(format=fmt, correct=correctness(teacher, calls))


def toolrl_reward(
    prompts: Sequence[Any], completions: Sequence[Any], teacher_action: Sequence[str], **kwargs: Any
) -> list[float]:
    """TRL reward function (``reward_funcs=[toolrl_reward]``): the ToolRL total of each completion.

    ``teacher_thinks`` (optional dataset column, bool) requires a think block when the teacher had one.
    """
    thinks = kwargs.get("teacher_thinks") or [False] * len(completions)
    return [
        step_reward(c, t, teacher_thinks=bool(th)).total
        for c, t, th in zip(completions, teacher_action, thinks, strict=True)
    ]
