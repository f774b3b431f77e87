"""Shared fixtures of the synthesis and checks tests: one small catalog and its index per session."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from functools import lru_cache
from pathlib import Path

from shoparena.catalog.synth import SynthConfig, synthesize_catalog
from shoparena.records.catalog import Product
from shoparena.search import SearchIndex, build_index
from shoparena.suites.options import SynthOptions
from shoparena.suites.synth import SynthResult, synthesize_problems

CATALOG_PRODUCTS = 3000


@lru_cache(maxsize=1)
def small_index() -> tuple[Path, SearchIndex, list[Product]]:
    """A 3,000-product synthetic catalog, its index and its products (built once per test session)."""
    root = Path(tempfile.mkdtemp(prefix="shoparena-synth-tests-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    catalog = root / "catalog.jsonl"
    synthesize_catalog(SynthConfig(products=CATALOG_PRODUCTS, seed=3), catalog, progress=False)
    build_index(catalog, root / "index", progress=False)
    engine = SearchIndex.open(root / "index")
    return catalog, engine, list(engine.iter_products())


@lru_cache(maxsize=4)
def small_bank(seed: int = 42, n: int = 80) -> SynthResult:
    """A checked bank over :func:`small_index` (cached per seed and size)."""
    _, engine, products = small_index()
    return synthesize_problems(products, SynthOptions(n=n, seed=seed), engine=engine)
