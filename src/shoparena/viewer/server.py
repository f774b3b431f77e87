"""``shoparena view``: a local page over run directories (stdlib HTTP server, no network, no JS bundle).

``GET /`` is the page with the row summaries inlined; ``GET /api/episode/<key>`` is one row's detail,
built when the page opens it (large runs stay light: conversations are read on demand). The page is plain
HTML, CSS and JavaScript written here, nothing loaded from elsewhere.
"""

from __future__ import annotations

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from typing import Any

from shoparena.integrations.config import host_allowed
from shoparena.records.unicode import escape_lone_surrogates
from shoparena.viewer.runs import LoadedRun, episode_detail, load_runs

#: Characters escaped in inline JSON: with no ``<`` no string can open or close a tag or a comment
#: (``</script>``, ``<!--<script>``), and U+2028/U+2029 end a line in older JavaScript parsers.
_INLINE_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def inline_json(data: Any) -> str:
    """``data`` as JSON safe to inline in a ``<script>`` element: the same value when parsed, and no
    string in it can change the page's structure. A lone surrogate (a miner's text) is written as the JSON
    escape ``\\ud83d``: the same value, and a page that encodes as UTF-8."""
    text = escape_lone_surrogates(json.dumps(data, ensure_ascii=False, default=str))
    for char, escape in _INLINE_ESCAPES.items():
        text = text.replace(char, escape)
    return text


def page_html(runs: list[LoadedRun]) -> str:
    """The page, with the runs and their rows inlined as JSON."""
    data = {
        "runs": [{"label": r.label, "kind": r.kind, "path": str(r.path), "rows": len(r.items)} for r in runs],
        "rows": [item.row.model_dump(mode="json") for r in runs for item in r.items],
    }
    payload = inline_json(data)
    template = resources.files("shoparena.viewer").joinpath("page.html").read_text(encoding="utf-8")
    return template.replace("/*DATA*/null", payload)


class ViewerServer:
    """Serve the page over ``runs`` on ``host:port`` (port 0: an ephemeral port) in a background thread."""

    def __init__(
        self,
        paths: list[str | Path],
        host: str = "127.0.0.1",
        port: int = 0,
        allowed_hosts: frozenset[str] = frozenset(),
    ) -> None:
        #: Host names served besides the local ones (the bind address when it is a name of its own).
        self.allowed_hosts = frozenset(
            {*allowed_hosts, *([host] if host not in ("0.0.0.0", "::", "") else [])}
        )
        self.runs = load_runs(paths)
        self.items = {item.row.key: item for run in self.runs for item in run.items}
        self.page = page_html(self.runs).encode("utf-8")
        self._lock = threading.Lock()
        viewer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # quiet
                return

            def _send(self, status: int, body: bytes, kind: str) -> None:
                self.send_response(status)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(body)))
                self.send_header("cache-control", "no-store")
                self.end_headers()
                self.wfile.write(body)

            def _error(self, status: int, message: str) -> None:
                body = json.dumps({"error": message, "status": status}).encode()
                self._send(status, body, "application/json")

            def do_GET(self) -> None:
                host = self.headers.get("host")
                if not host_allowed(host, viewer.allowed_hosts):  # a DNS-rebinding page names its own host
                    self._error(403, f"Host {str(host)[:100]!r} is not a local name")
                    return
                if self.path in ("/", "/index.html"):
                    self._send(200, viewer.page, "text/html; charset=utf-8")
                    return
                if self.path.startswith("/api/episode/"):
                    key = self.path.rsplit("/", 1)[1]
                    item = viewer.items.get(key)
                    if item is None:
                        self._error(404, f"no row {key!r}")
                        return
                    try:
                        with viewer._lock:  # scorers and indexes are opened lazily, once
                            detail = episode_detail(item)
                    except Exception as exc:  # a suite or run file gone or unreadable since the page loaded
                        line = f"row {key}: {type(exc).__name__}: {' '.join(str(exc).split())}"[:300]
                        sys.stderr.write(f"shoparena view: {line}\n")
                        self._error(500, line)
                        return
                    self._send(200, json.dumps(detail, default=str).encode(), "application/json")
                    return
                self._error(404, f"no page {self.path!r}")

        self.httpd = ThreadingHTTPServer((host, port), Handler)
        self.httpd.daemon_threads = True
        self.host, self.port = host, self.httpd.server_address[1]
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/"

    def start(self) -> ViewerServer:
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True, name="viewer")
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        self.httpd.serve_forever()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> ViewerServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


__all__ = ["ViewerServer", "inline_json", "page_html"]
