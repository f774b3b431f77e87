"""Agent-side helpers for arena miner files (ORO ``agent_interface`` + ``proxy_client`` compatible).

A miner file is one Python file defining ``agent_main(problem: dict) -> list[step]``. ORO miner files run
unchanged apart from their import lines: every name ORO's ``src.agent.agent_interface`` and
``src.agent.proxy_client`` export is importable from here (including the module-level ``_TOOL_REGISTRY``,
``RequestLog``, ``InferenceStats`` and the ``DEFAULT_*`` constants)::

    from shoparena.agent_sdk import Tool, ProxyClient, execute_tool_call, create_dialogue_step

This package is **stdlib only**: inside the sandbox it is mounted on its own (without the rest of shoparena
and without third-party packages), so it must not import pydantic, httpx or any other shoparena module
except optionally :mod:`shoparena.formats.tagged` for the shared ``tool_call_id``.
"""

from __future__ import annotations

from shoparena.agent_sdk.client import (
    DEFAULT_MAX_RETRIES,
    DEFAULT_PROXY_URL,
    DEFAULT_RATE_LIMIT_RETRY_DELAY,
    DEFAULT_RETRY_DELAY,
    DEFAULT_TIMEOUT,
    ProxyClient,
    parse_nonces,
)
from shoparena.agent_sdk.logs import InferenceStats, RequestLog
from shoparena.agent_sdk.tools import (
    _TOOL_REGISTRY,
    AgentOutput,
    Tool,
    ToolCallResult,
    ToolResult,
    create_dialogue_step,
    execute_tool_call,
    format_content,
    generate_tool_call_id,
    get_tool,
    list_tools,
    register_tool,
    tool_call_id,
)

#: Names served by :func:`__getattr__` from :mod:`shoparena.agent_sdk.env_client` on first use: a miner in
#: the sandbox never needs the environment server's client, so it does not pay for importing it.
_LAZY = {"EnvClient", "EnvServerError", "Episode"}


def __getattr__(name: str) -> object:
    if name in _LAZY:
        from shoparena.agent_sdk import env_client

        return getattr(env_client, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "DEFAULT_MAX_RETRIES",
    "DEFAULT_PROXY_URL",
    "DEFAULT_RATE_LIMIT_RETRY_DELAY",
    "DEFAULT_RETRY_DELAY",
    "DEFAULT_TIMEOUT",
    "_TOOL_REGISTRY",
    "AgentOutput",
    "EnvClient",
    "EnvServerError",
    "Episode",
    "InferenceStats",
    "ProxyClient",
    "RequestLog",
    "Tool",
    "ToolCallResult",
    "ToolResult",
    "create_dialogue_step",
    "execute_tool_call",
    "format_content",
    "generate_tool_call_id",
    "get_tool",
    "list_tools",
    "parse_nonces",
    "register_tool",
    "tool_call_id",
]
