"""Tool registry, tool-call ids and ORO step records for miner files (stdlib only)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any, TypedDict

AgentOutput = list[dict[str, Any]]
#: What a tool returns: anything JSON-serialisable.
ToolResult = Any


class ToolCallResult(TypedDict):
    """One executed tool call as it appears in ``completion.message.tool_call``."""

    name: str
    parameters: dict[str, Any]
    tool_call_id: str
    result: Any


_TOOL_REGISTRY: dict[str, Callable[..., Any]] = {}


def _md5(data: bytes) -> bytes:
    # CPython's builtin _md5 when present: hashlib would load OpenSSL in every sandbox process (issue 35).
    try:
        from _md5 import md5  # type: ignore[import-not-found]
    except ImportError:
        from hashlib import md5
    return md5(data, usedforsecurity=False).digest()


def _local_tool_call_id(name: str, parameters: dict[str, Any], length: int = 8) -> str:
    from base64 import urlsafe_b64encode

    # Python repr (not JSON) of the dict in its own key order: that is what upstream hashes.
    digest = _md5(f"{name}\n{parameters!r}".encode())
    return urlsafe_b64encode(digest).decode("ascii").rstrip("=")[:length]


def tool_call_id(name: str, parameters: dict[str, Any], length: int = 8) -> str:
    """The ShoppingBench/ORO tool-call id: MD5(name + "\\n" + repr(parameters)), urlsafe base64, 8 chars.

    Uses :func:`shoparena.formats.tagged.tool_call_id` when the full package is importable (outside the
    sandbox), so both sides share one definition; inside the sandbox the local copy is used.

    Args:
        name: Tool name.
        parameters: Parameters dict, hashed in its own key order.
        length: Number of characters kept.

    Returns:
        The id, e.g. ``"NR0gqQng"`` for ``terminate {"status": "success"}``.
    """
    if _shared_tool_call_id is not None and length == 8:
        return _shared_tool_call_id(name, parameters)
    return _local_tool_call_id(name, parameters, length)


def _load_shared() -> Callable[[str, dict[str, Any]], str] | None:
    try:
        from shoparena.formats.tagged import tool_call_id as shared  # type: ignore[import-not-found]
    except Exception:  # the sandbox mounts only this package; anything failing means "not available"
        return None
    return shared  # type: ignore[no-any-return]


_shared_tool_call_id = _load_shared()

#: ORO's name for :func:`tool_call_id`.
generate_tool_call_id = tool_call_id


def register_tool(name: str, func: Callable[..., Any]) -> None:
    """Register ``func`` under ``name`` in the module-global registry (a later registration wins)."""
    _TOOL_REGISTRY[name] = func


def Tool(name: str | Callable[..., Any] | None = None) -> Any:
    """Decorator registering a tool: ``@Tool``, ``@Tool()`` or ``@Tool("name")``.

    Args:
        name: The tool name (defaults to the function's ``__name__``), or the function itself when used
            bare as ``@Tool``.

    Returns:
        The function unchanged (bare use) or a decorator.
    """
    if callable(name):
        register_tool(name.__name__, name)
        return name

    def decorator(func: Callable[..., Any]) -> Callable[..., Any]:
        register_tool(name if name is not None else func.__name__, func)
        return func

    return decorator


def get_tool(name: str) -> Callable[..., Any]:
    """Return the registered tool ``name``.

    Raises:
        ValueError: When no tool of that name is registered (ORO raises ValueError too).
    """
    try:
        return _TOOL_REGISTRY[name]
    except KeyError:
        known = ", ".join(sorted(_TOOL_REGISTRY)) or "(none)"
        raise ValueError(f"Tool '{name}' is not registered. Available tools: {known}") from None


def list_tools() -> list[str]:
    """Registered tool names in registration order."""
    return list(_TOOL_REGISTRY)


def execute_tool_call(tool_name: str, parameters: dict[str, Any]) -> ToolCallResult:
    """Run a registered tool with keyword ``parameters``.

    Returns:
        ``{name, parameters, tool_call_id, result}``.

    Raises:
        ValueError: Unknown tool. Exceptions raised by the tool propagate.
    """
    call_id = tool_call_id(tool_name, parameters)
    result = get_tool(tool_name)(**parameters)
    return {"name": tool_name, "parameters": parameters, "tool_call_id": call_id, "result": result}


def format_content(
    think: str = "", tool_calls: list[dict[str, Any]] | None = None, response: str = ""
) -> str:
    """The tagged completion string: non-empty ``<think>``, ``<tool_call>[...]</tool_call>``, ``<response>``.

    The tool-call JSON holds only ``name`` and ``parameters`` (ids and results live in ``message``).
    """
    parts: list[str] = []
    if think:
        parts.append(f"<think>{think}</think>")
    if tool_calls:
        slim = [{"name": call["name"], "parameters": call["parameters"]} for call in tool_calls]
        parts.append(f"<tool_call>{json.dumps(slim)}</tool_call>")
    if response:
        parts.append(f"<response>{response}</response>")
    return "\n".join(parts)


def create_dialogue_step(
    think: str = "",
    tool_results: list[ToolCallResult] | list[dict[str, Any]] | None = None,
    response: str = "",
    query: str = "",
    step: int = 1,
    *,
    reasoning_content: str = "",
    timestamp_ms: int | None = None,
) -> dict[str, Any]:
    """Build one ORO step record stamped with the current time (epoch ms).

    Args:
        think: Reasoning text.
        tool_results: Executed calls (``execute_tool_call`` results).
        response: Text to the user.
        query: The problem query (``extra_info.query``).
        step: 1-based step number.
        reasoning_content: ``completion.reasoning_content`` (ORO's helper always writes "").
        timestamp_ms: Override the stamp (tests); defaults to now.

    Returns:
        ``{"completion": {reasoning_content, content, message}, "extra_info": {step, query, timestamp}}``.
    """
    calls = list(tool_results or [])
    message: dict[str, Any] = {}
    if think:
        message["think"] = think
    if calls:
        message["tool_call"] = calls
    if response:
        message["response"] = response
    stamp = int(time.time() * 1000) if timestamp_ms is None else int(timestamp_ms)
    return {
        "completion": {
            "reasoning_content": reasoning_content,
            "content": format_content(think, calls, response),
            "message": message,
        },
        "extra_info": {"step": step, "query": query, "timestamp": stamp},
    }
