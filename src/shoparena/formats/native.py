"""Native chat format (environment spec §5.2): OpenAI messages, Qwen3/Hermes text, and the SN15 adapter.

Messages are OpenAI-style dicts: ``assistant`` turns carry ``tool_calls[{id, type, function: {name,
arguments}}]`` and ``tool`` turns carry ``tool_call_id`` and ``content``. Rendered as text (Qwen3/Hermes
convention) the tools sit inside ``<tools>`` in the system turn, reasoning inside ``<think>``, each call is
one ``<tool_call>`` block holding ``{"name", "arguments"}``, and consecutive tool results form one user turn
of ``<tool_response>`` blocks.

Before a native call is recorded as a §5.1 tool call the adapter normalises its arguments (``query`` → ``q``;
``product_id`` or an array ``product_ids`` → a comma-joined ``product_ids`` string; ``page`` defaults to 1 for
``find_product``) and computes ``tool_call_id`` on the result. The original arguments and OpenAI ids are kept
on the :class:`ToolCall` (``native_arguments``, ``native_id``) so chat → trajectory → chat is exact.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from shoparena.formats._common import (
    MISSING,
    FormatError,
    chat_dumps,
    emit,
    known,
    type_name,
    unknown_fields,
)
from shoparena.formats.scan import MAX_JSON_DEPTH, JsonDepthError, loads_bounded, value_depth
from shoparena.formats.tagged import ParseIssue, decode_json_block, make_tool_call, tool_call_id
from shoparena.formats.tool_blocks import tool_call_blocks
from shoparena.records.message import ToolSchema
from shoparena.records.tools import QUERY_TOOLS
from shoparena.records.trajectory import Step, ToolCall, Trajectory

#: Tools whose ``product_id``/``product_ids`` arguments are folded into a comma-joined ``product_ids`` string.
ID_LIST_TOOLS = frozenset({"view_product_information", "recommend_product"})
#: Tools whose ``query`` argument is renamed ``q`` when ``q`` is absent.

_THINK_BLOCK = re.compile(r"<think>(.*?)</think>", re.DOTALL)
_RESPONSE_BLOCK = re.compile(r"<tool_response>\n?(.*?)\n?</tool_response>", re.DOTALL)
_CHAT_KEYS = ("role", "content", "reasoning_content", "tool_calls")

TOOLS_PREAMBLE = (
    "# Tools\n\nYou can call the functions below to help with the request. Their signatures are listed "
    "inside <tools></tools>, one JSON object per line:\n"
)
CALL_INSTRUCTIONS = (
    "To call a function, write one <tool_call></tool_call> block per call holding a JSON object with the "
    "function name and its arguments:\n"
    '<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>'
)


def read_tool_schemas(tools: Iterable[Any] | None) -> list[ToolSchema]:
    """Parse a tool list: SN15 flat ``{type, name, description, parameters}`` objects, OpenAI nested
    ``{type: "function", function: {...}}`` objects, or :class:`ToolSchema` records.

    Raises:
        FormatError: naming ``tools[i]`` and the field.
    """
    out = []
    for i, tool in enumerate(tools or []):
        try:
            out.append(ToolSchema.from_any(tool))
        except ValueError as exc:
            raise FormatError(f"tools[{i}]", str(exc)) from None
    return out


def _id_text(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return None


def _joined_ids(value: Any) -> str | None:
    """Comma-joined ids of a string, an int, or a list of strings/ints; None for anything else."""
    if isinstance(value, list):
        parts = [_id_text(v) for v in value]
        return None if any(p is None for p in parts) else ",".join(p for p in parts if p is not None)
    return _id_text(value)


def normalise_native_arguments(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """The adapter of spec §5.2: native arguments → ShoppingBench parameters (a new dict).

    Renamed keys keep their position (the id hashes key order); a defaulted ``page`` goes last. Arrays that
    hold anything but strings or integers are left as they are (a non-string ``product_ids`` is no
    recommendation for the scorers).

    >>> normalise_native_arguments("find_product", {"query": "tea", "price": "0-50"})
    {'q': 'tea', 'price': '0-50', 'page': 1}
    >>> normalise_native_arguments("recommend_product", {"product_ids": ["12", "34"]})
    {'product_ids': '12,34'}
    """
    out: dict[str, Any] = {}
    rename_query = name in QUERY_TOOLS and "q" not in arguments and "query" in arguments
    ids_value: str | None = None
    ids_source: str | None = None
    if name in ID_LIST_TOOLS:
        if isinstance(arguments.get("product_ids"), list):
            ids_value, ids_source = _joined_ids(arguments["product_ids"]), "product_ids"
        elif "product_ids" not in arguments and "product_id" in arguments:
            ids_value, ids_source = _joined_ids(arguments["product_id"]), "product_id"
    for key, value in arguments.items():
        if rename_query and key == "query":
            out["q"] = value
        elif ids_source == key and ids_value is not None:
            out["product_ids"] = ids_value
        else:
            out[key] = value
    if name == "find_product" and "page" not in out:
        out["page"] = 1
    return out


def _safe_id(name: Any, parameters: Any) -> str:
    try:
        return tool_call_id(name, parameters)
    except UnicodeEncodeError:
        # A lone surrogate cannot be hashed upstream; hash its escaped form so the call still gets an id.
        return tool_call_id(name, json.dumps(parameters))


def native_tool_call(name: Any, arguments: Any, *, call_id: str | None = None) -> ToolCall:
    """Record one native call as a §5.1 :class:`ToolCall` (normalised parameters, upstream id).

    Args:
        name: Function name.
        arguments: ``function.arguments``: a JSON string (OpenAI), an object, or anything else (invalid).
        call_id: The OpenAI call id, kept as ``native_id`` when it differs from the computed id.
    """
    parsed: Any = arguments
    json_error = None
    kept = arguments
    if isinstance(arguments, str):
        try:
            parsed = loads_bounded(arguments) if arguments.strip() else {}
        except json.JSONDecodeError as exc:
            json_error = f"arguments is not valid JSON (char {exc.pos}: {exc.msg})"
        except JsonDepthError as exc:
            parsed, json_error = {}, f"arguments is {exc}"
    elif value_depth(arguments) > MAX_JSON_DEPTH:  # not kept: nothing downstream could store it
        parsed, kept, json_error = {}, None, f"arguments is {JsonDepthError(MAX_JSON_DEPTH)}"
    if isinstance(parsed, dict) and isinstance(name, str) and json_error is None:
        parsed = normalise_native_arguments(name, parsed)
    call_id_value = _safe_id(name, parsed)
    reproduced = isinstance(arguments, str) and isinstance(parsed, dict) and chat_dumps(parsed) == arguments
    call = make_tool_call(
        name,
        parsed,
        call_id_value,
        native_id=call_id if call_id is not None and call_id != call_id_value else None,
        native_arguments=None if reproduced else kept,
    )
    if json_error is not None:
        call.invalid_reason = json_error
    return call


@dataclass(slots=True)
class NativeParsed:
    """A Qwen3/Hermes completion split into reasoning, calls and visible text.

    Attributes:
        think: Reasoning (``<think>`` block, text before an unopened ``</think>``, or ``reasoning_content``).
        tool_calls: Well-formed calls, normalised, in block order.
        response: Visible text with the think and tool-call blocks removed, stripped.
        content: The raw completion.
        reasoning_content: The raw reasoning channel.
        parse_errors: Malformed blocks (dropped), each naming its block index, key or JSON position.
        repairs: Accepted deviations (fences, trailing text, list in one block, missing arguments).
    """

    think: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    response: str = ""
    content: str = ""
    reasoning_content: str = ""
    parse_errors: list[ParseIssue] = field(default_factory=list)
    repairs: list[ParseIssue] = field(default_factory=list)

    def to_step(self, index: int, *, timestamp: int | float | None = None) -> Step:
        """A :class:`Step` with ``content_format="hermes"`` (calls inline in ``content``)."""
        return Step(
            index=index,
            think=self.think,
            tool_calls=[c.model_copy(deep=True) for c in self.tool_calls],
            response=self.response,
            content=self.content,
            reasoning_content=self.reasoning_content,
            timestamp=timestamp,
            content_format="hermes",
            parse_errors=[str(e) for e in self.parse_errors],
        )


def _calls_from_block(value: Any, index: int, out: NativeParsed) -> None:
    objects = value if isinstance(value, list) else [value]
    if isinstance(value, list):
        out.repairs.append(
            ParseIssue("tool_call", "a JSON list inside one block", element=index, fatal=False)
        )
    for obj in objects:
        if not isinstance(obj, dict):
            out.parse_errors.append(
                ParseIssue("tool_call", f"expected a JSON object, got {type_name(obj)}", element=index)
            )
            continue
        name = obj.get("name")
        if not isinstance(name, str) or not name:
            detail = (
                "required key is missing"
                if "name" not in obj
                else f"expected a string, got {type_name(name)}"
            )
            out.parse_errors.append(ParseIssue("tool_call", detail, element=index, key="name"))
            continue
        if "arguments" in obj:
            arguments = obj["arguments"]
        elif "parameters" in obj:
            arguments = obj["parameters"]
            out.repairs.append(
                ParseIssue("tool_call", "used 'parameters' for 'arguments'", element=index, fatal=False)
            )
        else:
            arguments = {}
            out.repairs.append(
                ParseIssue("tool_call", "no arguments; using {}", element=index, key="arguments", fatal=False)
            )
        call = native_tool_call(name, arguments)
        if isinstance(arguments, dict) and list(arguments.items()) == list(call.parameters.items()):
            # Nothing was normalised: the text itself keeps the arguments as written.
            call.native_arguments = None
        if call.invalid_reason:
            out.parse_errors.append(
                ParseIssue("tool_call", call.invalid_reason, element=index, key="arguments")
            )
        out.tool_calls.append(call)


def parse_hermes_completion(text: str | None, reasoning_content: str | None = None) -> NativeParsed:
    """Parse Qwen3/Hermes model output: ``<think>``, any number of ``<tool_call>`` blocks, free text.

    Unlike the tagged parser, a malformed block is dropped on its own (and reported); well-formed blocks are
    kept. Accepted: surrounding whitespace, code fences and trailing text inside a block, a JSON list inside
    one block, a ``</think>`` whose opening tag was in the prompt. An unclosed final ``<tool_call>`` (a
    truncated generation) is reported.
    """
    raw = text if isinstance(text, str) else ""
    reasoning = reasoning_content if isinstance(reasoning_content, str) else ""
    out = NativeParsed(content=raw, reasoning_content=reasoning)
    rest = raw
    match = _THINK_BLOCK.search(rest)
    if match:
        out.think = match.group(1).strip()
        rest = rest[: match.start()] + rest[match.end() :]
    elif "</think>" in rest:
        head, rest = rest.split("</think>", 1)
        out.think = head.strip()
    if not out.think and reasoning:
        out.think = reasoning.replace("<think>", "").replace("</think>", "").strip()
    pieces: list[str] = []
    position = 0
    blocks = 0
    for block in tool_call_blocks(rest):
        blocks = block.index + 1
        pieces.append(rest[position : block.start])
        position = block.end
        # Lenient here (fences, trailing text): block.items is the strict reading.
        value, repairs, error = decode_json_block(block.body, "tool_call", lenient=True, element=block.index)
        out.repairs.extend(repairs)
        if error is not None:
            out.parse_errors.append(error)
        else:
            _calls_from_block(value, blocks - 1, out)
    tail = rest[position:]
    if "<tool_call>" in tail:
        cut = tail.index("<tool_call>")
        out.parse_errors.append(
            ParseIssue("tool_call", "unclosed <tool_call> block (truncated output?)", element=blocks)
        )
        tail = tail[:cut]
    pieces.append(tail)
    out.response = "".join(pieces).strip()
    return out


def result_to_text(result: Any) -> str:
    """Tool-message content for a tool result: strings as they are, anything else as JSON."""
    return result if isinstance(result, str) else chat_dumps(result)


def text_to_result(text: Any) -> Any:
    """Inverse of :func:`result_to_text`: JSON is decoded only when re-encoding gives the text back exactly.

    A string result that itself looks like JSON (``"123"``) comes back decoded; that is the one lossy case.
    """
    if not isinstance(text, str):
        return text
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return text
    return value if not isinstance(value, str) and chat_dumps(value) == text else text


def _native_arguments(call: ToolCall, schema: ToolSchema | None) -> Any:
    if call.native_arguments is not None:
        return call.native_arguments
    params = call.unknown_keys.get("parameters", call.parameters)
    if isinstance(params, dict) and schema is not None:
        params = dict(params)
        ids = params.get("product_ids")
        if isinstance(ids, str) and schema.property_type("product_ids") == "array":
            params["product_ids"] = ids.split(",") if ids else []
    return chat_dumps(params)


def tool_call_to_openai(call: ToolCall, schema: ToolSchema | None = None) -> dict[str, Any]:
    """An OpenAI ``tool_calls`` entry for a call; with a ``schema`` declaring ``product_ids`` an array, the
    comma string is split back into one."""
    return {
        "id": call.native_id or call.tool_call_id,
        "type": "function",
        "function": {
            "name": call.unknown_keys.get("name", call.name),
            "arguments": _native_arguments(call, schema),
        },
    }


def _assistant_message(step: Step, schemas: dict[str, ToolSchema]) -> dict[str, Any]:
    raw = step.unknown_keys.get("chat", {})
    order = step.key_order.get("chat")
    if step.content_format == "tagged":
        content, reasoning = step.response, step.think
    else:
        content, reasoning = step.content, step.reasoning_content
    if "reasoning" in raw and "reasoning_content" not in (order or []):
        reasoning = ""  # the source used the newer "reasoning" key, kept raw
    calls: Any = MISSING
    if step.content_format != "hermes" and (step.tool_calls or "tool_calls" in (order or [])):
        calls = [tool_call_to_openai(c, schemas.get(c.name)) for c in step.tool_calls]
    fields = [
        ("role", "assistant", True, True),
        known(raw, "content", content, canonical=True, force=False),
        known(raw, "reasoning_content", reasoning or MISSING, canonical=True, force=bool(reasoning)),
        known(raw, "tool_calls", calls, canonical=True, force=calls is not MISSING),
    ]
    fields += unknown_fields({k: v for k, v in raw.items() if k not in _CHAT_KEYS})
    return emit(order, fields)


def trajectory_to_chat(
    traj: Trajectory, tools: Iterable[Any] | None = None, *, system_prompt: str | None = None
) -> list[dict[str, Any]]:
    """OpenAI-style messages for a trajectory: [system], user query, then per step one assistant turn and one
    tool turn per call that ran.

    Args:
        traj: The trajectory.
        tools: Tool schemas; where one declares ``product_ids`` an array, string ids are split back into one.
        system_prompt: System text; defaults to ``traj.system_prompt`` (no system turn when both are None).
    """
    schemas = {s.name: s for s in read_tool_schemas(tools)}
    messages: list[dict[str, Any]] = []
    system = system_prompt if system_prompt is not None else traj.system_prompt
    if system is not None:
        messages.append({"role": "system", "content": system})
    messages.append({"role": "user", "content": traj.query})
    for step in traj.steps:
        messages.append(_assistant_message(step, schemas))
        for call in step.tool_calls:
            if call.has_result:
                messages.append(
                    {
                        "role": "tool",
                        "tool_call_id": call.native_id or call.tool_call_id,
                        "content": result_to_text(call.result),
                    }
                )
    return messages


def _text_of(content: Any, path: str) -> str:
    """Text of a message ``content``: a string, null, or a list of ``{type: "text", text}`` parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(isinstance(p, dict) for p in content):
        return "".join(p.get("text", "") for p in content if p.get("type") == "text")
    raise FormatError(
        f"{path}.content", f"expected a string, null or a list of parts, got {type_name(content)}"
    )


def _assistant_step(message: dict[str, Any], index: int, path: str) -> Step:
    raw = {k: v for k, v in message.items() if k not in _CHAT_KEYS}
    content = message.get("content")
    text = _text_of(content, path)
    if "content" in message and not isinstance(content, str):
        raw["content"] = content
    reasoning = message.get("reasoning_content", message.get("reasoning"))
    if reasoning is not None and not isinstance(reasoning, str):
        raise FormatError(f"{path}.reasoning_content", f"expected a string, got {type_name(reasoning)}")
    parsed = parse_hermes_completion(text, reasoning)
    step = Step(
        index=index,
        think=parsed.think,
        response=parsed.response,
        content=text,
        reasoning_content=reasoning or "",
        content_format="native",
        key_order={"chat": list(message)},
    )
    tool_calls = message.get("tool_calls")
    if tool_calls is not None and not isinstance(tool_calls, list):
        raise FormatError(f"{path}.tool_calls", f"expected a list, got {type_name(tool_calls)}")
    if tool_calls is None and "tool_calls" in message:
        raw["tool_calls"] = None
    if tool_calls:
        for j, entry in enumerate(tool_calls):
            where = f"{path}.tool_calls[{j}]"
            function = entry.get("function") if isinstance(entry, dict) else None
            if not isinstance(function, dict):
                raise FormatError(f"{where}.function", "expected an object with name and arguments")
            call = native_tool_call(
                function.get("name"), function.get("arguments", "{}"), call_id=entry.get("id")
            )
            if call.invalid_reason:
                step.parse_errors.append(f"{where}: {call.invalid_reason}")
            step.tool_calls.append(call)
    elif parsed.tool_calls or parsed.parse_errors:
        step.content_format = "hermes"
        step.tool_calls = parsed.tool_calls
        step.parse_errors = [str(e) for e in parsed.parse_errors]
    if raw:
        step.unknown_keys["chat"] = raw
    return step


def _attach_result(steps: list[Step], call_ref: Any, content: Any, path: str) -> None:
    if not steps:
        raise FormatError(path, "tool result before any assistant turn")
    step = steps[-1]
    pending = [c for c in step.tool_calls if not c.has_result]
    match = next(
        (c for c in pending if call_ref is not None and (c.native_id or c.tool_call_id) == call_ref), None
    )
    if match is None:
        if not pending:
            raise FormatError(f"{path}.tool_call_id", f"no pending call for {call_ref!r}")
        match = pending[0]
        step.parse_errors.append(f"{path}.tool_call_id: {call_ref!r} matched by position")
    match.result, match.has_result = text_to_result(content), True


def chat_to_trajectory(messages: Sequence[Any], **fields: Any) -> Trajectory:
    """A trajectory from OpenAI-style messages (optionally led by a system turn and ending anywhere).

    The first user turn is the query; each assistant turn is a step whose structured ``tool_calls`` (or, in
    raw Hermes text, ``<tool_call>`` blocks) become normalised calls; ``tool`` turns (or a user turn of
    ``<tool_response>`` blocks) give results to the latest step's calls by id, else by position.

    Args:
        messages: The conversation.
        **fields: Extra :class:`Trajectory` fields (``problem_id``, ``run_id``...).

    Raises:
        FormatError: naming ``messages[i]`` and the field.
    """
    if not isinstance(messages, list | tuple):
        raise FormatError("messages", f"expected a list, got {type_name(messages)}")
    system_prompt: str | None = None
    query: str | None = None
    steps: list[Step] = []
    for i, message in enumerate(messages):
        path = f"messages[{i}]"
        if not isinstance(message, dict):
            raise FormatError(path, f"expected an object, got {type_name(message)}")
        role = message.get("role")
        if role == "system":
            if i != 0:
                raise FormatError(f"{path}.role", "a system turn is only supported first")
            system_prompt = _text_of(message.get("content"), path)
        elif role == "user":
            text = _text_of(message.get("content"), path)
            if query is None:
                query = text
            elif steps and text.lstrip().startswith("<tool_response>"):
                for block in _RESPONSE_BLOCK.finditer(text):
                    _attach_result(steps, None, block.group(1), path)
            else:
                raise FormatError(f"{path}.role", "only one user turn (the query) is supported")
        elif role == "assistant":
            steps.append(_assistant_step(message, len(steps) + 1, path))
        elif role == "tool":
            _attach_result(steps, message.get("tool_call_id"), message.get("content"), path)
        else:
            raise FormatError(f"{path}.role", f"unknown role {role!r}")
    return Trajectory(
        query=query or "", system_prompt=system_prompt, steps=steps, source_format="chat", **fields
    )


def _hermes_call(entry: dict[str, Any]) -> str:
    function = entry.get("function", {})
    arguments = function.get("arguments", {})
    args_text = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    name_text = json.dumps(function.get("name"), ensure_ascii=False)
    return f'<tool_call>\n{{"name": {name_text}, "arguments": {args_text}}}\n</tool_call>'


def render_hermes_prompt(
    messages: Sequence[dict[str, Any]],
    tools: Iterable[Any] | None = None,
    *,
    add_generation_prompt: bool = False,
) -> str:
    """Render messages as Qwen3/Hermes ChatML text (for inspection and raw-completion backends).

    For training, prefer the tokenizer's own chat template; this follows its structure (``<tools>`` in the
    system turn, ``<think>``, one ``<tool_call>`` block per call, ``<tool_response>`` blocks grouped into one
    user turn) but not its exact wording.
    """
    schemas = read_tool_schemas(tools)
    out: list[str] = []
    rest = list(messages)
    system = (
        _text_of(rest.pop(0).get("content"), "messages[0]")
        if rest and rest[0].get("role") == "system"
        else None
    )
    if schemas:
        listing = "\n".join(json.dumps(s.to_openai(), ensure_ascii=False) for s in schemas)
        head = f"{system}\n\n" if system else ""
        out.append(
            f"<|im_start|>system\n{head}{TOOLS_PREAMBLE}<tools>\n{listing}\n</tools>\n\n{CALL_INSTRUCTIONS}<|im_end|>\n"
        )
    elif system is not None:
        out.append(f"<|im_start|>system\n{system}<|im_end|>\n")
    for i, message in enumerate(rest):
        role = message.get("role")
        text = _text_of(message.get("content"), f"messages[{i}]")
        if role == "assistant":
            reasoning = message.get("reasoning_content") or ""
            body = ""
            if reasoning and "<think>" not in text:
                body = f"<think>\n{reasoning.strip()}\n</think>\n\n"
            body += text.strip()
            for j, entry in enumerate(message.get("tool_calls") or []):
                # A newline separates calls from visible text and from each other, not from the think block.
                body += ("\n" if j or text.strip() else "") + _hermes_call(entry)
            out.append(f"<|im_start|>assistant\n{body}<|im_end|>\n")
        elif role == "tool":
            if i == 0 or rest[i - 1].get("role") != "tool":
                out.append("<|im_start|>user")
            out.append(f"\n<tool_response>\n{text}\n</tool_response>")
            if i + 1 == len(rest) or rest[i + 1].get("role") != "tool":
                out.append("<|im_end|>\n")
        else:
            out.append(f"<|im_start|>{role}\n{text}<|im_end|>\n")
    if add_generation_prompt:
        out.append("<|im_start|>assistant\n")
    return "".join(out)


__all__ = [
    "CALL_INSTRUCTIONS",
    "ID_LIST_TOOLS",
    "TOOLS_PREAMBLE",
    "NativeParsed",
    "chat_to_trajectory",
    "native_tool_call",
    "normalise_native_arguments",
    "parse_hermes_completion",
    "read_tool_schemas",
    "render_hermes_prompt",
    "result_to_text",
    "text_to_result",
    "tool_call_to_openai",
    "trajectory_to_chat",
]
