"""A local OpenAI-compatible server that misbehaves on purpose (a real socket, stdlib only).

Modes: ``500`` (every request HTTP 500), ``garbage`` (200 with a body that is not JSON), ``hang`` (answers
after ``hang_s``, past any short request timeout), ``surrogate`` (a valid completion whose tool argument
holds a lone surrogate, then recommend and terminate), ``ok`` (recommend and terminate at once), and
``mixed`` (each request one of the others but ``hang``, drawn by a generator seeded with ``seed``).
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
SURROGATE_SEARCH = ("find_product", '{"q": "shoes \\ud83d", "page": 1}')


class FaultServer:
    """``with FaultServer("500") as server:`` serves on 127.0.0.1 at ``server.base_url``."""

    def __init__(self, mode: str, hang_s: float = 3.0, seed: int = 0) -> None:
        self.mode, self.hang_s, self.requests = mode, hang_s, 0
        self.rng = random.Random(seed)
        self._draw = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length") or 0))
                with owner._draw:
                    owner.requests += 1
                    mode = owner.mode
                    if mode == "mixed":
                        mode = owner.rng.choice(["500", "garbage", "surrogate", "ok"])
                if mode == "hang":
                    time.sleep(owner.hang_s)
                if mode == "500":
                    self._send(500, b'{"error": "internal"}')
                elif mode == "garbage":
                    self._send(200, b"<html>502 bad gateway from a proxy</html>")
                elif mode == "surrogate":
                    self._send(200, json.dumps(_completion([SURROGATE_SEARCH, *FINISH])).encode())
                else:
                    self._send(200, json.dumps(_completion(FINISH)).encode())

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
