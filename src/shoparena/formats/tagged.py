"""ShoppingBench tagged message format (environment spec §5.1): prompts, tag parser, ids and stop rules.

Every step the model sees two messages: a system prompt listing the tools and a user message holding the whole
dialogue history. It answers with ``<think>``, ``<tool_call>`` (a JSON list of ``{name, parameters}``) and/or
``<response>`` blocks. The parser here reproduces the upstream parser's results exactly (first non-greedy tag
match, ``reasoning_content`` fallback, all-or-nothing tool-call list) and also reports *why* a tool-call list
was dropped. An opt-in ``lenient`` mode accepts code fences, trailing text and a missing ``<think>``
opening tag, recording each repair.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from shoparena.formats._common import (
    message_dict,
    obs_entries,
    oro_dumps,
    tool_call_dict,
    type_name,
    ujson_dumps,
)
from shoparena.formats.scan import (
    MAX_JSON_DEPTH,
    JsonDepthError,
    first_tag_body,
    json_text_depth,
    value_depth,
)
from shoparena.records.message import ToolSchema
from shoparena.records.tools import REGISTRY_ORDER
from shoparena.records.trajectory import Step, ToolCall

#: Roles the model may emit, in rendering order.
OUTPUT_ROLES: tuple[str, ...] = ("think", "tool_call", "response")
#: Roles of one history entry, in rendering order.
HISTORY_ROLES: tuple[str, ...] = ("think", "tool_call", "obs", "response")
#: Step cap of the upstream rollout loop.
MAX_STEPS = 30
#: First line of the history message.
HISTORY_HEADER = "# Dialogue Records History\n"
#: Placeholder in :data:`DEFAULT_SYSTEM_TEMPLATE` replaced by the numbered tool blocks.
TOOLS_PLACEHOLDER = "<|toolkit_description|>"

DEFAULT_SYSTEM_TEMPLATE = """# Role
You are a shopping assistant working in turns. In each turn you may think, call tools and reply to the user.

# Available Tools
<|toolkit_description|>

# Tool Rules
1. Every tool call gets a "tool_call_id"; its results appear under the same id inside `<obs>...</obs>`.
2. Check tool results against what the user asked for and verify details with further calls when unsure.
3. Search with `find_product`. If the results miss the mark, rephrase `q`, move to another `page`, or \
restrict the search to one shop with `shop_id`.
4. Use `view_product_information` to check attributes such as colour, size, material, model or pattern.
5. Once you have found products that satisfy the request, pass their ids to `recommend_product`.
6. Call `terminate` when the request is satisfied or no further progress is possible.
7. Work step by step and do not ask the user for more information.

# Output Format
1. Always write `<think>...</think>` followed by `<tool_call>...</tool_call>`, `<response>...</response>` or \
both. Write nothing else.
2. `<tool_call>` holds a JSON array; each element has a "name" string and a "parameters" object (use {} when \
a tool takes no parameters).
3. Example:
<think>What I know so far and what to do next</think>
<tool_call>[{"name": "find_product", "parameters": {"q": "red running shoes", "page": 1}}]</tool_call>
<response>A short message for the user</response>"""

_FENCE_HEAD = re.compile(r"[A-Za-z0-9_-]*[ \t]*\n?")


def _unfence(text: str) -> str | None:
    """The body of a text that is one markdown code fence, or None: what
    ``^```[A-Za-z0-9_-]*[ \t]*\n?(.*?)\n?[ \t]*```$`` captures, in linear time (that pattern is quadratic on
    a long run of spaces)."""
    if len(text) < 6 or not text.startswith("```") or not text.endswith("```"):
        return None
    head = text[3:]
    header = _FENCE_HEAD.match(head)
    body = head[header.end() if header else 0 : -3].rstrip(" \t")
    return body[:-1] if body.endswith("\n") else body


def tool_call_id(name: Any, parameters: Any, length: int = 8) -> str:
    """Upstream tool-call id: URL-safe base64 of MD5(``f"{name}\\n{parameters}"``), padding dropped, 8 chars.

    For a dict, ``str`` equals the Python ``repr`` in the dict's own key order, so key order matters.

    Args:
        name: Tool name.
        parameters: Parsed parameters (normally a dict; other values hash their ``str`` as upstream does).
        length: Characters kept.

    Raises:
        UnicodeEncodeError: when the text holds a lone surrogate (upstream fails the same way).

    >>> tool_call_id("terminate", {"status": "success"})
    'NR0gqQng'
    """
    digest = hashlib.md5(f"{name}\n{parameters}".encode(), usedforsecurity=False).digest()
    return base64.urlsafe_b64encode(digest).decode("ascii").replace("=", "")[:length]


@dataclass(slots=True)
class ParseIssue:
    """One problem found while parsing a completion.

    Attributes:
        role: The role block concerned (``tool_call``, ``think``).
        message: What is wrong.
        element: Index of the tool-call element (or native block), when the issue concerns one.
        key: The missing or mistyped key, when one.
        position: Character offset inside the block body (JSON errors), when known.
        fatal: False for repairs made in lenient mode (the value was still used).
    """

    role: str
    message: str
    element: int | None = None
    key: str | None = None
    position: int | None = None
    fatal: bool = True

    def __str__(self) -> str:
        where = self.role + (f"[{self.element}]" if self.element is not None else "")
        if self.key is not None:
            where += f".{self.key}"
        return f"{where}: {self.message}"


@dataclass(slots=True)
class ParsedStep:
    """The parsed roles of one completion plus the diagnostics the upstream parser discards.

    Attributes:
        think: Think text (falls back to ``reasoning_content``).
        tool_calls: Calls with upstream ids; empty when the block was malformed in any element.
        response: Response text.
        content: Raw completion content (``None`` coerced to ``""``).
        reasoning_content: Raw reasoning channel.
        tool_call_text: The stripped body of the first ``<tool_call>`` block, None when there was none.
        parse_errors: Fatal problems (each one emptied the tool-call list).
        repairs: Lenient-mode fixes that let a value through.
    """

    think: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    response: str = ""
    content: str = ""
    reasoning_content: str = ""
    tool_call_text: str | None = None
    parse_errors: list[ParseIssue] = field(default_factory=list)
    repairs: list[ParseIssue] = field(default_factory=list)

    def is_empty(self) -> bool:
        """True when nothing was parsed (no think, no tool call, no response): the loop stops."""
        return not self.think and not self.tool_calls and not self.response

    def to_step(
        self, index: int, *, timestamp: int | float | None = None, extra_info: dict[str, Any] | None = None
    ) -> Step:
        """A :class:`Step` holding these roles (tool calls not yet run)."""
        return Step(
            index=index,
            think=self.think,
            tool_calls=[c.model_copy(deep=True) for c in self.tool_calls],
            response=self.response,
            content=self.content,
            reasoning_content=self.reasoning_content,
            timestamp=timestamp,
            extra_info=dict(extra_info or {}),
            content_format="tagged",
            parse_errors=[str(e) for e in self.parse_errors],
        )


def _json_error(role: str, exc: json.JSONDecodeError, element: int | None = None) -> ParseIssue:
    return ParseIssue(
        role,
        f"invalid JSON at line {exc.lineno} column {exc.colno} (char {exc.pos}): {exc.msg}",
        element=element,
        position=exc.pos,
    )


def decode_json_block(
    body: str, role: str, *, lenient: bool, element: int | None = None
) -> tuple[Any, list[ParseIssue], ParseIssue | None]:
    """Decode one tag body as JSON.

    Returns:
        ``(value, repairs, error)``; ``error`` is None on success.
    """
    repairs: list[ParseIssue] = []
    text = body
    if lenient:
        fenced = _unfence(text.strip())
        if fenced is not None:
            text = fenced.strip()
            repairs.append(ParseIssue(role, "removed a markdown code fence", element=element, fatal=False))
    if json_text_depth(text) > MAX_JSON_DEPTH:  # json.loads would raise RecursionError a few thousand deep
        return None, repairs, ParseIssue(role, str(JsonDepthError(MAX_JSON_DEPTH)), element=element)
    try:
        return json.loads(text), repairs, None
    except json.JSONDecodeError as exc:
        if not lenient:
            return None, repairs, _json_error(role, exc, element)
        try:
            value, end = json.JSONDecoder().raw_decode(text.lstrip())
        except json.JSONDecodeError:
            return None, repairs, _json_error(role, exc, element)
        offset = len(text) - len(text.lstrip())
        repairs.append(
            ParseIssue(
                role, "ignored text after the JSON value", element=element, position=offset + end, fatal=False
            )
        )
        return value, repairs, None


def _calls_from_json(data: Any, role: str) -> tuple[list[ToolCall], list[ParseIssue]]:
    """Upstream element rules: a single object is wrapped; every element needs ``name`` and ``parameters``."""
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list):
        return [], [ParseIssue(role, f"expected a JSON list or object, got {type_name(data)}")]
    calls: list[ToolCall] = []
    errors: list[ParseIssue] = []
    for i, element in enumerate(data):
        if not isinstance(element, dict):
            errors.append(ParseIssue(role, f"expected an object, got {type_name(element)}", element=i))
            continue
        missing = [k for k in ("name", "parameters") if k not in element]
        for key in missing:
            errors.append(ParseIssue(role, "required key is missing", element=i, key=key))
        if missing:
            continue
        name, parameters = element["name"], element["parameters"]
        try:
            call_id = tool_call_id(name, parameters)
        except UnicodeEncodeError as exc:
            errors.append(ParseIssue(role, f"cannot hash the call: {exc.reason}", element=i))
            continue
        calls.append(make_tool_call(name, parameters, call_id))
    return calls, errors


def make_tool_call(name: Any, parameters: Any, call_id: str, **extra: Any) -> ToolCall:
    """A :class:`ToolCall` from possibly malformed values: wrong types are kept raw and explained."""
    unknown: dict[str, Any] = {}
    reasons: list[str] = []
    if value_depth(parameters) > MAX_JSON_DEPTH:  # not kept: nothing downstream could store or render it
        reasons.append(f"parameters is {JsonDepthError(MAX_JSON_DEPTH)}")
        parameters = {}
    if not isinstance(name, str):
        unknown["name"] = name
        reasons.append(f"name is not a string ({type_name(name)})")
        name = ""
    if not isinstance(parameters, dict):
        unknown["parameters"] = parameters
        reasons.append(f"parameters is not a JSON object ({type_name(parameters)})")
        parameters = {}
    return ToolCall(
        name=name,
        parameters=parameters,
        tool_call_id=call_id,
        invalid_reason="; ".join(reasons) or None,
        unknown_keys=unknown,
        **extra,
    )


def _strip_think_tags(text: str) -> str:
    return text.replace("<think>", "").replace("</think>", "").strip()


def parse_completion(
    content: str | None, reasoning_content: str | None = None, *, lenient: bool = False
) -> ParsedStep:
    """Parse one tagged completion exactly as ShoppingBench does, and say why calls were dropped.

    Args:
        content: Model output (``None`` is treated as ``""``).
        reasoning_content: The API's separate reasoning channel; used when no ``<think>`` block has text.
        lenient: Also accept fenced JSON, text after the JSON value, and a ``</think>`` with no opening tag
            (the opening tag often sits in the prompt). Off by default: upstream rejects all three.

    Returns:
        The parsed roles. ``tool_calls`` is empty when any element was malformed; ``parse_errors`` says which
        element, which key or which JSON position.
    """
    text = content if isinstance(content, str) else ""
    reasoning = reasoning_content if isinstance(reasoning_content, str) else ""
    out = ParsedStep(content=text, reasoning_content=reasoning)
    found: dict[str, str] = {}
    for role in OUTPUT_ROLES:  # re.search(f"<{role}>(.+?)</{role}>"), in linear time
        body = first_tag_body(text, role)
        if body is not None:
            found[role] = body.strip()
    think = found.get("think", "")
    if not think and lenient and "</think>" in text and "<think>" not in text.split("</think>", 1)[0]:
        think = text.split("</think>", 1)[0].strip()
        if think:
            out.repairs.append(ParseIssue("think", "used text before an unopened </think>", fatal=False))
    if not think and reasoning:
        think = _strip_think_tags(reasoning)
    out.think = think
    out.response = found.get("response", "")
    if "tool_call" in found:
        body = found["tool_call"]
        out.tool_call_text = body
        data, repairs, error = decode_json_block(body, "tool_call", lenient=lenient)
        out.repairs.extend(repairs)
        if error is not None:
            out.parse_errors.append(error)
        else:
            calls, errors = _calls_from_json(data, "tool_call")
            out.parse_errors.extend(errors)
            # Upstream drops the whole list when any element is malformed.
            out.tool_calls = [] if errors else calls
    return out


def should_stop(step: Step | ParsedStep) -> bool:
    """Upstream stop rule: stop after a step that parsed to nothing or that calls ``terminate``.

    A response-only step does not stop the loop; the caller also stops at :data:`MAX_STEPS`.
    """
    empty = not step.think and not step.tool_calls and not step.response
    return empty or any(c.name == "terminate" for c in step.tool_calls)


def _role_text(value: Any) -> str:
    return value if isinstance(value, str) else ujson_dumps(value)


def _render_roles(message: dict[str, Any], roles: Sequence[str]) -> str:
    return "\n".join(f"<{r}>{_role_text(message[r])}</{r}>" for r in roles if message.get(r))


def render_step_content(step: Step, *, include_results: bool) -> str:
    """Re-render a step's ``think``, ``tool_call`` and ``response`` roles in the upstream serialisation.

    This is the text the format reward checks. With ``include_results=True`` it is ORO's rendering (each
    tool-call object carries its ``result``); with False it is ShoppingBench's model message (``name``,
    ``parameters``, ``tool_call_id``). Lists are written with :func:`ujson_dumps`, so ``</tag>`` inside a tool
    result appears as ``<\\/tag>``; an opening tag inside a result survives and fails the check, as upstream.
    """
    if not step.unknown_keys.get("message"):
        # Fast path (no raw message overrides): the roles are the typed strings and the call list, so this
        # writes what _render_roles(message_dict(...)) writes, without building the message. A recorded key
        # order (every step read from a file has one) changes no text: roles render in OUTPUT_ROLES order.
        parts = [f"<think>{step.think}</think>"] if step.think else []
        if step.tool_calls:
            calls = [tool_call_dict(c, with_result=include_results) for c in step.tool_calls]
            parts.append(f"<tool_call>{ujson_dumps(calls)}</tool_call>")
        if step.response:
            parts.append(f"<response>{step.response}</response>")
        return "\n".join(parts)
    message = message_dict(step, with_results=include_results, with_obs=False)
    return _render_roles(message, OUTPUT_ROLES)


def render_history_entry(step: Step) -> str:
    """One step's history entry: roles think, tool_call (with ids), obs and response; "" when all empty."""
    message = message_dict(step, with_results=False, with_obs=False)
    obs = step.unknown_keys.get("message", {}).get("obs", obs_entries(step))
    if obs:
        message["obs"] = obs
    return _render_roles(message, HISTORY_ROLES)


def build_history_message(query: str, steps: Sequence[Step]) -> str:
    """The user message of the next step: the query and every earlier step, never truncated."""
    entries = [f"<user>{query}</user>"] if query else []
    for step in steps:
        entry = render_history_entry(step)
        if entry:
            entries.append(entry)
    return HISTORY_HEADER + "\n\n".join(entries)


def tool_block(position: int, tool: ToolSchema) -> str:
    """One numbered tool description block of the system prompt."""
    return (
        f"{position}. Name: {tool.name}\nDescription: {tool.description}\n"
        f"Parameters: {ujson_dumps(tool.parameters)}"
    )


def build_system_prompt(
    tools: Iterable[Any],
    *,
    registry_order: Sequence[str] = REGISTRY_ORDER,
    template: str = DEFAULT_SYSTEM_TEMPLATE,
) -> str:
    """System prompt listing ``tools`` as numbered blocks joined by blank lines.

    Numbers are 1-based positions in ``registry_order`` (so an excluded tool leaves a gap); tools outside the
    registry follow, numbered after it in the order given.

    Args:
        tools: :class:`ToolSchema` records, flat or OpenAI-nested dicts, or objects with ``name``,
            ``description`` and ``parameters``.
        registry_order: The full registry used for numbering.
        template: Prompt text containing :data:`TOOLS_PLACEHOLDER`.
    """
    schemas = [ToolSchema.from_any(t) for t in tools]
    position = {name: i + 1 for i, name in enumerate(registry_order)}
    listed = sorted((s for s in schemas if s.name in position), key=lambda s: position[s.name])
    extra = [s for s in schemas if s.name not in position]
    blocks = [tool_block(position[s.name], s) for s in listed]
    blocks += [tool_block(len(registry_order) + i + 1, s) for i, s in enumerate(extra)]
    return template.replace(TOOLS_PLACEHOLDER, "\n\n".join(blocks))


def build_prompt_messages(system_prompt: str, query: str, steps: Sequence[Step]) -> list[dict[str, str]]:
    """The two messages sent for the next step (``[system, user]``), as ShoppingBench records them."""
    return [
        {"role": "system", "content": system_prompt},
        {"role": "user", "content": build_history_message(query, steps)},
    ]


def render_model_output(step: Step) -> str:
    """Tagged completion text for a step, as ORO's reference agent writes ``completion.content``.

    Tool calls carry only ``name`` and ``parameters``, written with ``json.dumps`` defaults (spaced).
    """
    parts = []
    if step.think:
        parts.append(f"<think>{step.think}</think>")
    if step.tool_calls:
        calls = [
            {
                "name": c.unknown_keys.get("name", c.name),
                "parameters": c.unknown_keys.get("parameters", c.parameters),
            }
            for c in step.tool_calls
        ]
        parts.append(f"<tool_call>{oro_dumps(calls)}</tool_call>")
    if step.response:
        parts.append(f"<response>{step.response}</response>")
    return "\n".join(parts)


__all__ = [
    "DEFAULT_SYSTEM_TEMPLATE",
    "HISTORY_HEADER",
    "HISTORY_ROLES",
    "MAX_STEPS",
    "OUTPUT_ROLES",
    "TOOLS_PLACEHOLDER",
    "ParseIssue",
    "ParsedStep",
    "build_history_message",
    "build_prompt_messages",
    "build_system_prompt",
    "decode_json_block",
    "make_tool_call",
    "parse_completion",
    "render_history_entry",
    "render_model_output",
    "render_step_content",
    "should_stop",
    "tool_block",
    "tool_call_id",
    "ujson_dumps",
]
