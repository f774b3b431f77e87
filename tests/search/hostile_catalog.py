"""A catalog that takes every branch of catalog line parsing: the Lucene-parity catalog plus hostile lines.

Shared by ``tests/search/test_build_identical.py`` and ``tests/catalog/test_fast_parse.py``.
"""

from __future__ import annotations

from pathlib import Path

import orjson

DATA = Path(__file__).parent / "data"

_BASE = {
    "product_id": "900001",
    "shop_id": "77",
    "brand": "Acme",
    "category": "Home > Kitchen > Cookware",
    "title": "Non Stick Frying Pan 24cm",
    "short_description": "",
    "description": "A pan.",
    "specification": "Size:24cm;Material:Aluminium",
    "price": 499.0,
    "sold_count": 12,
    "sku_options": {"1": {"size": "24cm"}, "2": {"size": "28cm"}},
    "attributes": {"brand": ["acme"], "material": ["aluminium"]},
    "main_image_url": "",
    "product_url": "https://www.lazada.com.ph/products/-i900001.html",
    "service": ["COD"],
}


def _line(n: int, contents: str | None = None, **changes: object) -> bytes:
    product = {**_BASE, "product_id": str(900000 + n), **changes}
    for key in [k for k, v in changes.items() if v is _DROP]:
        del product[key]
    text = contents if contents is not None else f"{product.get('title', '')}\n24cm 28cm\nacme aluminium"
    return orjson.dumps({"id": product["product_id"], "contents": text, "product": product})


_DROP = object()

#: Lines that take every branch: the fast path, each reason to fall back to the model, each error.
HOSTILE: list[bytes] = [
    _line(1),
    _line(2, title="Pots &amp; Pans Set"),
    _line(3, title="  Padded Title  "),
    _line(4, brand="No Brand"),
    _line(5, brand=None),
    _line(6, brand=" Acme "),
    _line(7, sku_options={"1": {"Color": "Red"}}),
    _line(8, sku_options={"2": {"size": "a"}, "1": {"size": "b"}}),
    _line(9, sku_options={str(i): {"size": str(i)} for i in range(1, 11)}),
    _line(10, attributes={"Brand": ["ACME"]}),
    _line(11, attributes={"pieces": [5, True]}),
    _line(12, price="12.5"),
    _line(13, price=True),
    _line(14, sold_count=3.0),
    _line(15, sold_count=-1),
    b'{"id":"900016","contents":"x","product":{"product_id":"900016","price":NaN}}',
    _line(17, service=["COD", "COD", "official"]),
    _line(18, service=["cod"]),
    orjson.dumps({"id": "1", "contents": "x", "product": {**_BASE, "product_id": "900019"}}),
    _line(20, extra_field="x"),
    _line(21, brand=_DROP, short_description=_DROP, sku_options=_DROP, service=_DROP),
    orjson.dumps({**_BASE, "product_id": "900022", "title": "Bare Product Object"}),
    _line(23, category="A > B > C > D > E > F > G"),
    _line(24, category="A >  > B"),
    b"[1, 2]",
    b'{"id":"900026","contents":"caf\xe9","product":{}}',
    _line(27, product_id="12a"),
    _line(28, title=""),
    _line(29, title="   "),
    _line(30, description="&lt;b&gt;bold&lt;/b&gt; &#39;quoted&#39;"),
    _line(
        31,
        contents="Men’s 🇵🇭 Flag 👍🏽 Shirt 日本語テキスト ภาษาไทย\u3000ÖL café's 3.5㎏ ΣΟΦΙΑΣ İstanbul"
        " __x__\nsize\u00a0xl 1\u20e3 #\ufe0f\u20e3\nx" + "é" * 300,
        title="Men’s Flag Shirt 日本語",
    ),
    b'{"id":"900032","contents":"x\\ud800y","product":{"product_id":"900032"}}',
    _line(1, title="Duplicate Of The First Line"),
    _line(34, sold_count=2**60),
    b'{"id":"900035","contents":"x","product":{"product_id":"900035","price":1e400}}',
    _line(36, price=1e16, sold_count=0),
    _line(37, price=0.1),
    _line(38, price=5e-324),
    _line(39, price=123456789.123),
    _line(40, price=7),
    b'{"id":"900041","id":"900041","contents":"dup keys","product":'
    + orjson.dumps({**_BASE, "product_id": "900041"})
    + b"}",
    _line(42, contents=""),
    _line(43, title="Tab\tInside", specification=" lead"),
    _line(44, attributes={"k": ["ǅ digraph", "ß"]}, sku_options={"1": {"c": "ΣΑΣ"}}),
    _line(45, title="x" * 2001),
    _line(46, title="Straße ǅ ΣΑΣ", contents="Straße ǅ ΣΑΣ ΌΣΟΣ\n\n"),
    b"   ",
    b'{"id":"900048"',
]


def write_hostile_catalog(path: Path) -> Path:
    """The Lucene-parity catalog's lines followed by :data:`HOSTILE`."""
    path.write_bytes((DATA / "lucene_parity_catalog.jsonl").read_bytes() + b"\n".join(HOSTILE) + b"\n")
    return path
