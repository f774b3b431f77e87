"""``shoparena view``: a local page over run directories (stdlib HTTP server, no network, no JS bundle).

``GET /`` is the page with the row summaries inlined; ``GET /api/episode/<key>`` is one row's detail,
built when the page opens it (large runs stay light: conversations are read on demand). The page is plain
HTML, CSS and JavaScript written here, nothing loaded from elsewhere.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from typing import Any

from shoparena.viewer.runs import LoadedRun, episode_detail, load_runs


def page_html(runs: list[LoadedRun]) -> str:
    """The page, with the runs and their rows inlined as JSON."""
    data = {
        "runs": [{"label": r.label, "kind": r.kind, "path": str(r.path), "rows": len(r.items)} for r in runs],
        "rows": [item.row.model_dump(mode="json") for r in runs for item in r.items],
    }
    payload = json.dumps(data, ensure_ascii=False).replace("</", "<\\/")
    template = resources.files("shoparena.viewer").joinpath("page.html").read_text(encoding="utf-8")
    return template.replace("/*DATA*/null", payload)


class ViewerServer:
    """Serve the page over ``runs`` on ``host:port`` (port 0: an ephemeral port) in a background thread."""

    def __init__(self, paths: list[str | Path], host: str = "127.0.0.1", port: int = 0) -> None:
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

            def do_GET(self) -> None:
                if self.path in ("/", "/index.html"):
                    self._send(200, viewer.page, "text/html; charset=utf-8")
                    return
                if self.path.startswith("/api/episode/"):
                    key = self.path.rsplit("/", 1)[1]
                    item = viewer.items.get(key)
                    if item is None:
                        self._send(404, json.dumps({"error": f"no row {key!r}"}).encode(), "application/json")
                        return
                    with viewer._lock:  # scorers and indexes are opened lazily, once
                        detail = episode_detail(item)
                    self._send(200, json.dumps(detail, default=str).encode(), "application/json")
                    return
                self._send(404, json.dumps({"error": f"no page {self.path!r}"}).encode(), "application/json")

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


__all__ = ["ViewerServer", "page_html"]
