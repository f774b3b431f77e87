"""A small OpenAI-compatible chat server over any :class:`~shoparena.llm.types.ChatBackend`.

Chosen as the CPU serving engine by measurement (docs/benchmarks.md): `transformers serve` gained nothing
from concurrency on the 2-core host; serving :class:`~shoparena.eval.batching.BatchedTransformersBackend`
from this app batches concurrent requests into one ``generate`` call. Start it with::

    shoparena eval serve hf:/path/to/model --port 8000 --max-batch 8

and evaluate with ``--policy openai:http://127.0.0.1:8000/v1#<name>``. Requests run on FastAPI's
thread pool (40 threads), so concurrent requests reach the backend together. ``/stats`` reports the
batcher's counters.
"""

from __future__ import annotations

import socket
import threading
import time
import uuid
from typing import Any

from shoparena.llm.types import BackendError, ChatBackend, ChatRequest
from shoparena.records.unicode import json_bytes


def _completion_payload(response: Any, model: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": response.content}
    if response.reasoning_content:
        message["reasoning_content"] = response.reasoning_content
    if response.tool_calls:
        message["tool_calls"] = response.tool_calls
    usage = response.usage
    counts: dict[str, Any] = {
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "total_tokens": usage.prompt_tokens + usage.completion_tokens,
    }
    if usage.prefilled_tokens is not None:  # OpenAI's field for prompt tokens served from a cache
        counts["prompt_tokens_details"] = {"cached_tokens": usage.prompt_tokens - usage.prefilled_tokens}
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:16]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": response.model or model,
        "choices": [{"index": 0, "message": message, "finish_reason": response.finish_reason or "stop"}],
        "usage": counts,
    }


def create_app(backend: ChatBackend, model_name: str) -> Any:
    """The FastAPI app: ``POST /v1/chat/completions``, ``GET /v1/models``, ``GET /stats``."""
    from fastapi import FastAPI, HTTPException, Response

    app = FastAPI(title="shoparena chat server")

    @app.get("/v1/models")
    def models() -> dict[str, Any]:
        return {"object": "list", "data": [{"id": model_name, "object": "model", "owned_by": "shoparena"}]}

    @app.get("/stats")
    def stats() -> dict[str, Any]:
        generator = getattr(backend, "generator", None)
        counters = getattr(generator, "stats", None)
        return {k: getattr(counters, k) for k in getattr(counters, "__slots__", ())}

    @app.post("/v1/chat/completions")
    def chat(body: dict[str, Any]) -> Any:
        if body.get("stream"):
            raise HTTPException(status_code=400, detail="stream=true is not supported")
        extra = {"top_p": body["top_p"]} if body.get("top_p") is not None else {}
        if isinstance(body.get("chat_template_kwargs"), dict):
            extra["chat_template_kwargs"] = body["chat_template_kwargs"]
        try:
            chat_request = ChatRequest(
                model=body.get("model"),
                messages=body.get("messages") or [],
                tools=body.get("tools") or None,
                temperature=body.get("temperature"),
                max_tokens=body.get("max_tokens") or body.get("max_completion_tokens"),
                stop=body.get("stop"),
                extra_body=extra,
            )
        except ValueError as exc:
            raise HTTPException(status_code=400, detail=f"invalid request: {exc}") from None
        try:
            response = backend.complete(chat_request)
        except BackendError as exc:
            raise HTTPException(status_code=503 if exc.retryable else 500, detail=str(exc)) from None
        # A lone surrogate the request carried (and the reply echoes) goes back as its escape, not a 500.
        return Response(json_bytes(_completion_payload(response, model_name)), media_type="application/json")

    return app


class LoopbackServer:
    """Run an app with uvicorn on 127.0.0.1 in a background thread (tests, benchmarks, ``eval run``)."""

    def __init__(self, app: Any, *, port: int = 0) -> None:
        import uvicorn

        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", port))
        self.port = self._sock.getsockname()[1]
        config = uvicorn.Config(app, log_level="warning", lifespan="off")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._sock]}, daemon=True, name="chat-server"
        )

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self, timeout_s: float = 15.0) -> LoopbackServer:
        self._thread.start()
        deadline = time.monotonic() + timeout_s
        while not self._server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("chat server did not start")
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)
        self._sock.close()

    def __enter__(self) -> LoopbackServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


__all__ = ["LoopbackServer", "create_app"]
