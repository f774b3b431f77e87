"""``shoparena search ...``: query an index from the shell, or serve it over HTTP (upstream API)."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

search_app = typer.Typer(help="BM25 product search with ShoppingBench/ORO semantics.", no_args_is_help=True)
console = Console()

_INDEX_OPT = typer.Option(..., "--index", exists=True, file_okay=False, help="Index directory.")


@search_app.command("query")
def query(
    index: Path = _INDEX_OPT,
    q: str = typer.Option(..., "--q", help="Query text."),
    page: str = typer.Option("1", help="Page 1-5 (upstream rule: anything else gives no results)."),
    price: str | None = typer.Option(None, help="Price range 'lo-hi', open sides allowed ('100-', '-500')."),
    service: str | None = typer.Option(None, help="Comma list of official,freeShipping,COD,flashsale."),
    sort: str | None = typer.Option(None, help="order | priceasc | pricedesc (within the 50-hit window)."),
    shop_id: str | None = typer.Option(None, "--shop-id", help="Exact shop id."),
    retrieve_k: int = typer.Option(
        10_000, help="BM25 hits considered before filters (ORO 10000, SB 100000)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the upstream JSON list."),
) -> None:
    """Run one find_product call against an index."""
    from shoparena.search.engine import SearchIndex

    engine = SearchIndex.open(index, retrieve_k=retrieve_k)
    hits = engine.find_product_dicts(q, page, shop_id, price, sort, service)
    if as_json:
        typer.echo(json.dumps(hits, ensure_ascii=False))
        return
    table = Table(title=f"find_product q={q!r} page={page}")
    for column in ("product_id", "shop_id", "title", "price", "service", "sold_count"):
        table.add_column(
            column, overflow="fold", justify="right" if column in {"price", "sold_count"} else "left"
        )
    for hit in hits:
        table.add_row(
            hit["product_id"],
            hit["shop_id"],
            hit["title"],
            f"{hit['price']:.2f}",
            ",".join(hit["service"]),
            str(hit["sold_count"]),
        )
    console.print(table)
    if not hits:
        console.print("[yellow]no results[/yellow]")


@search_app.command("serve")
def serve(
    index: Path = _INDEX_OPT,
    host: str = typer.Option("127.0.0.1", help="Bind address."),
    port: int = typer.Option(5632, min=0, max=65535, help="Port (ORO uses 5632, ShoppingBench 5631)."),
    retrieve_k: int = typer.Option(
        10_000, help="BM25 hits considered before filters (ORO 10000, SB 100000)."
    ),
    workers: int = typer.Option(1, min=1, help="Server processes sharing the memory-mapped index."),
) -> None:
    """Serve /find_product, /view_product_information, /get_product_raw, /health and / over HTTP."""
    from shoparena.runs.ports import check_port_free
    from shoparena.search.server import serve as run_server

    check_port_free(host, port)  # in use: one line, exit 2 (uvicorn's own exit is 3)
    console.print(f"serving {index} on http://{host}:{port}", style="dim")
    run_server(index, host, port, retrieve_k=retrieve_k, workers=workers)


def register(app: typer.Typer) -> None:
    app.add_typer(search_app, name="search")
