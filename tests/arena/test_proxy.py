"""The trusted proxy: routes, inference checks, rate limit, trusted log, nonces."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from arena_helpers import FakeSearch
from fastapi.testclient import TestClient

from shoparena.arena.agent_runner import inference_counts
from shoparena.arena.proxy import ProxyConfig, ProxyState, create_proxy_app
from shoparena.arena.proxy_log import read_trusted_log
from shoparena.llm.scripted import ScriptedBackend, scripted_reply
from shoparena.llm.types import RateLimited
from shoparena.records.proxy_log import ProxyLogEntry


def build(tmp_path: Path, backend=None, **config):
    state = ProxyState(ProxyConfig(**config), unattributed_log=tmp_path / "unattributed.jsonl")
    ident = state.register("run/a/p1", "a", "p1", tmp_path / "p1.jsonl")
    client = TestClient(create_proxy_app(FakeSearch(n_hits=30), backend, state))
    client.headers["Authorization"] = f"Bearer {ident.token}"
    return client, state, ident


def log_of(ident):
    """The trusted log's lines, each checked to be a valid ProxyLogEntry (strict: nothing dropped)."""
    entries = [json.loads(line) for line in ident.log_path.read_text(encoding="utf-8").split("\n") if line]
    for entry in entries:
        ProxyLogEntry.model_validate(entry)
    return entries


def test_routes_and_trusted_log(tmp_path):
    client, _, ident = build(tmp_path)
    r = client.get("/search/find_product", params={"q": "red shoe", "page": "2"})
    assert r.status_code == 200 and r.json()[0]["product_id"] == "200"
    assert (
        client.get("/search/view_product_information", params={"product_ids": "1,2"}).json()[1]["product_id"]
        == "2"
    )
    assert client.get("/search/get_product_raw", params={"product_ids": "1"}).status_code == 403
    assert client.get("/admin").status_code == 403
    assert client.get("/search/view_product_information").status_code == 400
    entries = log_of(ident)
    assert [e["status_code"] for e in entries] == [200, 200, 403, 403, 400]
    first = entries[0]
    assert first["kind"] == "summary" and first["method"] == "GET" and first["path"] == "/search/find_product"
    assert first["params"] == {"q": "red+shoe", "page": 2}
    assert first["response_truncated"] is True and first["response_length"] > 2000
    assert first["result_product_ids"] == [str(200 + i) for i in range(30)]
    assert first["nonce_status"] == "missing"
    assert isinstance(entries[1]["response"], list)  # small responses are kept whole


def test_unknown_token_is_401_and_logged_apart(tmp_path):
    client, state, ident = build(tmp_path)
    r = client.get("/search/find_product", params={"q": "x"}, headers={"Authorization": "Bearer nope"})
    assert r.status_code == 401
    assert ident.log_path.read_text() == ""
    assert json.loads((tmp_path / "unattributed.jsonl").read_text())["status_code"] == 401
    state.unregister(ident.token)
    assert client.get("/search/find_product", params={"q": "x"}).status_code == 401


def test_inference_checks_in_order(tmp_path):
    backend = ScriptedBackend(default=scripted_reply("hello"))
    client, _, ident = build(tmp_path, backend, allowed_models=["good-model"])
    path = "/inference/chat/completions"
    assert client.post(path, content=b"").status_code == 400
    assert client.post(path, content=b"{not json").status_code == 400
    assert client.post(path, json={"messages": []}).status_code == 400
    assert client.post(path, json={"model": "good-model", "messages": [], "stream": True}).status_code == 400
    r = client.post(path, json={"model": "bad", "messages": []})
    assert r.status_code == 403 and r.json()["allowed_models"] == ["good-model"]
    r = client.post(path, json={"model": "good-model", "messages": [{"role": "user", "content": "secret"}]})
    assert r.status_code == 200 and r.json()["choices"][0]["message"]["content"] == "hello"
    assert client.get("/inference/models").status_code == 403
    entries = log_of(ident)
    assert "messages" not in entries[-2]["json_data"] and entries[-2]["json_data"]["model"] == "good-model"
    assert "secret" not in ident.log_path.read_text()
    # Envelope counts come from this trusted log, read back as typed entries.
    assert inference_counts(read_trusted_log(ident.log_path)) == (6, 5)


def test_backend_errors_map_to_status(tmp_path):
    client, _, _ = build(tmp_path, ScriptedBackend([RateLimited("slow down")]))
    r = client.post("/inference/chat/completions", json={"model": "m", "messages": []})
    assert r.status_code == 429 and r.json()["error"]["type"] == "RateLimited"
    client, _, _ = build(tmp_path, None)
    assert client.post("/inference/chat/completions", json={"model": "m", "messages": []}).status_code == 503


def test_rate_limit(tmp_path):
    client, _, _ = build(tmp_path, rate_per_s=0.001, burst=3)
    codes = [client.get("/search/find_product", params={"q": "x"}).status_code for _ in range(5)]
    assert codes == [200, 200, 200, 429, 429]


def test_truncated_inference_keeps_usage_and_tool_names(tmp_path):
    long_args = json.dumps({"q": "y" * 3000})
    reply = scripted_reply(
        "t" * 2500, tool_calls=[{"name": "find_product", "arguments": long_args}], completion_tokens=77
    )
    client, _, ident = build(tmp_path, ScriptedBackend([reply]))
    body = client.post("/inference/chat/completions", json={"model": "m", "messages": []}).json()
    entry = log_of(ident)[-1]
    assert entry["response_truncated"] is True and "response" not in entry
    assert entry["usage"]["completion_tokens"] == 77
    assert entry["parsed_tool_names"] == ["find_product"]
    assert list(body["oro_metadata"]["tool_nonces"]) == [body["choices"][0]["message"]["tool_calls"][0]["id"]]


@pytest.mark.parametrize("strict", [False, True])
def test_nonce_dispatch(tmp_path, strict):
    reply = scripted_reply("", tool_calls=[{"name": "find_product", "arguments": '{"q": "shoe", "page": 1}'}])
    client, _, ident = build(tmp_path, ScriptedBackend([reply]), strict_nonces=strict)
    body = client.post("/inference/chat/completions", json={"model": "m", "messages": []}).json()
    call = body["choices"][0]["message"]["tool_calls"][0]
    nonce = body["oro_metadata"]["tool_nonces"][call["id"]]
    raw = call["function"]["arguments"].encode()
    headers = {"X-Tool-Nonce": nonce, "X-Tool-Call-Id": call["id"]}
    ok = client.post("/search/find_product", content=raw, headers=headers)
    again = client.post("/search/find_product", content=raw, headers=headers)
    bad = client.post("/search/find_product", content=raw.replace(b"shoe", b"sock"), headers=headers)
    assert ok.status_code == 200 and ok.headers["X-Nonce-Status"] == "valid"
    assert [again.headers["X-Nonce-Status"], bad.headers["X-Nonce-Status"]] == ["replayed", "mismatch"]
    assert [again.status_code, bad.status_code] == ([403, 403] if strict else [200, 200])
    statuses = [e.get("nonce_status") for e in log_of(ident) if e["path"].startswith("/search/")]
    assert statuses == ["valid", "replayed", "mismatch"]
    assert log_of(ident)[1]["json_data"] == {"q": "shoe", "page": 1}


def test_served_model_overrides_the_agents_choice_and_the_allowlist_sees_it(tmp_path):
    backend = ScriptedBackend(default=scripted_reply("ok"))
    client, _, ident = build(tmp_path, backend, served_model="pinned/model", allowed_models=["pinned/model"])
    r = client.post("/inference/chat/completions",
                    json={"model": "deepseek-ai/DeepSeek-V3.2-TEE", "messages": [], "max_tokens": 4096})
    assert r.status_code == 200 and backend.requests[-1].model == "pinned/model"
    entry = log_of(ident)[-1]
    assert entry["model"] == "pinned/model" and entry["requested_model"] == "deepseek-ai/DeepSeek-V3.2-TEE"
    # The run's token cap (default 512) wins over the agent's larger ask; the call carries the call limit.
    assert backend.requests[-1].max_tokens == 512 and entry["json_data"]["max_tokens"] == 512
    assert backend.requests[-1].timeout_s == 120.0
    client, _, _ = build(tmp_path, backend, served_model="other", allowed_models=["pinned/model"])
    r = client.post("/inference/chat/completions", json={"model": "pinned/model", "messages": []})
    assert r.status_code == 403  # the allowlist applies to the mapped name, not the requested one


def test_an_over_cap_chunked_body_is_refused_while_it_streams(tmp_path):
    """Issue 52: the proxy buffered the whole body before its 10 MiB check (a 1.5 GiB chunked upload took
    the runner to 1,466 MiB first). Now it stops reading at the cap: counted in chunks received."""
    import asyncio

    state = ProxyState(ProxyConfig(max_body_bytes=1_000), unattributed_log=tmp_path / "unattributed.jsonl")
    ident = state.register("run/a/p1", "a", "p1", tmp_path / "p1.jsonl")
    app = create_proxy_app(FakeSearch(n_hits=3), None, state)
    received, sent = 0, []

    async def receive():
        nonlocal received
        received += 1
        if received > 10_000:  # the old code would read all of it: stop the test instead of the machine
            return {"type": "http.request", "body": b"", "more_body": False}
        return {"type": "http.request", "body": b"x" * 100, "more_body": True}

    async def send(message):
        sent.append(message)

    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http",
        "path": "/inference/chat/completions", "raw_path": b"/inference/chat/completions",
        "query_string": b"", "root_path": "", "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 80),
        "headers": [(b"host", b"127.0.0.1"), (b"authorization", f"Bearer {ident.token}".encode()),
                    (b"transfer-encoding", b"chunked"), (b"content-type", b"application/json")],
    }  # fmt: skip
    asyncio.run(app(scope, receive, send))
    assert sent[0]["status"] == 413
    assert received <= 12  # 1,000 bytes in 100-byte chunks, then one over: never the whole upload
    assert log_of(ident)[-1]["status_code"] == 413
