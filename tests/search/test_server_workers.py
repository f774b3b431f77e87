"""``shoparena search serve --workers 2``: several processes serve the same memory-mapped index."""

from __future__ import annotations

import socket
import subprocess
import sys
import time

import httpx

from conftest import Built


def test_two_worker_processes_serve_the_index(tiny: Built) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    cmd = [
        sys.executable,
        "-m",
        "shoparena.cli.main",
        "search",
        "serve",
        "--index",
        str(tiny.index.index_dir),
    ]
    proc = subprocess.Popen([*cmd, "--port", str(port), "--workers", "2"], stderr=subprocess.PIPE)
    try:
        # A start-up wait, not a speed claim: two workers each import the app, slow on a loaded 2-core host.
        deadline = time.monotonic() + 180
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=5) as client:
            while True:
                try:
                    if client.get("/health").status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                if proc.poll() is not None:
                    tail = proc.stderr.read().decode()[-2000:]
                    raise AssertionError(f"server exited {proc.returncode}: {tail}")
                assert time.monotonic() < deadline, "server did not answer /health within 180 s"
                time.sleep(0.2)
            params = {"q": "running shoes", "page": "1"}
            hits = [client.get("/find_product", params=params).json() for _ in range(20)]
            assert all(h == hits[0] for h in hits) and hits[0]
        big = b"GET /find_product?q=" + b"a" * 100_000 + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
            conn.sendall(big)
            assert conn.recv(100).startswith(b"HTTP/1.1 413 ")  # the limits hold in every worker
    finally:
        proc.terminate()
        proc.wait(timeout=30)
