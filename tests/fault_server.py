"""A local OpenAI-compatible server that misbehaves on purpose (a real socket, stdlib only).

Modes: ``500`` (every request HTTP 500), ``garbage`` (200 with a body that is not JSON), ``hang`` (answers
after ``hang_s``, past any short request timeout), ``surrogate`` (a valid completion whose tool argument
holds a lone surrogate, then recommend and terminate), ``ok`` (recommend and terminate at once), and
``mixed`` (each request one of the others but ``hang``, drawn by a generator seeded with ``seed``).
Malformed 200s (issue 52), each the server's fault: ``tokens_word`` (``usage.prompt_tokens`` "many"),
``tokens_huge`` (1e400), ``content_list`` / ``content_dict`` / ``content_int`` (``message.content`` of that
type), ``deep`` (a body nested 5,000 deep); and ``drip`` (a whole completion, one byte every ``hang_s / 4``
seconds: each read is quick, the whole answer never comes in time); ``flood`` (one reply of 100 searches,
then recommend and terminate); ``judge`` (a judge's verdict whose explanation holds a lone surrogate as a
JSON escape, as a model echoing a miner's text writes it).
"""

from __future__ import annotations

import json
import random
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def _completion(calls: list[tuple[str, str]]) -> dict[str, Any]:
    tool_calls = [
        {"id": f"c{i}", "type": "function", "function": {"name": name, "arguments": arguments}}
        for i, (name, arguments) in enumerate(calls)
    ]
    message = {"role": "assistant", "content": "", "tool_calls": tool_calls}
    return {
        "id": "x",
        "object": "chat.completion",
        "model": "fault-model",
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8},
    }


FINISH = [("recommend_product", '{"product_ids": "none"}'), ("terminate", '{"status": "success"}')]


def _malformed(mode: str) -> bytes | None:
    """The body of a malformed-200 mode, or None for another mode."""
    good = _completion(FINISH)
    if mode == "tokens_word":
        good["usage"]["prompt_tokens"] = "many"
    elif mode == "tokens_huge":
        return json.dumps(good).replace('"prompt_tokens": 5', '"prompt_tokens": 1e400').encode()
    elif mode.startswith("content_"):
        content = {"content_list": [{"type": "text", "text": "hi"}], "content_dict": {"text": "hi"}}
        good["choices"][0]["message"]["content"] = content.get(mode, 7)
    elif mode == "deep":
        good["choices"][0]["message"]["extra"] = "@"
        return json.dumps(good).replace('"@"', "[" * 5_000 + "]" * 5_000).encode()
    else:
        return None
    return json.dumps(good).encode()
SURROGATE_SEARCH = ("find_product", '{"q": "shoes \\ud83d", "page": 1}')


class FaultServer:
    """``with FaultServer("500") as server:`` serves on 127.0.0.1 at ``server.base_url``."""

    def __init__(self, mode: str, hang_s: float = 3.0, seed: int = 0) -> None:
        self.mode, self.hang_s, self.requests = mode, hang_s, 0
        self.models: list[str] = []  # the "model" each request named (its raw JSON text, not decoded)
        self.bodies: list[bytes] = []  # each request's body as received
        self.rng = random.Random(seed)
        self._draw = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                with owner._draw:
                    owner.requests += 1
                    owner.bodies.append(raw)
                    owner.models.append(raw.decode("utf-8").partition('"model": ')[2].partition(",")[0])
                    mode = owner.mode
                    if mode == "mixed":
                        mode = owner.rng.choice(["500", "garbage", "surrogate", "ok"])
                if mode == "hang":
                    time.sleep(owner.hang_s)
                malformed = _malformed(mode)
                if malformed is not None:
                    self._send(200, malformed)
                elif mode == "flood":
                    flood = [("find_product", json.dumps({"q": f"shoe {i}", "page": 1})) for i in range(100)]
                    self._send(200, json.dumps(_completion([*flood, *FINISH])).encode())
                elif mode == "drip":
                    self._drip(json.dumps(_completion(FINISH)).encode(), owner.hang_s / 4)
                elif mode == "judge":
                    good = _completion([])
                    del good["choices"][0]["message"]["tool_calls"]
                    verdict = json.dumps({"reasoning_quality": 0.8, "explanation": "echoes \ud83d"})
                    good["choices"][0]["message"]["content"] = verdict
                    self._send(200, json.dumps(good).encode())
                elif mode == "500":
                    self._send(500, b'{"error": "internal"}')
                elif mode == "garbage":
                    self._send(200, b"<html>502 bad gateway from a proxy</html>")
                elif mode == "surrogate":
                    self._send(200, json.dumps(_completion([SURROGATE_SEARCH, *FINISH])).encode())
                else:
                    self._send(200, json.dumps(_completion(FINISH)).encode())

            def _drip(self, body: bytes, gap_s: float) -> None:
                try:
                    self.send_response(200)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(body)))
                    self.end_headers()
                    for i in range(len(body)):
                        self.wfile.write(body[i : i + 1])
                        self.wfile.flush()
                        time.sleep(gap_s)
                except OSError:  # the client gave up
                    pass

            def _send(self, status: int, body: bytes) -> None:
                try:
                    self.send_response(status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except OSError:  # the client gave up (a timeout): nothing to answer
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> FaultServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
