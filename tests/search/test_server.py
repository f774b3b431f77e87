"""The HTTP server over real loopback HTTP, and the CLI commands."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator

import httpx
import pytest
import typer
import uvicorn
from typer.testing import CliRunner

from conftest import Built
from shoparena.cli import catalog as catalog_cli
from shoparena.cli import search as search_cli
from shoparena.search.engine import HIT_FIELDS, VIEW_FIELDS
from shoparena.search.server import HEALTH, USAGE, create_app


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def base_url(tiny: Built) -> Iterator[str]:
    port = _free_port()
    config = uvicorn.Config(create_app(tiny.index), host="127.0.0.1", port=port, log_level="error")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline, "server did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        assert not thread.is_alive()


@pytest.fixture(scope="module")
def client(base_url: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=base_url, timeout=10) as c:
        yield c


def test_health_and_usage(client: httpx.Client) -> None:
    assert client.get("/health").json() == HEALTH == {"status": "healthy", "service": "search-server"}
    assert client.get("/").json() == USAGE
    assert list(USAGE) == ["/find_product", "/view_product_information"]


def test_find_product_shape_and_semantics(client: httpx.Client, tiny: Built) -> None:
    r = client.get("/find_product", params={"q": "shoes", "page": "1", "price": "-1000", "sort": "priceasc"})
    assert r.status_code == 200
    hits = r.json()
    assert isinstance(hits, list) and hits
    assert all(list(h) == list(HIT_FIELDS) for h in hits)
    assert [h["price"] for h in hits] == sorted(h["price"] for h in hits)
    assert hits == [h.model_dump() for h in tiny.index.find_product("shoes", 1, None, "-1000", "priceasc")]
    r = client.get("/find_product", params={"q": "shoes", "page": "1", "service": "official,freeShipping"})
    assert {h["product_id"] for h in r.json()} == {"1001", "1025"}
    r = client.get("/find_product", params={"q": "shoes", "page": "1", "shop_id": "502"})
    assert {h["shop_id"] for h in r.json()} == {"502"}


def test_a_missing_page_is_page_one(client: httpx.Client) -> None:
    first = client.get("/find_product", params={"q": "shoes", "page": "1"}).json()
    assert first and client.get("/find_product", params={"q": "shoes"}).json() == first
    assert "page=1" in client.get("/").json()["/find_product"]


@pytest.mark.parametrize("page", ["", "0", "6", "x", "-1"])
def test_invalid_page_is_empty_200(client: httpx.Client, page: str) -> None:
    params = {"q": "shoes", "page": page}
    r = client.get("/find_product", params=params)
    assert r.status_code == 200
    assert r.json() == []


def test_special_characters_only_is_empty(client: httpx.Client) -> None:
    r = client.get("/find_product", params={"q": '+-&|!(){}[]^"~*?:\\/', "page": "1"})
    assert (r.status_code, r.json()) == (200, [])


@pytest.mark.parametrize("path", ["/find_product?page=1", "/view_product_information", "/get_product_raw"])
def test_missing_required_parameter_is_422(client: httpx.Client, path: str) -> None:
    r = client.get(path)
    assert r.status_code == 422
    assert "detail" in r.json()


def test_view_and_raw(client: httpx.Client) -> None:
    r = client.get("/view_product_information", params={"product_ids": "1001, 1002,1014,1014,zzz"})
    items = r.json()
    assert [i["product_id"] for i in items] == ["1001", "1014"]
    assert all(list(i) == list(VIEW_FIELDS) for i in items)
    raw = client.get("/get_product_raw", params={"product_ids": "1025"}).json()
    assert len(raw) == 1 and raw[0]["title"] == "Sneakers Shoes Unisex Casual"
    assert list(raw[0])[:3] == ["product_id", "shop_id", "brand"]
    assert client.get("/get_product_raw", params={"product_ids": ""}).json() == []


def test_concurrent_http_requests(base_url: str) -> None:
    results: list[int] = []

    def worker() -> None:
        with httpx.Client(base_url=base_url, timeout=10) as c:
            for _ in range(10):
                results.append(len(c.get("/find_product", params={"q": "running shoes", "page": "1"}).json()))

    threads = [threading.Thread(target=worker) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 30 and len(set(results)) == 1 and results[0] > 0


# --- CLI ---------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def cli_app() -> typer.Typer:
    app = typer.Typer()
    catalog_cli.register(app)
    search_cli.register(app)
    return app


def test_cli_index_and_query(cli_app: typer.Typer, tiny: Built, tmp_path) -> None:
    runner = CliRunner()
    out = tmp_path / "ix"
    r = runner.invoke(cli_app, ["catalog", "index", str(tiny.catalog), "--out", str(out), "--json"])
    assert r.exit_code == 0, r.output
    stats = json.loads(r.stdout)
    assert stats["docs"] == 25 and stats["duplicates"] == 1
    r = runner.invoke(
        cli_app, ["search", "query", "--index", str(out), "--q", "shoes", "--sort", "priceasc", "--json"]
    )
    assert r.exit_code == 0, r.output
    hits = json.loads(r.stdout)
    assert [h["price"] for h in hits] == sorted(h["price"] for h in hits)
    assert {h["product_id"] for h in hits} == {h.product_id for h in tiny.index.find_product("shoes")}
    r = runner.invoke(cli_app, ["search", "query", "--index", str(out), "--q", "kettle"])
    assert r.exit_code == 0 and "Electric Kettle" in r.stdout
    r = runner.invoke(cli_app, ["search", "query", "--index", str(out), "--q", "kettle", "--page", "9"])
    assert r.exit_code == 0 and "no results" in r.stdout
