"""A tiny scripted OpenAI-compatible FastAPI app (served on loopback by the fixtures in conftest.py)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, PlainTextResponse, Response


@dataclass
class Action:
    """One scripted server reply: JSON payload or raw text, with a status and optional delay/headers."""

    status: int = 200
    json: Any = None
    text: str | None = None
    delay_s: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)


def completion(content: str = "ok", **message: Any) -> dict[str, Any]:
    """A chat.completion payload with the given content and extra message fields."""
    usage = message.pop("usage", {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18})
    finish = message.pop("finish_reason", "stop")
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "model": message.pop("model", "served-model"),
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": content, **message},
             "finish_reason": finish}
        ],
        "usage": usage,
    }


class FakeServer:
    """Holds the script and the requests it received."""

    def __init__(self) -> None:
        self.script: list[Action] = []
        self.received: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.base_url = ""

    def reset(self, *actions: Action) -> None:
        self.script = list(actions)
        self.received.clear()
        self.headers.clear()


def build_app(server: FakeServer) -> FastAPI:
    app = FastAPI()

    @app.post("/v1/chat/completions")
    async def chat(request: Request) -> Response:
        server.received.append(await request.json())
        server.headers.append(dict(request.headers))
        action = server.script.pop(0) if server.script else Action(status=599, text="script exhausted")
        if action.delay_s:
            await asyncio.sleep(action.delay_s)
        if action.text is not None:
            return PlainTextResponse(action.text, status_code=action.status, headers=action.headers)
        return JSONResponse(action.json, status_code=action.status, headers=action.headers)

    return app
