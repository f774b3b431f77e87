"""The search HTTP server, compatible with upstream's ``src/search_engine/server.py`` (spec §3.2-3.3).

Responses are bare JSON lists of projected product dicts. A missing required parameter is a 422 JSON error
(upstream answers 500; a client error is the honest code), while an invalid ``page`` is ``[]`` with 200,
as upstream. Endpoints are synchronous so FastAPI runs them in its thread pool and cores are used.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
from fastapi import FastAPI, Query
from fastapi.responses import Response

from shoparena.search.engine import DEFAULT_RETRIEVE_K, SearchIndex

USAGE: dict[str, str] = {
    "/find_product": "q,page,shop_id,price,sort,service",
    "/view_product_information": "product_ids",
}
HEALTH: dict[str, str] = {"status": "healthy", "service": "search-server"}
DEFAULT_PORT = 5632


def _json(payload: Any) -> Response:
    return Response(content=orjson.dumps(payload), media_type="application/json")


def create_app(index: SearchIndex) -> FastAPI:
    """Build the FastAPI app serving ``index``.

    Args:
        index: An opened search index (shared by all worker threads).
    """
    app = FastAPI(title="shoparena search server", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.index = index

    @app.get("/")
    def usage() -> Response:
        return _json(USAGE)

    @app.get("/health")
    def health() -> Response:
        return _json(HEALTH)

    @app.get("/find_product")
    def find_product(
        q: str = Query(...),
        page: str | None = None,
        shop_id: str | None = None,
        price: str | None = None,
        sort: str | None = None,
        service: str | None = None,
    ) -> Response:
        return _json(index.find_product_dicts(q, page, shop_id, price, sort, service))

    @app.get("/view_product_information")
    def view_product_information(product_ids: str = Query(...)) -> Response:
        return _json(index.view_dicts(product_ids))

    @app.get("/get_product_raw")
    def get_product_raw(product_ids: str = Query(...)) -> Response:
        return _json(index.raw_dicts(product_ids))

    return app


def serve(
    index_dir: str | Path,
    host: str = "127.0.0.1",
    port: int = DEFAULT_PORT,
    *,
    retrieve_k: int = DEFAULT_RETRIEVE_K,
    log_level: str = "warning",
) -> None:
    """Open ``index_dir`` and serve it with uvicorn until interrupted."""
    import uvicorn

    index = SearchIndex.open(index_dir, retrieve_k=retrieve_k)
    uvicorn.run(create_app(index), host=host, port=port, log_level=log_level, access_log=False)


__all__ = ["DEFAULT_PORT", "HEALTH", "USAGE", "create_app", "serve"]
