"""The one synthetic shop world of the tests (arena, corpus, llm): a 600-product catalog, its BM25 index and
a few ORO suites with ground truth, built once per session (the ``shop_world`` fixture of tests/conftest.py).

Also :data:`SHARED_DATA`, the shared upstream files (ORO suites, ShoppingBench tests, SN15 rows), found
relative to the repository: ``shared/data`` inside it (the device checkout) or beside it (``/work/shared``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _shared_data() -> Path:
    # A clean clone may live anywhere (CI clones into a temporary directory): SHOPARENA_SHARED_DATA, then the
    # checkout's neighbours, then the project's shared folder on this machine.
    env = os.environ.get("SHOPARENA_SHARED_DATA")
    candidates = [Path(env)] if env else []
    candidates += [REPO / "shared" / "data", REPO.parent / "shared" / "data", Path("/work/shared/data")]
    for candidate in candidates:
        if candidate.is_dir():
            return candidate
    return REPO.parent / "shared" / "data"  # absent: the tests that need it skip or say so


SHARED_DATA = _shared_data()


@dataclass(slots=True)
class ShopWorld:
    """A synthetic catalog with its BM25 index and a few ORO suites (with ground truth)."""

    index: Path
    mixed: Path  # 1 product + 1 shop problem
    product_only: Path  # 2 product problems
    bank: Path  # 4 product / shop problems (the corpus's firehose bank)
    engine: object


@pytest.fixture(scope="session")
def shop_world(tmp_path_factory: pytest.TempPathFactory) -> ShopWorld:
    from shoparena.catalog.synth import SynthConfig, synthesize_catalog
    from shoparena.records.problem import Intent
    from shoparena.search import SearchIndex
    from shoparena.search.index import build_index
    from shoparena.suites.loaders import write_oro_suite
    from shoparena.suites.options import SynthOptions
    from shoparena.suites.synth import synthesize_problems

    root = tmp_path_factory.mktemp("shop_world")
    synthesize_catalog(SynthConfig(products=600, seed=7), root / "catalog.jsonl", progress=False)
    build_index(root / "catalog.jsonl", root / "index", progress=False)
    engine = SearchIndex.open(root / "index")
    products = list(engine.iter_products())
    suites = {
        "mixed": SynthOptions(n=2, seed=3, intents=(Intent.PRODUCT, Intent.SHOP)),
        "product_only": SynthOptions(n=2, seed=5, intents=(Intent.PRODUCT,)),
        "bank": SynthOptions(n=4, seed=3, intents=(Intent.PRODUCT, Intent.SHOP)),
    }
    for name, options in suites.items():
        write_oro_suite(synthesize_problems(products, options, engine=engine).problems, root / f"{name}.json")
    return ShopWorld(
        index=root / "index",
        mixed=root / "mixed.json",
        product_only=root / "product_only.json",
        bank=root / "bank.json",
        engine=engine,
    )

