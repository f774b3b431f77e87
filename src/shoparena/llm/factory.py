"""Build a chat backend from a one-line spec, as used by CLI flags and config files."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from shoparena.llm.openai_compat import OpenAICompatibleBackend
from shoparena.llm.transformers_backend import TransformersBackend
from shoparena.llm.types import ChatBackend
from shoparena.records.actors import ActorRole, actors

API_KEY_ENV = "SHOPARENA_LLM_API_KEY"
#: The backend kinds a ``KIND:LOCATION`` spec names (the registry's backends; ``planner`` has no location).
SPEC_KINDS = tuple(name for name in actors(ActorRole.BACKEND) if name != "planner")


def parse_backend_spec(spec: str) -> tuple[str, str, str | None]:
    """Split a spec into ``(kind, location, model)``.

    Forms:
        ``openai:http://127.0.0.1:8000/v1#Qwen/Qwen3-4B`` (``#model`` optional), a bare ``http(s)://`` URL
        (same as ``openai:``), ``transformers:/models/qwen3-0.6b`` (alias ``hf:``; ``#name`` optional).

    Raises:
        ValueError: Unknown kind or empty location (the message names the spec).
    """
    text = spec.strip()
    if text.startswith(("http://", "https://")):
        kind, rest = "openai", text
    elif ":" in text:
        kind, rest = text.split(":", 1)
        kind = kind.strip().lower()
    else:
        raise ValueError(f"backend spec {spec!r}: expected 'openai:URL#model' or 'transformers:DIR'")
    location, _, model = rest.partition("#")
    location = location.strip()
    if kind == "hf":
        kind = "transformers"
    if kind not in SPEC_KINDS:
        raise ValueError(f"backend spec {spec!r}: unknown kind {kind!r} ({', '.join(SPEC_KINDS)})")
    if not location:
        raise ValueError(f"backend spec {spec!r}: missing URL or directory")
    if kind == "openai" and not location.startswith(("http://", "https://")):
        raise ValueError(f"backend spec {spec!r}: openai location must be an http(s) URL")
    return kind, location, model.strip() or None


def spec_model_name(spec: str) -> str:
    """The model a spec serves: ``#model``, else the model folder's name, else the planner's label.

    Raises:
        ValueError: An unparseable spec.
    """
    if spec.strip().lower() in ("planner", "planner:xml"):
        from shoparena.llm.planner_backend import MODEL_NAME

        return MODEL_NAME
    _, location, model = parse_backend_spec(spec)
    return model or Path(location.rstrip("/")).name or location


def backend_from_spec(spec: str, *, api_key: str | None = None, **options: Any) -> ChatBackend:
    """Create a backend from a spec string (see :func:`parse_backend_spec`).

    Args:
        spec: The spec.
        api_key: Bearer token for HTTP backends; None reads ``SHOPARENA_LLM_API_KEY`` (may be unset: local
            vLLM/SGLang servers need none).
        **options: Passed to the backend constructor (``timeout``, ``max_retries``, ``backoff``, ``sleep``,
            ``headers`` for HTTP; ``device``, ``default_max_tokens``, ``split_reasoning`` for transformers).
    """
    if spec.strip().lower() in ("planner", "planner:xml"):
        # The rule-based planner baseline behind the chat protocol (shoparena.llm.planner_backend).
        from shoparena.llm.planner_backend import PlannerBackend

        return PlannerBackend(mode="xml" if spec.strip().lower().endswith(":xml") else "native")
    kind, location, model = parse_backend_spec(spec)
    if kind == "openai":
        key = api_key if api_key is not None else os.environ.get(API_KEY_ENV)
        return OpenAICompatibleBackend(location, key, model, **options)
    return TransformersBackend(location, **options)
