"""Hostile HTTP requests get JSON errors with the right status, never a dropped connection."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import httpx
import orjson
import pytest
import uvicorn

from conftest import Built
from shoparena.search.engine import MAX_VIEW_IDS
from shoparena.search.server import MAX_HEADER_BYTES, MAX_QUERY_BYTES, create_app, server_config


@pytest.fixture(scope="module")
def port(tiny: Built) -> Iterator[int]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    server = uvicorn.Server(server_config(create_app(tiny.index), port=port, log_level="error"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    yield port
    server.should_exit = True
    thread.join(timeout=10)


def _raw(port: int, request: bytes) -> tuple[int, dict]:
    """Send raw bytes; return the status and JSON body of the full response (fails on a reset)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(request)
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), orjson.loads(body)


def test_large_header_is_431_json(port: int) -> None:
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as client:
        r = client.get("/find_product", params={"q": "shoes"}, headers={"X-Big": "b" * 200_000})
    assert r.status_code == 431 and str(MAX_HEADER_BYTES) in r.json()["error"]


def test_raw_oversized_requests_are_answered(port: int) -> None:
    big_q = b"GET /find_product?q=" + b"a" * 1_000_000 + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    status, body = _raw(port, big_q)
    assert status == 413 and str(MAX_QUERY_BYTES) in body["error"]
    big_h = b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"b" * 200_000 + b"\r\nConnection: close\r\n\r\n"
    assert _raw(port, big_h)[0] == 431


def test_garbage_request_is_a_json_400(port: int) -> None:
    status, body = _raw(port, b"NOT HTTP AT ALL\r\n\r\n")
    assert status == 400 and "invalid HTTP request" in body["error"]


def test_repeated_view_ids_are_deduplicated_and_capped(port: int) -> None:
    ids = b",".join([b"1001"] * 10_000)  # 50 KB of literal commas: under the query limit
    request = b"GET /view_product_information?product_ids=" + ids + b" HTTP/1.1\r\nHost: x\r\n"
    status, body = _raw(port, request + b"Connection: close\r\n\r\n")
    assert status == 200 and [i["product_id"] for i in body] == ["1001"]
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as client:
        many = ",".join([*(f"x{i}" for i in range(MAX_VIEW_IDS)), "1001"])
        assert client.get("/view_product_information", params={"product_ids": many}).json() == []
        assert client.get("/health").status_code == 200  # still serving
