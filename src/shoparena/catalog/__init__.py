"""Catalog I/O (upstream ``documents.jsonl[.gz]``), validation with quarantine, synthetic generator."""

from shoparena.catalog.io import (
    CatalogLoadError,
    CatalogWriter,
    LoadSummary,
    QuarantinedLine,
    iter_products,
    read_catalog,
)

__all__ = [
    "CatalogLoadError",
    "CatalogWriter",
    "LoadSummary",
    "QuarantinedLine",
    "iter_products",
    "read_catalog",
]
