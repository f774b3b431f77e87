"""BM25 product search with ShoppingBench/ORO semantics: analyzer, index builder, engine and HTTP server.

Other modules should depend on the :class:`SearchEngine` protocol, not on :class:`SearchIndex` itself.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol, runtime_checkable

from shoparena.records.catalog import Product, ProductHit, ProductView
from shoparena.search.engine import SearchIndex
from shoparena.search.index import IndexFormatError, IndexStats, build_index


@runtime_checkable
class SearchEngine(Protocol):
    """What the environment, tools and scorers need from a search backend (spec §3)."""

    def find_product(
        self,
        q: str,
        page: int | str | None = 1,
        shop_id: str | None = None,
        price: str | None = None,
        sort: str | None = None,
        service: str | None = None,
    ) -> list[ProductHit]: ...

    def view_product_information(self, product_ids: str) -> list[ProductView]: ...

    def get_product_raw(self, product_ids: str) -> list[Product]: ...

    def get_product(self, product_id: str) -> Product | None: ...

    def __len__(self) -> int: ...

    def iter_products(self) -> Iterator[Product]: ...


__all__ = ["IndexFormatError", "IndexStats", "SearchEngine", "SearchIndex", "build_index"]
