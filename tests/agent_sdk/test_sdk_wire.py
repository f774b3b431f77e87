"""The SDK's socket transport against a real local HTTP server: every way an answer can be framed, every way
a request can fail, and what the sandbox process imports."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from shoparena import agent_sdk
from shoparena.agent_sdk import wire

SEEN: list[dict] = []


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: object) -> None:  # quiet test output
        pass

    def _record(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        SEEN.append({"method": self.command, "path": self.path, "headers": dict(self.headers), "body": body})
        return body

    def do_GET(self) -> None:
        self._record()
        if self.path.startswith("/chunked"):
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for piece in (b'{"a": ', b"[1, 2]", b"}"):
                self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
            self.wfile.write(b"0\r\n\r\n")
            return
        if self.path.startswith("/until-close"):
            self.send_response(200)
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(b'{"closed": true}')
            self.close_connection = True
            return
        if self.path.startswith("/missing"):
            self._send(404, b'{"error": "no such thing"}')
            return
        self._send(200, json.dumps({"path": self.path}).encode())

    def do_POST(self) -> None:
        body = self._record()
        self._send(200, json.dumps({"echo": body.decode()}).encode())

    def do_DELETE(self) -> None:
        self._record()
        self._send(200, b"null")

    def _send(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture()
def server() -> Iterator[str]:
    SEEN.clear()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_framings_by_length_chunks_and_close(server: str) -> None:
    assert wire.request("GET", server + "/x?q=1", timeout=5)[::2] == (200, b'{"path": "/x?q=1"}')
    assert json.loads(wire.request("GET", server + "/chunked", timeout=5)[2]) == {"a": [1, 2]}
    assert json.loads(wire.request("GET", server + "/until-close", timeout=5)[2]) == {"closed": True}
    status, headers, body = wire.request("GET", server + "/missing", timeout=5)
    assert (status, headers["Content-Type"], json.loads(body)) == (
        404,
        "application/json",
        {"error": "no such thing"},
    )


def test_post_sends_body_headers_and_host(server: str) -> None:
    status, _, body = wire.request(
        "POST", server + "/p", body=b'{"k": 1}', headers={"X-Tool-Nonce": "n"}, timeout=5
    )
    assert (status, json.loads(body)) == (200, {"echo": '{"k": 1}'})
    sent = SEEN[-1]
    assert sent["headers"]["X-Tool-Nonce"] == "n" and sent["headers"]["Host"] == server[len("http://") :]
    assert sent["headers"]["Connection"] == "close" and sent["body"] == b'{"k": 1}'


def test_failures_are_oserrors() -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(OSError):
        wire.request("GET", f"http://127.0.0.1:{port}/", timeout=2)
    with socket.socket() as listener:  # accepts, never answers: a timeout
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        with pytest.raises(TimeoutError):
            wire.request("GET", f"http://127.0.0.1:{listener.getsockname()[1]}/", timeout=0.3)


def test_an_answer_that_is_not_http_is_a_wire_error() -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()

    def answer() -> None:
        conn, _ = listener.accept()
        conn.recv(4096)
        conn.sendall(b"SSH-2.0-OpenSSH\r\n\r\n")
        conn.close()

    threading.Thread(target=answer, daemon=True).start()
    with pytest.raises(wire.WireError, match="status line"):
        wire.request("GET", f"http://127.0.0.1:{listener.getsockname()[1]}/", timeout=5)
    listener.close()


def test_proxy_client_round_trip_over_the_wire(server: str) -> None:
    client = agent_sdk.ProxyClient(server, api_key="tok", max_retries=1, sleep=lambda s: None)
    assert client.find_product("red shoes", page=2) == {"path": "/search/find_product?q=red+shoes&page=2"}
    assert SEEN[-1]["headers"]["Authorization"] == "Bearer tok" and client.last_status == 200
    assert client.dispatch_tool("terminate", '{"status": "success"}', "n1", "c1") == {
        "echo": '{"status": "success"}'
    }
    assert SEEN[-1]["headers"]["X-Tool-Nonce"] == "n1" and SEEN[-1]["path"] == "/search/terminate"
    assert client.get("/missing") is None and client.last_status == 404


def test_env_client_maps_statuses(server: str) -> None:
    client = agent_sdk.EnvClient(server, timeout=5)
    assert client.health() == {"path": "/health"}
    assert client.close("s1") is None and SEEN[-1]["method"] == "DELETE"
    with pytest.raises(agent_sdk.EnvServerError, match="404: no such thing"):
        client._request("GET", "/missing")


def test_the_sandbox_import_stays_lean(tmp_path: Path) -> None:
    """What a miner pays at start: the SDK alone on the path (as the sandbox mounts it), no urllib.request,
    no http.client, ssl, email, logging or dataclasses."""
    sdk = Path(agent_sdk.__file__).parent
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); import shoparena.agent_sdk as s; "
        "s.tool_call_id('t', {});"
        "print(','.join(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('urllib', 'http', 'ssl', 'email', 'logging', 'dataclasses', 'hashlib'))))"
    )
    lib = tmp_path / "lib" / "shoparena"
    lib.mkdir(parents=True)
    (lib / "agent_sdk").symlink_to(sdk)
    out = subprocess.run(
        [sys.executable, "-I", "-S", "-c", code, str(tmp_path / "lib")], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().split(",") == ["urllib", "urllib.parse"]
