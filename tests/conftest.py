"""Shared fixtures: a small hand-built catalog (exact expectations) and a synthetic one (planner and runs)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from shoparena.catalog.io import CatalogWriter
from shoparena.catalog.synth import SynthConfig, synthesize_catalog
from shoparena.records.catalog import Product
from shoparena.records.problem import Intent, Problem, RewardItem, Voucher
from shoparena.search import SearchIndex, build_index
from world import shop_world

__all__ = ["shop_world"]  # the one synthetic shop world (tests/world.py), for every test folder


def product(pid: str, shop: str, title: str, price: float, **kw: object) -> Product:
    return Product(
        product_id=pid,
        shop_id=shop,
        category="Test > Things",
        title=title,
        price=price,
        sold_count=kw.pop("sold", 0),
        **kw,
    )  # type: ignore[arg-type]


HAND = [
    product(
        "101",
        "9",
        "Nike Running Shoes Breathable",
        1299.0,
        service=["official", "freeShipping"],
        sku_options={
            "1": {"size": "42", "color_family": "black"},
            "2": {"size": "43", "color_family": "white"},
        },
        attributes={"brand": ["nike"], "material": ["mesh"]},
        brand="Nike",
        specification="secret:spec",
        description="A light running shoe.",
    ),
    product("102", "9", "Running Socks Ankle", 159.0, service=["COD"]),
    product("103", "8", "Leather Shoes Formal", 1500.0, service=["freeShipping", "COD"]),
    product("104", "8", "Stainless Water Bottle", 299.0),
    product("105", "7", "Kids Canvas Shoes", 350.0, service=["flashsale"]),
]


@dataclass
class Built:
    catalog: Path
    index: SearchIndex


def _build(root: Path, products: list[Product]) -> Built:
    catalog = root / "documents.jsonl"
    with CatalogWriter(catalog) as writer:
        for p in products:
            writer.write(p)
    build_index(catalog, root / "index", progress=False)
    return Built(catalog, SearchIndex.open(root / "index"))


@pytest.fixture(scope="session")
def hand(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return _build(tmp_path_factory.mktemp("hand"), HAND)


@pytest.fixture(scope="session")
def synth(tmp_path_factory: pytest.TempPathFactory) -> Built:
    root = tmp_path_factory.mktemp("synth")
    synthesize_catalog(SynthConfig(products=2000, seed=11), root / "documents.jsonl", progress=False)
    build_index(root / "documents.jsonl", root / "index", progress=False)
    return Built(root / "documents.jsonl", SearchIndex.open(root / "index"))


@pytest.fixture
def product_problem() -> Problem:
    return Problem(
        problem_id="p1",
        query="I want running shoes from nike with free shipping.",
        intent=Intent.PRODUCT,
        category="Product",
        reward=[
            RewardItem(product_id="101", title=["Nike Running Shoes Breathable"], service=["freeShipping"])
        ],
    )


@pytest.fixture
def voucher_problem() -> Problem:
    return Problem(
        problem_id="v1",
        query="Socks and a bottle.",
        intent=Intent.VOUCHER,
        reward=[
            RewardItem(product_id="102", title=["Running Socks Ankle"]),
            RewardItem(product_id="104", title=["Stainless Water Bottle"]),
        ],
        voucher=Voucher(
            voucher_type="platform",
            threshold=100,
            discount_type="fixed",
            face_value=50,
            price_after_voucher=408.0,
            budget=420,
        ),
    )
