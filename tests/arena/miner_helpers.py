"""Shared helpers for the built-in miner and incentive tests: a small synthetic catalog, index and suites."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest


@dataclass(slots=True)
class ShopWorld:
    """A synthetic catalog with its BM25 index and a few ORO suites (with ground truth)."""

    index: Path
    mixed: Path  # 1 product + 1 shop problem
    product_only: Path  # 2 product problems
    engine: object


def _write_suite(problems: list, path: Path) -> Path:
    from shoparena.suites.loaders import write_oro_suite

    write_oro_suite(problems, path)
    return path


@pytest.fixture(scope="session")
def shop_world(tmp_path_factory: pytest.TempPathFactory) -> ShopWorld:
    from shoparena.catalog.synth import SynthConfig, synthesize_catalog
    from shoparena.records.problem import Intent
    from shoparena.search import SearchIndex
    from shoparena.search.index import build_index
    from shoparena.suites.options import SynthOptions
    from shoparena.suites.synth import synthesize_problems

    root = tmp_path_factory.mktemp("shop_world")
    synthesize_catalog(SynthConfig(products=600, seed=7), root / "catalog.jsonl", progress=False)
    build_index(root / "catalog.jsonl", root / "index", progress=False)
    engine = SearchIndex.open(root / "index")
    products = list(engine.iter_products())
    mixed = synthesize_problems(
        products, SynthOptions(n=2, seed=3, intents=(Intent.PRODUCT, Intent.SHOP)), engine=engine
    ).problems
    product_only = synthesize_problems(
        products, SynthOptions(n=2, seed=5, intents=(Intent.PRODUCT,)), engine=engine
    ).problems
    return ShopWorld(
        index=root / "index",
        mixed=_write_suite(mixed, root / "mixed.json"),
        product_only=_write_suite(product_only, root / "product_only.json"),
        engine=engine,
    )


def read_jsonl(path: Path) -> list[dict]:
    """JSON lines split on '\\n' only (catalog text may hold U+0085, which str.splitlines() breaks on)."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line.strip()]
