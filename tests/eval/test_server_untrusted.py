"""``eval serve``'s chat endpoint on a request holding a lone surrogate (issue 52, hostile pass): the reply
echoes the request's text, and it went back as a 500 (the JSON response could not be encoded)."""

from __future__ import annotations

import json

from fastapi.testclient import TestClient

from shoparena.eval.server import create_app
from shoparena.llm.planner_backend import PlannerBackend


def test_a_request_with_a_lone_surrogate_is_answered_with_its_escape() -> None:
    client = TestClient(create_app(PlannerBackend(), "planner"), raise_server_exceptions=False)
    messages = [
        {"role": "system", "content": "shop"},
        {"role": "user", "content": "red shoes \ud83d under 50"},
    ]
    body = json.dumps({"model": "planner", "messages": messages})  # ASCII: the surrogate as "\ud83d"
    response = client.post(
        "/v1/chat/completions", content=body.encode(), headers={"content-type": "application/json"}
    )
    assert response.status_code == 200, response.text
    reply = response.json()
    assert reply["object"] == "chat.completion" and reply["choices"][0]["message"]["tool_calls"]
    assert "\\ud83d" in response.text  # the escape, where the query is echoed
