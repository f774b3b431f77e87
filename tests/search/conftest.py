"""A tiny hand-built catalog (25 products, one duplicate id, one broken line), indexed once per session."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from shoparena.catalog.io import CatalogWriter
from shoparena.records.catalog import Product
from shoparena.search import IndexStats, SearchIndex, build_index


def make_product(
    pid: str,
    shop: str,
    title: str,
    price: float,
    sold: int = 0,
    service: tuple[str, ...] = (),
    sku: dict[str, dict[str, str]] | None = None,
    attrs: dict[str, list[str]] | None = None,
    **extra: str,
) -> Product:
    """A valid product with the fields tests care about; the rest defaulted."""
    return Product(
        product_id=pid,
        shop_id=shop,
        category="Test > Things",
        title=title,
        price=price,
        sold_count=sold,
        service=list(service),
        sku_options=sku or {},
        attributes=attrs or {},
        product_url=f"https://www.lazada.com.ph/products/-i{pid}.html",
        **extra,
    )


TINY: list[Product] = [
    make_product(
        "1001",
        "501",
        "Men's Running Shoes Lightweight Breathable",
        1299.0,
        500,
        ("official", "freeShipping"),
        sku={"1": {"size": "42", "color_family": "black"}, "2": {"size": "43", "color_family": "white"}},
        attrs={"brand": ["nike"], "material": ["mesh"]},
        short_description="Light and breathable.",
        description="A running shoe.",
    ),
    make_product("1002", "501", "Women Running Shoe Pink", 899.5, 1200, ("COD",)),
    make_product("1003", "502", "Kids Canvas Shoes", 350.0, 80),
    make_product("1004", "502", "Leather Shoes Formal Black", 1500.0, 40, ("freeShipping", "COD")),
    make_product("1005", "503", "Basketball Shoes High Cut", 2500.0, 10, ("official", "flashsale")),
    make_product("1006", "503", "Shoe Rack 5 Layer Organizer", 450.0, 3000, ("COD",)),
    make_product("1007", "504", "Stainless Steel Water Bottle 1L", 299.0, 700, ("freeShipping",)),
    make_product("1008", "504", "Water Bottle for Kids 500ml", 150.0, 90),
    make_product("1009", "505", "Wireless Bluetooth Earphones", 799.0, 2100, ("official",)),
    make_product(
        "1010", "505", "Bluetooth Speaker Portable Waterproof", 1299.0, 650, ("COD", "freeShipping")
    ),
    make_product("1011", "506", "Cotton T-Shirt Plain White", 199.0, 5000),
    make_product("1012", "506", "Graphic T-Shirt Oversized", 249.0, 800, ("COD",)),
    make_product("1013", "507", "USB-C Charger 3.5A Fast Charging", 399.0, 1500, ("flashsale",)),
    make_product("1014", "507", "Phone Case for iPhone 14", 99.0, 9000),
    make_product("1015", "508", "Rice Cooker 1.8L", 1899.0, 300, ("official",)),
    make_product("1016", "508", "Electric Kettle 1.7L", 899.0, 450),
    make_product("1017", "509", "Yoga Mat Non Slip 6mm", 499.0, 1000, ("freeShipping",)),
    make_product("1018", "509", "Dumbbell Set 10kg", 1599.0, 120),
    make_product("1019", "510", "Baby Diaper Large 40pcs", 599.0, 4000, ("COD",)),
    make_product("1020", "510", "Wet Wipes Unscented 80 sheets", 89.0, 6000),
    make_product("1021", "501", "Running Socks Ankle 5 pairs", 159.0, 2500, ("official", "COD")),
    make_product("1022", "502", "Shoe Cleaner Kit", 199.0, 60),
    make_product("1023", "511", "The Notebook Classic A5", 120.0, 30),
    make_product("1024", "511", "Ballpen Black 12pcs", 60.0, 700),
    make_product(
        "1025",
        "512",
        "Sneakers Shoes Unisex Casual",
        699.0,
        350,
        ("official", "freeShipping", "COD", "flashsale"),
    ),
]


@dataclass
class Built:
    catalog: Path
    index_dir: Path
    stats: IndexStats
    index: SearchIndex


def write_catalog(path: Path, products: list[Product], extra_raw: list[bytes] = ()) -> Path:
    with CatalogWriter(path) as writer:
        for product in products:
            writer.write(product)
        for raw in extra_raw:
            writer.write_raw(raw)
    return path


@pytest.fixture(scope="session")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Built:
    root = tmp_path_factory.mktemp("tiny")
    duplicate = make_product("1001", "999", "Duplicate Umbrella Should Not Be Indexed", 1.0)
    from shoparena.catalog.io import dump_index_line
    from shoparena.records.catalog import IndexLine

    catalog = write_catalog(
        root / "documents.jsonl",
        TINY,
        [dump_index_line(IndexLine.from_product(duplicate)), b'{"id": "broken"'],
    )
    stats = build_index(catalog, root / "index", progress=False)
    return Built(catalog, root / "index", stats, SearchIndex.open(root / "index"))
