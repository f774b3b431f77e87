"""Chat backends: one protocol (:class:`ChatBackend`) over HTTP servers, local HF models and test scripts."""

from shoparena.llm.factory import backend_from_spec, parse_backend_spec
from shoparena.llm.openai_compat import (
    BackoffPolicy,
    OpenAICompatibleBackend,
    normalise_tool_call,
    parse_chat_completion,
)
from shoparena.llm.scripted import ScriptedBackend, ScriptExhausted, scripted_reply
from shoparena.llm.transformers_backend import TransformersBackend, parse_generated_text
from shoparena.llm.types import (
    AuthError,
    BackendError,
    ChatBackend,
    ChatRequest,
    ChatResponse,
    InvalidResponse,
    RateLimited,
    Unavailable,
    Usage,
    error_for_status,
)

__all__ = [
    "AuthError",
    "BackendError",
    "BackoffPolicy",
    "ChatBackend",
    "ChatRequest",
    "ChatResponse",
    "InvalidResponse",
    "OpenAICompatibleBackend",
    "RateLimited",
    "ScriptExhausted",
    "ScriptedBackend",
    "TransformersBackend",
    "Unavailable",
    "Usage",
    "backend_from_spec",
    "error_for_status",
    "normalise_tool_call",
    "parse_backend_spec",
    "parse_chat_completion",
    "parse_generated_text",
    "scripted_reply",
]
