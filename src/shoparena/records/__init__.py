"""Pydantic v2 records: the one currency from catalog to eval report. No I/O lives here."""

from shoparena.records.catalog import (
    SERVICES,
    IndexLine,
    Product,
    ProductHit,
    ProductView,
    build_contents,
)

__all__ = [
    "SERVICES",
    "IndexLine",
    "Product",
    "ProductHit",
    "ProductView",
    "build_contents",
]
