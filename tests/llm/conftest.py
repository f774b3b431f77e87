"""Fixtures: the scripted OpenAI-compatible server on a free 127.0.0.1 port (never a non-loopback address)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest

pytest.importorskip("fastapi")
uvicorn = pytest.importorskip("uvicorn")

from fake_openai_server import FakeServer, build_app  # noqa: E402


@pytest.fixture(scope="session")
def fake_server() -> Iterator[FakeServer]:
    state = FakeServer()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))  # loopback only, free port chosen by the OS
    port = sock.getsockname()[1]
    config = uvicorn.Config(build_app(state), log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline:
            raise RuntimeError("fake OpenAI server did not start")
        time.sleep(0.02)
    state.base_url = f"http://127.0.0.1:{port}/v1"
    yield state
    server.should_exit = True
    thread.join(timeout=5)
    sock.close()


@pytest.fixture()
def server(fake_server: FakeServer) -> FakeServer:
    fake_server.reset()
    return fake_server
