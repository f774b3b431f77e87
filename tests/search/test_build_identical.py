"""The index build's fast paths change nothing: every file is byte-identical to the reference build's.

The reference is twofold: the sha256 of every file the build wrote before the fast paths existed (commit
d6d6f03, recorded below), and a build in this process with the fast paths switched off (the pydantic
``IndexLine`` for every line, the Unicode tokenizer for every non-ASCII text). The catalog mixes the
Lucene-parity catalog (a third of it non-ASCII) with hostile lines: HTML entities, upper-case SKU and
attribute text, junk brands, numbers as strings, booleans, duplicates, broken JSON, bad UTF-8, emoji, CJK,
Unicode spaces, so that both the fast path and every fallback to the pydantic model are taken.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import orjson
import pytest

from shoparena.search import build_index

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

#: sha256 of each file of the index of lucene_parity_catalog.jsonl + HOSTILE, built by commit d6d6f03.
GOLDEN: dict[str, str] = {
    "data.csc.index.npy": "8ebe4c3208472864c51a21f5cbf8b8eb234935bc449a7a59458dffadd237a8f9",
    "id_rank.npy": "325d9231fe8e9b7a7debcb5d8272ef03ab6f9a46a1a6725290210d5945ef376d",
    "ids_perm.npy": "75d277d21b2bf360b2dfc72ed817405b10c8069e4f5f6c132c0ed4c7adc565ee",
    "ids_sorted.npy": "30221ac2e27fb44a435fe99eacf1cbfd1e8b55a16c7e1821815831fc25ec31f1",
    "indices.csc.index.npy": "a8a1938f0e01b72bacf975dfa8a8b6285b6bd88e160e9b9f2c12d4069655e42a",
    "indptr.csc.index.npy": "b244451c9b7115706a876865bb9c4e4cf47fd3a0a5644b9e8faba6e5cb14c951",
    "norms.npy": "907ef84fee77ea1c907e8c76450de0dec52ae844908369e2d3e14911c2e555a0",
    "offsets.npy": "f4544cac93668902ef7d2af84e989e98f8ae946d634bfcf87aa2cdf6ee3e7ae9",
    "params.index.json": "0fd7537db39be4d090ff73f624341ac8ade285c334780ae1c597240ad3ecee34",
    "price.npy": "6b2fba051ff5373e62a735f4201eddf1e6a2cf625bd25f6beb3133d677360174",
    "products.deflate": "8a68bb84e18094dec4535b60623943f1785c14faf238e7eaeec83f88e2cf82a5",
    "products.zdict": "3637b01b6e26cfc4f23d9132d69e503aaa078a04739524c7e81398264b516a22",
    "quarantine.jsonl": "a3717aff5eabf5acc4805cdc21f4997864be465cd1d646b8b0c79b8d3d373d1f",
    "service.npy": "485c8312a06f63c3c0337135d82770832ca959d001009971942a806bfec92b00",
    "shop.npy": "eac831181f33561bbe1ae1acaf2c33a55a58dda6fa6a0bd7eb3ad046ef5327a0",
    "shops.json": "31d273a573b78e813d1d61dccb09594a35d626d9f11d36e57c94849f2ecc15f2",
    "sold_count.npy": "3c9f5c32b6208dd041f5ee528f684c8a81e9647dbbdfe5aae46a50bf8fde0762",
    "term_max.npy": "45eacb185fa7740f52e9f45221195a288c3383537a148235f041361b5c11c883",
    "terms.bin": "1fb34a6d8b493cee6e24fd270b118953319c026bfd4afa866f0e8b7dd4feb834",
    "terms_off.npy": "b7231d372f2547fa03ec3711791b5ba22aef8bbcf52faf8ed14a49a1fcf1ee56",
    "tf.csc.index.npy": "40b52e6e665c217606e053f5db7632240639e1c08f2898ab884076cddc4ba1c7",
    "vocab.index.json": "5b3100cc3fa9e21a121d08b3b1ff6b25b431cac4874fe6c6fefd3497dfa95bb1",
}


def _catalog(path: Path) -> Path:
    path.write_bytes((DATA / "lucene_parity_catalog.jsonl").read_bytes() + b"\n".join(HOSTILE) + b"\n")
    return path


def _hashes(index_dir: Path) -> dict[str, str]:
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(index_dir.iterdir())
        if p.is_file() and p.name != "manifest.json"  # holds paths and timings
    }


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _catalog(tmp_path_factory.mktemp("identical") / "documents.jsonl")


def test_index_files_equal_the_recorded_build(catalog: Path, tmp_path: Path) -> None:
    stats = build_index(catalog, tmp_path / "index", progress=False)
    assert stats.docs == 252 and stats.quarantined == 20  # both paths were taken
    assert _hashes(tmp_path / "index") == GOLDEN
