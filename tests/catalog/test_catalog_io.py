"""The upstream-format loader: keep/quarantine accounting, strict mode, gzip input, ``catalog validate``."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import orjson
import pytest
import typer
from typer.testing import CliRunner

from shoparena.catalog.io import CatalogLoadError, LoadSummary, iter_products, read_catalog
from shoparena.cli.catalog import register
from shoparena.records.catalog import build_contents

# Three hand-written lines in the exact upstream shape: {id, contents, product} with the product keys in
# upstream order, HTML entities in a title, a junk brand, upper-case SKU keys and a raw U+0085 (NEL).
_GOOD_PRODUCTS = [
    {
        "product_id": "3301894562",
        "shop_id": "500123877",
        "brand": "NoBrand",
        "category": "Home & Living > Kitchen & Dining > Cookware > Frying Pans",
        "title": "Non-Stick Frying Pan 24cm &amp; Glass Lid &quot;Granite&quot; Series",
        "short_description": "<ul><li>Granite coating</li></ul>",
        "description": "Heats evenly.\u0085Safe for gas and induction.",
        "specification": "Material:Aluminum;Size:24cm",
        "price": 349.5,
        "sold_count": 127,
        "sku_options": {
            "1": {"Color_Family": "Black", "SIZE": "24cm"},
            "2": {"Color_Family": "Grey", "SIZE": "28cm"},
        },
        "attributes": {"brand": ["nobrand"], "cookware_material": ["granite"]},
        "main_image_url": "https://ph-live.slatic.net/p/0f3a9c.jpg",
        "product_url": "https://www.lazada.com.ph/products/-i3301894562.html",
        "service": ["freeShipping", "COD"],
    },
    {
        "product_id": "591486800",
        "shop_id": "1000021",
        "brand": "Kavora",
        "category": "Mobiles & Tablets > Mobile Accessories",
        "title": "Kavora 20W PD Fast Charger Type-C",
        "short_description": "",
        "description": "",
        "specification": "",
        "price": 299.0,
        "sold_count": 0,
        "sku_options": {},
        "attributes": {},
        "main_image_url": "",
        "product_url": "https://www.lazada.com.ph/products/-i591486800.html",
        "service": [],
    },
    {
        "product_id": "4410867766",
        "shop_id": "77012",
        "brand": "",
        "category": "Motors > Motorcycle > Tires & Wheels > Tubeless Tires > Scooter > 14 Inch",
        "title": "Heavy Duty Tubeless Tire 80/90-14 &#x2F; Free Pito",
        "short_description": "Free pito and sealant",
        "description": "Thai made.\nFits Click, Beat, Mio.",
        "specification": "Tire Size:80/90-14",
        "price": 1250.0,
        "sold_count": 3541,
        "sku_options": {"1": {"size": "80/90-14"}},
        "attributes": {"motorcycle_make": ["honda", "yamaha"], "Tire_Size": ["80/90-14"]},
        "main_image_url": "https://ph-live.slatic.net/p/9b1d.jpg",
        "product_url": "https://www.lazada.com.ph/products/-i4410867766.html",
        "service": ["official", "freeShipping", "COD", "flashsale"],
    },
]


def _line(product: dict, **override: object) -> bytes:
    # Upstream `contents` is built from the raw (lower-cased) values; the loader does not require it to match.
    record = {"id": product["product_id"], "contents": "upstream contents", "product": product} | override
    return json.dumps(record, ensure_ascii=False).encode("utf-8")


def _bad_lines() -> list[tuple[bytes, str]]:
    good = _GOOD_PRODUCTS[1]
    no_category = {k: v for k, v in good.items() if k != "category"}
    return [
        (b'{"id": "1", "contents": "x", "product": {', "invalid JSON"),
        (_line(no_category), "product.category"),
        (_line(good | {"price": "cheap"}), "product.price"),
        (_line(good | {"service": ["Express"]}), "product.service"),
        (_line(good, id="999"), "product_id"),
        (b'["not", "an", "object"]', "JSON object"),
    ]


@pytest.fixture
def mixed_file(tmp_path: Path) -> Path:
    """Good lines 1, 3, 5 (lines 2 and 4 are blank); bad lines 6-11."""
    pan, charger, tire = (_line(p) for p in _GOOD_PRODUCTS)
    body = [pan, b"   ", charger, b"", tire] + [raw for raw, _ in _bad_lines()]
    path = tmp_path / "documents.jsonl"
    path.write_bytes(b"\n".join(body) + b"\n")
    return path


def test_good_lines_are_kept_and_normalised(mixed_file: Path) -> None:
    lines, summary = read_catalog(mixed_file)
    assert summary.read == 9  # blank lines are not records
    assert summary.kept == 3
    pan, charger, tire = (line.product for line in lines)
    assert pan.brand == ""  # junk brand blanked
    assert pan.title == 'Non-Stick Frying Pan 24cm & Glass Lid "Granite" Series'
    assert pan.sku_options == {
        "1": {"color_family": "black", "size": "24cm"},
        "2": {"color_family": "grey", "size": "28cm"},
    }
    assert "\u0085" in pan.description  # NEL is data, not a line break
    assert tire.title == "Heavy Duty Tubeless Tire 80/90-14 / Free Pito"
    assert tire.attributes["tire_size"] == ["80/90-14"]
    assert len(tire.category.split(" > ")) == 6
    assert tire.service == ["official", "freeShipping", "COD", "flashsale"]
    assert charger.price == 299.0 and charger.sku_options == {}
    assert lines[0].id == pan.product_id
    assert build_contents(pan).splitlines()[0] == pan.title


def test_read_equals_kept_plus_quarantined_and_quarantine_names_lines(
    mixed_file: Path, tmp_path: Path
) -> None:
    qpath = tmp_path / "quarantine.jsonl"
    _, summary = read_catalog(mixed_file, quarantine_path=qpath)
    assert summary.read == summary.kept + summary.quarantined
    assert summary.quarantined == 6
    assert sum(summary.reasons.values()) == 6
    records = [orjson.loads(x) for x in qpath.read_bytes().splitlines()]
    assert [r["line_no"] for r in records] == [6, 7, 8, 9, 10, 11]
    for record, (raw, needle) in zip(records, _bad_lines(), strict=True):
        assert needle in record["reason"], record
        assert record["raw"] == raw.decode()


def test_strict_mode_raises_naming_line_and_field(mixed_file: Path) -> None:
    with pytest.raises(CatalogLoadError, match=r"documents\.jsonl:6: invalid JSON"):
        read_catalog(mixed_file, strict=True)
    only_missing = mixed_file.with_name("missing.jsonl")
    only_missing.write_bytes(_line(_GOOD_PRODUCTS[0]) + b"\n" + _bad_lines()[1][0] + b"\n")
    with pytest.raises(CatalogLoadError, match=r"missing\.jsonl:2: product\.category"):
        list(iter_products(only_missing, strict=True))


def test_gzip_input(mixed_file: Path, tmp_path: Path) -> None:
    gz = tmp_path / "documents.jsonl.gz"
    gz.write_bytes(gzip.compress(mixed_file.read_bytes()))
    plain_lines, plain = read_catalog(mixed_file)
    gz_lines, packed = read_catalog(gz)
    assert (packed.read, packed.kept, packed.quarantined) == (plain.read, plain.kept, plain.quarantined)
    assert gz_lines == plain_lines


def test_bare_product_objects_are_accepted(tmp_path: Path) -> None:
    path = tmp_path / "bare.jsonl"
    path.write_bytes(b"\n".join(json.dumps(p).encode() for p in _GOOD_PRODUCTS) + b"\n")
    summary = LoadSummary(path=str(path))
    lines = list(iter_products(path, summary=summary))
    assert summary.kept == 3
    assert [line.contents for line in lines] == [build_contents(line.product) for line in lines]


def _cli() -> typer.Typer:
    app = typer.Typer()
    register(app)

    @app.callback()
    def _root() -> None:  # keeps "catalog" a sub-command even with a single group
        pass

    return app


def test_cli_validate(mixed_file: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    qpath = tmp_path / "q.jsonl"
    result = runner.invoke(
        _cli(), ["catalog", "validate", str(mixed_file), "--json", "--quarantine", str(qpath)]
    )
    assert result.exit_code == 1, result.output
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert (summary["read"], summary["kept"], summary["quarantined"]) == (9, 3, 6)
    assert len(qpath.read_bytes().splitlines()) == 6

    clean = tmp_path / "clean.jsonl.gz"
    clean.write_bytes(gzip.compress(b"\n".join(_line(p) for p in _GOOD_PRODUCTS) + b"\n"))
    result = runner.invoke(_cli(), ["catalog", "validate", str(clean), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout.strip().splitlines()[-1])["kept"] == 3


def test_cli_synth_matches_library(tmp_path: Path) -> None:
    from shoparena.catalog.synth import SynthConfig, synthesize_catalog

    out = tmp_path / "synth.jsonl"
    result = CliRunner().invoke(
        _cli(), ["catalog", "synth", "--products", "300", "--seed", "4", "--out", str(out), "--stats"]
    )
    assert result.exit_code == 0, result.output
    stats = json.loads(result.stdout.strip().splitlines()[-1])
    assert stats["products"] == 300
    ref = tmp_path / "ref.jsonl"
    synthesize_catalog(SynthConfig(products=300, seed=4), ref, progress=False)
    assert out.read_bytes() == ref.read_bytes()
    result = CliRunner().invoke(_cli(), ["catalog", "validate", str(out), "--json"])
    assert result.exit_code == 0 and json.loads(result.stdout.strip().splitlines()[-1])["kept"] == 300
