"""The search HTTP server, compatible with upstream's ``src/search_engine/server.py`` (spec §3.2-3.3).

Responses are bare JSON lists of projected product dicts. A missing required parameter is a 422 JSON error
(upstream answers 500; a client error is the honest code), while an invalid ``page`` is ``[]`` with 200,
as upstream. A missing ``page`` is page 1, as in the CLI and the environment's tool (upstream answered
``[]``, which read as "no results" to every client that left it out; ``/`` says so: ``page=1``).
Endpoints run on the event loop (a search takes about a millisecond, less than a thread-pool hop costs
under load); ``workers`` > 1 spreads requests over cores, each process mapping the same index.

Oversized requests get a JSON error instead of a dropped connection: a query string over
:data:`MAX_QUERY_BYTES` is 413, request headers over :data:`MAX_HEADER_BYTES` are 431, and a request head
over :data:`MAX_REQUEST_HEAD_BYTES` (which uvicorn cannot parse at all) is a JSON 400.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson
from fastapi import FastAPI, Query
from fastapi.responses import Response
from uvicorn.protocols.http.h11_impl import H11Protocol

from shoparena.search.engine import DEFAULT_RETRIEVE_K, SearchIndex

USAGE: dict[str, str] = {
    "/find_product": "q,page=1,shop_id,price,sort,service",
    "/view_product_information": "product_ids",
}
HEALTH: dict[str, str] = {"status": "healthy", "service": "search-server"}
DEFAULT_PORT = 5632
#: Longest accepted query string (``q`` plus the other parameters), in bytes: 413 above.
MAX_QUERY_BYTES = 64 * 1024
#: Largest accepted total of request header names and values, in bytes: 431 above.
MAX_HEADER_BYTES = 64 * 1024
#: What uvicorn buffers of one request head before giving up (its default, 16 KiB, dropped 1 MB queries
#: with a bare 400 and a reset connection); requests between the limits above and this get JSON errors.
MAX_REQUEST_HEAD_BYTES = 4 * 1024 * 1024


class RequestLimits:
    """Pure ASGI middleware answering oversized query strings (413) and headers (431) with JSON."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            query = len(scope.get("query_string", b""))
            headers = sum(len(k) + len(v) for k, v in scope.get("headers", ()))
            if query > MAX_QUERY_BYTES:
                await _send_error(
                    send, 413, f"query string of {query} bytes over the limit of {MAX_QUERY_BYTES}"
                )
                return
            if headers > MAX_HEADER_BYTES:
                await _send_error(
                    send, 431, f"request headers of {headers} bytes over the limit of {MAX_HEADER_BYTES}"
                )
                return
        await self.app(scope, receive, send)


async def _send_error(send: Any, status: int, message: str) -> None:
    body = orjson.dumps({"error": message, "status": status})
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class JsonErrorH11Protocol(H11Protocol):
    """uvicorn's h11 protocol, answering requests it cannot parse with a JSON 400 instead of plain text."""

    def send_400_response(self, msg: str) -> None:
        import h11

        limit = MAX_REQUEST_HEAD_BYTES
        body = orjson.dumps({"error": f"invalid HTTP request (malformed, or a head over {limit} bytes)"})
        headers = [(b"content-type", b"application/json"), (b"connection", b"close")]
        self.transport.write(
            self.conn.send(h11.Response(status_code=400, headers=headers, reason=b"Bad Request"))
        )
        self.transport.write(self.conn.send(h11.Data(data=body)))
        self.transport.write(self.conn.send(h11.EndOfMessage()))
        self.transport.close()


def server_options(**overrides: Any) -> dict[str, Any]:
    """uvicorn settings of the search server: request limits, JSON protocol errors, a deep backlog."""
    return {
        "log_level": "warning",
        "access_log": False,
        "http": JsonErrorH11Protocol,
        "h11_max_incomplete_event_size": MAX_REQUEST_HEAD_BYTES,
        "backlog": 4096,
        **overrides,
    }


def server_config(app: Any, host: str = "127.0.0.1", port: int = DEFAULT_PORT, **overrides: Any) -> Any:
    """The uvicorn config the search server runs with (see :func:`server_options`)."""
    import uvicorn

    return uvicorn.Config(app, host=host, port=port, **server_options(**overrides))


def _json(payload: Any) -> Response:
    return Response(content=orjson.dumps(payload), media_type="application/json")


def create_app(index: SearchIndex) -> FastAPI:
    """Build the FastAPI app serving ``index``.

    Args:
        index: An opened search index (shared by all worker threads).
    """
    app = FastAPI(title="shoparena search server", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.index = index
    app.add_middleware(RequestLimits)

    @app.get("/")
    async def usage() -> Response:
        return _json(USAGE)

    @app.get("/health")
    async def health() -> Response:
        return _json(HEALTH)

    @app.get("/find_product")
    async def find_product(
        q: str = Query(...),
        page: str = "1",
        shop_id: str | None = None,
        price: str | None = None,
        sort: str | None = None,
        service: str | None = None,
    ) -> Response:
        return _json(index.find_product_dicts(q, page, shop_id, price, sort, service))

    @app.get("/view_product_information")
    async def view_product_information(product_ids: str = Query(...)) -> Response:
        return _json(index.view_dicts(product_ids))

    @app.get("/get_product_raw")
    async def get_product_raw(product_ids: str = Query(...)) -> Response:
        return _json(index.raw_dicts(product_ids))

    return app


#: How worker processes (``serve(workers=N)``) learn which index to open.
INDEX_ENV = "SHOPARENA_SEARCH_INDEX"
RETRIEVE_K_ENV = "SHOPARENA_SEARCH_RETRIEVE_K"


def app_from_env() -> FastAPI:
    """The app of one worker process: opens the index named by :data:`INDEX_ENV` (memory-mapped, so
    workers share the index pages)."""
    index = SearchIndex.open(os.environ[INDEX_ENV], retrieve_k=int(os.environ[RETRIEVE_K_ENV]))
    return create_app(index)


def serve(
    index_dir: str | Path,
    host: str = "127.0.0.1",
    port: int = DEFAULT_PORT,
    *,
    retrieve_k: int = DEFAULT_RETRIEVE_K,
    log_level: str = "warning",
    workers: int = 1,
) -> None:
    """Open ``index_dir`` and serve it with uvicorn until interrupted.

    Args:
        workers: Server processes; more than one spreads requests over cores (each opens the same
            memory-mapped index).
    """
    import uvicorn

    if workers <= 1:
        index = SearchIndex.open(index_dir, retrieve_k=retrieve_k)
        uvicorn.Server(server_config(create_app(index), host, port, log_level=log_level)).run()
        return
    SearchIndex.open(index_dir, retrieve_k=retrieve_k)  # fail here, once, on a broken index
    os.environ[INDEX_ENV] = str(Path(index_dir).resolve())
    os.environ[RETRIEVE_K_ENV] = str(retrieve_k)
    app = "shoparena.search.server:app_from_env"
    uvicorn.run(
        app, host=host, port=port, **server_options(log_level=log_level, factory=True, workers=workers)
    )


__all__ = [
    "DEFAULT_PORT",
    "HEALTH",
    "MAX_HEADER_BYTES",
    "MAX_QUERY_BYTES",
    "MAX_REQUEST_HEAD_BYTES",
    "USAGE",
    "JsonErrorH11Protocol",
    "RequestLimits",
    "app_from_env",
    "create_app",
    "serve",
    "server_config",
    "server_options",
]
