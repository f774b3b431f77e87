"""Deterministic synthetic catalog in the upstream ``documents.jsonl`` format (environment spec §2).

The real catalog (2.5 M Lazada-Philippines products) cannot be downloaded, so this module writes one with the
same schema and a similar statistical texture:

* a category tree of 2-6 levels (:data:`shoparena.catalog.vocab.LEAVES`), picked by department weight;
* shops with a Zipf-like size distribution, each specialised in one department, a few of them LazMall
  (``official``) brand stores; shops keep habits (title prefixes, casing, SKU key spelling, service rates);
* brands per category and per department, with a share of empty brands as upstream;
* noisy marketplace titles with invented product-line names and model codes, 0-9 SKU variants, long-tail
  attributes, PHP prices (log-normal per kind, rounded like marketplace prices), long-tailed ``sold_count``,
  often-empty descriptions;
* *families* of near-miss siblings: listings of one product template that differ only in brand, colour,
  price, service, pack or shop, so that search and constraint checking are not trivial.

Determinism: the output depends only on :class:`SynthConfig` (``workers`` excluded) and the Python version.
Products are generated in chunks of ``chunk_size``; chunk ``c`` draws from
``random.Random(f"{seed}:chunk:{c}")`` and the small shop/brand tables from their own seeded streams, so
a process pool yields the same bytes as a single process. Product ids come from a bijection of the global
product index, hence unique.
"""

from __future__ import annotations

import bisect
import gzip
import math
import os
import random
import re
import time
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from functools import lru_cache
from multiprocessing import get_context
from pathlib import Path
from typing import IO, Any

import numpy as np
import orjson
from pydantic import BaseModel, ConfigDict, Field, model_validator

from shoparena.catalog import vocab
from shoparena.jsonl import iter_raw_lines
from shoparena.records.catalog import SERVICES, Product
from shoparena.runs.machine import MIB, default_workers

#: Resident memory of one generator process (its tables and a chunk) for the default worker count.
SYNTH_WORKER_MEMORY_BYTES = 256 * MIB

# Product ids: 9-10 digits without a leading zero, from an affine bijection of the product index.
_ID_LOW = 100_000_000
_ID_SPAN = 9_900_000_000  # ids in [1e8, 1e10)
_ID_MULT = 2_654_435_761  # prime, coprime with _ID_SPAN, so the map is a bijection
_SHOP_LOW = 1_000_000
_SHOP_SPAN = 4_999_000_000
_SHOP_MULT = 2_246_822_519

#: Variant-count weights for 0..9 (about 40 % of products have no SKU options).
_VARIANT_WEIGHTS = (40.0, 15.0, 11.0, 9.0, 7.0, 5.5, 4.0, 3.0, 2.5, 3.0)
_VARIANT_CUM = tuple(sum(_VARIANT_WEIGHTS[: i + 1]) for i in range(len(_VARIANT_WEIGHTS)))

#: Kinds whose departments usually state a warranty attribute.
_WARRANTY_DEPTS = ("appliance", "electronics", "mobile", "tools")

# The product line sits mid-title (next to the noun), where most runs of a few title words include it.
_TITLE_ORDERS: tuple[tuple[str, ...], ...] = (
    ("prefix", "brand", "adjs", "line", "noun", "model", "measure", "color", "extra", "pack", "suffix"),
    ("prefix", "adjs", "noun", "line", "brand", "model", "measure", "extra", "color", "suffix"),
    ("brand", "line", "noun", "model", "adjs", "measure", "color", "pack", "extra", "suffix"),
    ("prefix", "brand", "model", "adjs", "color", "line", "noun", "measure", "pack", "suffix"),
    ("prefix", "adjs", "color", "line", "noun", "extra", "measure", "brand", "pack", "suffix"),
)
#: Share of families with a product-line name, and with a model code.
_LINE_SHARE = 0.8
_MODEL_SHARE = 0.5


class SynthConfig(BaseModel):
    """Knobs of the synthetic catalog. The bytes written depend on every field except ``workers``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    products: int = Field(10_000, ge=0, description="Number of products to write.")
    seed: int = Field(0, description="Master seed; the same seed gives a byte-identical file.")
    shops: int | None = Field(None, ge=1, description="Shop table size; default max(8, products // 16).")
    shop_zipf: float = Field(0.9, gt=0, description="Zipf exponent of shop sizes within a department.")
    brands_per_category: int = Field(10, ge=1, description="Minor brands invented per leaf category.")
    brands_per_department: int = Field(24, ge=1, description="Major brands shared across a department.")
    categories: int | None = Field(
        None, ge=1, description="Use only this many leaf categories (a seeded subset); default all."
    )
    empty_brand_share: float | None = Field(
        None, ge=0, le=1, description="Override the per-department share of products with brand ''."
    )
    family_mean: float = Field(3.0, ge=1, description="Mean number of near-miss siblings per product family.")
    chunk_size: int = Field(5_000, ge=1, description="Products per chunk (the unit of seeding and of work).")
    workers: int | None = Field(
        None,
        ge=1,
        description="Generator processes (default: one per usable CPU, within memory); does not change the "
        "output.",
    )

    @model_validator(mode="after")
    def _check_categories(self) -> SynthConfig:
        if self.categories is not None and self.categories > len(vocab.LEAVES):
            raise ValueError(
                f"SynthConfig.categories: at most {len(vocab.LEAVES)} leaf categories exist, "
                f"got {self.categories}"
            )
        return self

    def resolved_shops(self) -> int:
        return self.shops if self.shops is not None else max(8, self.products // 16)

    def n_chunks(self) -> int:
        return math.ceil(self.products / self.chunk_size) if self.products else 0


class SynthSummary(BaseModel):
    """What :func:`synthesize_catalog` wrote."""

    model_config = ConfigDict(extra="forbid")

    path: str
    products: int
    chunks: int
    workers: int
    shops_in_table: int
    categories: int
    bytes_written: int
    seconds: float
    products_per_second: float


# ------------------------------------------------------------------------------------------------------
# Tables shared by all chunks (small; rebuilt identically in every worker process).
# ------------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Shop:
    shop_id: str
    dept: str
    official: bool
    brand: str  # the brand an official store sells, else ""
    p_free: float
    p_cod: float
    prefixes: tuple[str, ...]
    suffix: str
    casing: int  # 0 as typed, 1 upper nouns, 2 all upper, 3 title case, 4 lower case
    color_key: str
    sep: str


@dataclass(frozen=True, slots=True)
class _Leaf:
    path: str
    kind: vocab.Kind
    brands: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class _Tables:
    leaves: tuple[_Leaf, ...]
    leaf_cum: tuple[float, ...]
    dept_brands: dict[str, tuple[str, ...]]
    shops: tuple[_Shop, ...]
    dept_shops: dict[str, tuple[int, ...]]
    dept_shop_cum: dict[str, tuple[float, ...]]
    dept_nonofficial: dict[str, tuple[int, ...]]


def _cum(weights: Iterable[float]) -> tuple[float, ...]:
    total, out = 0.0, []
    for w in weights:
        total += w
        out.append(total)
    return tuple(out)


def _pick_cum(rng: random.Random, cum: tuple[float, ...]) -> int:
    return bisect.bisect_right(cum, rng.random() * cum[-1])


def _weighted_key(rng: random.Random, keys: tuple[tuple[str, float], ...]) -> str:
    x = rng.random() * sum(w for _, w in keys)
    for key, w in keys:
        x -= w
        if x < 0:
            return key
    return keys[-1][0]


def _brand_name(rng: random.Random) -> str:
    name = rng.choice(vocab.BRAND_HEADS)
    if rng.random() < 0.55:
        name += rng.choice(vocab.BRAND_MIDS)
    name = (name + rng.choice(vocab.BRAND_TAILS)).capitalize()
    style = rng.random()
    if style < 0.12:
        name = name.upper()
    elif style < 0.22:
        name = f"{name} {rng.choice(vocab.BRAND_SUFFIXES)}"
    elif style < 0.27:
        name = name[:2].upper() + name[2:]
    return name


def _unique_brands(rng: random.Random, n: int, taken: dict[str, None]) -> tuple[str, ...]:
    out: list[str] = []
    for _ in range(n * 20):
        if len(out) == n:
            break
        name = _brand_name(rng)
        if name.lower() not in taken:
            taken[name.lower()] = None
            out.append(name)
    return tuple(out)


@lru_cache(maxsize=4)
def _tables(config_json: str) -> _Tables:
    """Build the category, brand and shop tables; cached per process (keyed by the config JSON)."""
    config = SynthConfig.model_validate_json(config_json)
    rng = random.Random(f"{config.seed}:tables")
    leaf_specs = list(vocab.LEAVES)
    if config.categories is not None:
        picked = sorted(rng.sample(range(len(leaf_specs)), config.categories))
        leaf_specs = [leaf_specs[i] for i in picked]

    taken: dict[str, None] = {}
    dept_brands = {
        dept: _unique_brands(rng, config.brands_per_department, taken) for dept in vocab.DEPARTMENTS
    }
    leaves = tuple(
        _Leaf(path, vocab.KINDS[kind], _unique_brands(rng, config.brands_per_category, taken))
        for path, kind in leaf_specs
    )
    per_dept = Counter(leaf.kind.dept for leaf in leaves)
    leaf_cum = _cum(vocab.DEPARTMENTS[leaf.kind.dept].weight / per_dept[leaf.kind.dept] for leaf in leaves)

    # Shops: each belongs to one department (weighted by the department's share of products present).
    depts = [d for d in vocab.DEPARTMENTS if per_dept.get(d)]
    dept_cum = _cum(vocab.DEPARTMENTS[d].weight for d in depts)
    shop_rng = random.Random(f"{config.seed}:shops")
    n_shops = config.resolved_shops()
    shop_offset = shop_rng.randrange(_SHOP_SPAN)
    shops: list[_Shop] = []
    members: dict[str, list[int]] = {d: [] for d in depts}
    for i in range(n_shops):
        dept = depts[_pick_cum(shop_rng, dept_cum)] if i >= len(depts) else depts[i]
        rank = len(members[dept])
        # Big shops are more often LazMall brand stores.
        official = shop_rng.random() < (0.35 if rank < 5 else 0.12 if rank < 50 else 0.03)
        brand = shop_rng.choice(dept_brands[dept]) if official else ""
        n_prefix = shop_rng.choice((0, 0, 1, 1, 1, 2, 2, 3))
        shops.append(
            _Shop(
                shop_id=str(_SHOP_LOW + (i * _SHOP_MULT + shop_offset) % _SHOP_SPAN),
                dept=dept,
                official=official,
                brand=brand,
                p_free=shop_rng.choice((0.0, 0.05, 0.2, 0.35, 0.6, 0.9)),
                p_cod=shop_rng.choice((0.0, 0.0, 0.1, 0.25, 0.4, 0.7)),
                prefixes=tuple(shop_rng.sample(vocab.TITLE_PREFIXES, n_prefix)),
                suffix=shop_rng.choice(vocab.TITLE_SUFFIXES) if shop_rng.random() < 0.3 else "",
                casing=shop_rng.choice((0, 0, 0, 0, 1, 2, 3, 3, 4)),
                color_key=_weighted_key(shop_rng, vocab.SKU_SCHEMES["color"].keys),
                sep=shop_rng.choice(vocab.SEPARATORS),
            )
        )
        members[dept].append(i)
    # With fewer shops than departments, departments without a shop of their own borrow all shops.
    dept_shops = {d: tuple(ix) or tuple(range(n_shops)) for d, ix in members.items()}
    # Zipf-like weights by rank inside a department; the offset keeps the tail from being all singletons.
    dept_shop_cum = {
        d: _cum(1.0 / (rank + 3.0) ** config.shop_zipf for rank in range(len(ix)))
        for d, ix in dept_shops.items()
    }
    dept_nonofficial = {
        d: tuple(i for i in ix if not shops[i].official) or ix for d, ix in dept_shops.items()
    }
    return _Tables(leaves, leaf_cum, dept_brands, tuple(shops), dept_shops, dept_shop_cum, dept_nonofficial)


# ------------------------------------------------------------------------------------------------------
# Families and siblings.
# ------------------------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Family:
    leaf: _Leaf
    noun: str
    adjs: list[str]
    model: str
    line: str
    measure: str
    measure_key: str
    pack: str
    extra: str
    color: str
    order: tuple[str, ...]
    core_attrs: dict[str, list[str]]
    sku_schemes: tuple[str, ...]
    sku_keys: list[str]
    n_variants: int
    price: float
    shop: int
    brand: str
    services: tuple[bool, bool, bool]  # freeShipping, COD, flashsale (official comes from the shop)
    texts: tuple[str, str, str]


def _model_code(rng: random.Random) -> str:
    letters = "ABCDEFGHJKLMNPRSTVWXZ"
    d = rng.randrange
    pattern = d(6)
    if pattern == 0:
        return f"{rng.choice(letters)}{d(10, 100)}"
    if pattern == 1:
        return f"{rng.choice(letters)}{rng.choice(letters)}-{d(100, 1000)}"
    if pattern == 2:
        return (
            f"{rng.choice(letters)}{d(1, 20)} {rng.choice(('Pro', 'Max', 'Plus', 'Lite', 'Mini', 'Ultra'))}"
        )
    if pattern == 3:
        return f"V{d(1, 9)}"
    if pattern == 4:
        return f"{rng.choice(letters)}{rng.choice(letters)}{d(100, 1000)}{rng.choice(letters)}"
    return f"{rng.choice(('TWS', 'KX', 'MX', 'GT', 'XR'))}-{rng.choice(letters)}{d(1, 100)}"


def _line_name(rng: random.Random) -> str:
    """An invented product-line name: 2-3 syllables, an optional coda, sometimes a generation mark.

    About 10 million spellings, so at 2.5 M products most names belong to one family (as real series names
    and model numbers nearly do).
    """
    word = "".join(
        rng.choice(vocab.LINE_ONSETS) + rng.choice(vocab.LINE_VOWELS) for _ in range(rng.choice((2, 3, 3)))
    )
    if rng.random() < 0.5:
        word += rng.choice(vocab.LINE_CODAS)
    name = word.capitalize()
    return f"{name} {rng.choice(vocab.LINE_MARKS)}" if rng.random() < 0.3 else name


def _round_price(rng: random.Random, p: float) -> float:
    """Marketplace rounding: charm prices (199, 1299), halves (349.5), fives and plain integers."""
    style = rng.random()
    if p < 1000:
        if style < 0.45:
            v = math.floor(p / 10) * 10 + 9
        elif style < 0.62:
            v = math.floor(p) + 0.5
        elif style < 0.85:
            v = round(p / 5) * 5
        else:
            v = round(p)
    elif style < 0.5:
        v = math.floor(p / 100) * 100 + 99
    elif style < 0.8:
        v = round(p / 50) * 50
    else:
        v = round(p)
    return float(max(v, 1))


def _pick_brand(rng: random.Random, t: _Tables, leaf: _Leaf, empty_share: float) -> str:
    if rng.random() < empty_share:
        return ""
    pool = leaf.brands if rng.random() < 0.6 else t.dept_brands[leaf.kind.dept]
    # Zipf over the pool: a few brands dominate each category.
    return pool[min(int(len(pool) * rng.random() ** 2.2), len(pool) - 1)]


def _pick_shop(rng: random.Random, t: _Tables, dept: str) -> int:
    return t.dept_shops[dept][_pick_cum(rng, t.dept_shop_cum[dept])]


def _attr_values(rng: random.Random, key: str) -> list[str]:
    pool = vocab.ATTRIBUTES[key]
    if len(pool) > 3 and rng.random() < 0.1:
        return rng.sample(pool, 2)
    return [rng.choice(pool)]


def _texts(
    rng: random.Random, kind: vocab.Kind, noun: str, adjs: list[str], attrs: dict[str, list[str]]
) -> tuple[str, str, str]:
    material = (attrs.get("material") or attrs.get("clothing_material") or ["quality material"])[0]
    fill = {"noun": noun.lower(), "adj": (adjs[0] if adjs else "modern").lower(), "material": material}
    short = ""
    r = rng.random()
    if r < 0.5:
        bullets = [b.format(**fill) for b in rng.sample(vocab.SHORT_BULLETS, rng.randint(2, 5))]
        short = (
            "<ul>" + "".join(f"<li>{b}</li>" for b in bullets) + "</ul>" if r < 0.25 else "\n".join(bullets)
        )
    desc = ""
    if rng.random() < 0.6:
        sentences = [s.format(**fill) for s in rng.sample(vocab.DESCRIPTION_SENTENCES, rng.randint(2, 6))]
        # Upstream descriptions hold raw U+0085 now and then; loaders must not split on it.
        joiner = "\u0085" if rng.random() < 0.02 else rng.choice((" ", "\n", "\n\n"))
        desc = joiner.join(sentences)
    spec = ""
    if rng.random() < 0.45:
        pairs = [f"{k.replace('_', ' ').title()}:{v[0].title()}" for k, v in attrs.items() if "&" not in k][
            :6
        ]
        pairs.append(f"Package Includes:1 x {noun}")
        spec = ";".join(pairs)
    return short, desc, spec


def _new_family(rng: random.Random, t: _Tables, config: SynthConfig) -> _Family:
    leaf = t.leaves[_pick_cum(rng, t.leaf_cum)]
    kind = leaf.kind
    dept = vocab.DEPARTMENTS[kind.dept]
    empty_share = dept.empty_brand if config.empty_brand_share is None else config.empty_brand_share
    noun = rng.choice(kind.nouns)
    adjs = rng.sample(kind.adjs, min(len(kind.adjs), rng.choice((1, 2, 2, 3, 3, 4))))
    measure, measure_key = "", ""
    if kind.measures and rng.random() < 0.55:
        formats, measure_key = vocab.MEASURES[rng.choice(kind.measures)]
        measure = rng.choice(formats)
    # Colour words go into titles mostly where colour is a real option (clothes, cases, bags).
    color = rng.choice(vocab.POOLS["color"]) if rng.random() < (0.5 if "color" in kind.sku else 0.08) else ""

    core: dict[str, list[str]] = {}
    n_core = min(len(kind.attrs), rng.choice((0, 1, 1, 2, 2, 2, 3, 3, 4, 5, 6)))
    for key in rng.sample(kind.attrs, n_core):
        core[key] = _attr_values(rng, key)
    if measure_key and rng.random() < 0.7:
        core[measure_key] = [measure.lower()]
    if rng.random() < 0.12 and dept.tail:
        key = rng.choice(dept.tail)
        core.setdefault(key, _attr_values(rng, key))
    model = _model_code(rng) if rng.random() < _MODEL_SHARE else ""
    line = _line_name(rng) if rng.random() < _LINE_SHARE else ""
    if model and rng.random() < 0.5:
        core["model"] = [model.lower()]
    elif rng.random() < 0.06:
        core["model"] = _attr_values(rng, "model")
    if rng.random() < 0.25:
        core["units_hb"] = _attr_values(rng, "units_hb")
    if kind.dept in _WARRANTY_DEPTS and rng.random() < 0.6:
        core["warranty_type"] = _attr_values(rng, "warranty_type")
    if rng.random() < 0.1:
        core["country_origin_hb"] = _attr_values(rng, "country_origin_hb")

    n_variants = bisect.bisect_right(_VARIANT_CUM, rng.random() * _VARIANT_CUM[-1])
    sku_schemes = kind.sku if n_variants else ()
    shop = _pick_shop(rng, t, kind.dept)
    brand = t.shops[shop].brand or _pick_brand(rng, t, leaf, empty_share)
    median, sigma = kind.price
    price = median * math.exp(rng.gauss(0.0, sigma))
    s = t.shops[shop]
    return _Family(
        leaf=leaf,
        noun=noun,
        adjs=adjs,
        model=model,
        line=line,
        measure=measure,
        measure_key=measure_key,
        pack=rng.choice(vocab.PACK_FORMATS) if rng.random() < 0.18 else "",
        extra=rng.choice(kind.extras) if kind.extras and rng.random() < 0.45 else "",
        color=color,
        order=rng.choice(_TITLE_ORDERS),
        core_attrs=core,
        sku_schemes=sku_schemes,
        sku_keys=[_weighted_key(rng, vocab.SKU_SCHEMES[name].keys) for name in sku_schemes],
        n_variants=n_variants,
        price=_round_price(rng, price),
        shop=shop,
        brand=brand,
        services=(rng.random() < s.p_free, rng.random() < s.p_cod, rng.random() < 0.1),
        texts=_texts(rng, kind, noun, adjs, core),
    )


def _case(word: str, casing: int, rng: random.Random) -> str:
    if casing == 1 and rng.random() < 0.5:
        return word.upper()
    if casing == 3:
        return word.title()
    if casing == 4:
        return word.lower()
    return word


def _title(rng: random.Random, fam: _Family, shop: _Shop, brand: str, color: str, pack: str) -> str:
    slots: dict[str, str] = {
        "prefix": " ".join(p for p in shop.prefixes if rng.random() < 0.8),
        "brand": brand if brand and rng.random() < 0.85 else "",
        "adjs": " ".join(fam.adjs),
        "noun": fam.noun,
        "model": fam.model,
        "line": fam.line,
        "measure": fam.measure,
        "color": color.title() if color else "",
        "extra": fam.extra,
        "pack": pack,
        "suffix": shop.suffix,
    }
    parts = [_case(slots[name], shop.casing, rng) for name in fam.order if slots[name]]
    # The shop's separator goes between the descriptive head and the tail tags; plain spaces elsewhere.
    head = " ".join(parts[:-2]) if len(parts) > 3 else " ".join(parts)
    tail = parts[-2:] if len(parts) > 3 else []
    title = shop.sep.join([head, *tail]) if tail else head
    if shop.casing == 2:
        title = title.upper()
    noise = rng.random()
    if noise < 0.05:
        title += rng.choice(("!!", "!!!", " ❤", " ~", "💯", " ✨"))
    elif noise < 0.08:
        title = title.replace(" ", "  ", 1)
    return re.sub(r"\s+\Z|\A\s+", "", title)


def _sku_options(rng: random.Random, fam: _Family, shop: _Shop, color: str) -> dict[str, dict[str, str]]:
    n = fam.n_variants
    if not n or not fam.sku_schemes:
        return {}
    keys = [
        shop.color_key if name == "color" else key
        for name, key in zip(fam.sku_schemes, fam.sku_keys, strict=True)
    ]
    pools = [vocab.POOLS[vocab.SKU_SCHEMES[name].pool] for name in fam.sku_schemes]
    if len(pools) == 1:
        values = rng.sample(pools[0], min(n, len(pools[0])))
        if color and fam.sku_schemes[0] == "color" and color not in values:
            values[0] = color
        return {str(i + 1): {keys[0]: v} for i, v in enumerate(values)}
    first = rng.sample(pools[0], min(rng.randint(1, n), len(pools[0])))
    if color and fam.sku_schemes[0] == "color" and color not in first:
        first[0] = color
    second = rng.sample(pools[1], min(math.ceil(n / len(first)), len(pools[1])))
    combos = [(a, b) for a in first for b in second][:n]
    return {str(i + 1): {keys[0]: a, keys[1]: b} for i, (a, b) in enumerate(combos)}


def _sibling(
    rng: random.Random, t: _Tables, config: SynthConfig, fam: _Family, first: bool, index: int, id_offset: int
) -> dict[str, Any]:
    """One product of a family: the template, changed along one or two axes for all but the first."""
    axes: tuple[str, ...] = ()
    if not first:
        axes = tuple(
            rng.sample(("brand", "color", "price", "service", "shop", "pack"), rng.choice((1, 1, 2)))
        )
    shop_i, brand, color, pack, price = fam.shop, fam.brand, fam.color, fam.pack, fam.price
    free, cod, flash = fam.services
    texts = fam.texts
    kind = fam.leaf.kind
    if "brand" in axes:
        empty = vocab.DEPARTMENTS[kind.dept].empty_brand
        brand = _pick_brand(
            rng, t, fam.leaf, empty if config.empty_brand_share is None else config.empty_brand_share
        )
        if t.shops[shop_i].official:
            shop_i = rng.choice(t.dept_nonofficial[kind.dept])
    if "shop" in axes:
        shop_i = _pick_shop(rng, t, kind.dept)
        if t.shops[shop_i].brand:
            brand = t.shops[shop_i].brand
        texts = _texts(rng, kind, fam.noun, fam.adjs, fam.core_attrs)
    shop = t.shops[shop_i]
    if "color" in axes:
        color = rng.choice(vocab.POOLS["color"])
    if "pack" in axes:
        pack = rng.choice(vocab.PACK_FORMATS)
    if "price" in axes:
        price = _round_price(rng, fam.price * rng.uniform(0.6, 1.5))
    if "service" in axes or "shop" in axes:
        free, cod, flash = rng.random() < shop.p_free, rng.random() < shop.p_cod, rng.random() < 0.1

    attrs: dict[str, list[str]] = {}
    if brand:
        if rng.random() < 0.85:
            attrs["brand"] = [brand.lower()]
    elif rng.random() < 0.5:
        attrs["brand"] = [rng.choice(vocab.BRANDLESS_ATTRIBUTE_VALUES)]
    attrs.update(fam.core_attrs)
    if color and rng.random() < 0.4:
        attrs["color_family"] = [color]
    sku = _sku_options(rng, fam, shop, color)
    service = [name for name, on in zip(SERVICES, (shop.official, free, cod, flash), strict=True) if on]
    sold = 0 if rng.random() < 0.28 else min(int(math.exp(rng.gauss(2.0, 1.7))), 250_000)
    if flash:
        sold = int(sold * (1.5 + rng.random() * 2))
    product_id = str(_ID_LOW + (index * _ID_MULT + id_offset) % _ID_SPAN)
    image = (
        f"{rng.choice(vocab.IMAGE_HOSTS)}{rng.getrandbits(128):032x}.{rng.choice(('jpg', 'jpg', 'png'))}"
        if rng.random() < 0.97
        else ""
    )
    short, desc, spec = texts
    return {
        "product_id": product_id,
        "shop_id": shop.shop_id,
        "brand": brand,
        "category": fam.leaf.path,
        "title": _title(rng, fam, shop, brand, color, pack),
        "short_description": short,
        "description": desc,
        "specification": spec,
        "price": price,
        "sold_count": sold,
        "sku_options": sku,
        "attributes": attrs,
        "main_image_url": image,
        "product_url": f"https://www.lazada.com.ph/products/-i{product_id}.html",
        "service": service,
    }


def _id_offset(seed: int) -> int:
    return random.Random(f"{seed}:ids").randrange(_ID_SPAN)


def _chunk_products(config: SynthConfig, chunk: int) -> list[dict[str, Any]]:
    """All product dicts of one chunk, in the upstream key order."""
    t = _tables(config.model_dump_json(exclude={"workers"}))
    rng = random.Random(f"{config.seed}:chunk:{chunk}")
    start = chunk * config.chunk_size
    stop = min(start + config.chunk_size, config.products)
    offset = _id_offset(config.seed)
    out: list[dict[str, Any]] = []
    p_more = 1.0 - 1.0 / config.family_mean  # geometric family sizes with the configured mean
    while start + len(out) < stop:
        fam = _new_family(rng, t, config)
        first = True
        while start + len(out) < stop:
            out.append(_sibling(rng, t, config, fam, first, start + len(out), offset))
            first = False
            if rng.random() >= p_more:
                break
    return out


def _dedup_join(values: Iterable[str]) -> str:
    return " ".join(dict.fromkeys(values))


def _index_line_bytes(product: dict[str, Any]) -> bytes:
    """Serialise like ``dump_index_line``: ``contents`` follows :func:`build_contents` exactly."""
    contents = "\n".join(
        [
            product["title"],
            _dedup_join(v for opts in product["sku_options"].values() for v in opts.values()),
            _dedup_join(v for vals in product["attributes"].values() for v in vals),
        ]
    )
    return orjson.dumps({"id": product["product_id"], "contents": contents, "product": product})


def _chunk_bytes(config_json: str, chunk: int) -> bytes:
    config = SynthConfig.model_validate_json(config_json)
    return b"".join(_index_line_bytes(p) + b"\n" for p in _chunk_products(config, chunk))


# ------------------------------------------------------------------------------------------------------
# Public API.
# ------------------------------------------------------------------------------------------------------


def iter_synth_products(config: SynthConfig) -> Iterator[Product]:
    """Yield the catalog's products in file order, validated, in this process (small catalogs, tests)."""
    for chunk in range(config.n_chunks()):
        for product in _chunk_products(config, chunk):
            yield Product.model_validate(product)


def iter_synth_lines(config: SynthConfig) -> Iterator[bytes]:
    """Yield the serialised index lines (with trailing newline) in file order, in this process."""
    config_json = config.model_dump_json()
    for chunk in range(config.n_chunks()):
        yield _chunk_bytes(config_json, chunk)


def _open_output(path: Path, *, compress: bool) -> IO[bytes]:
    raw = open(path, "wb")  # noqa: SIM115 - closed by the caller
    if compress:
        # mtime=0 and no file name in the header keep .gz output byte-identical across runs.
        return gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=3, mtime=0)
    return raw


def _ordered_chunks(config: SynthConfig) -> Iterator[bytes]:
    """Chunks in index order; with ``workers > 1`` a process pool computes a bounded window ahead."""
    config_json = config.model_dump_json()
    n = config.n_chunks()
    if (config.workers or 1) <= 1 or n <= 1:
        for chunk in range(n):
            yield _chunk_bytes(config_json, chunk)
        return
    workers = config.workers or 1
    window = 2 * workers  # bounds parent memory to a few chunks whatever the catalog size
    # spawn, not fork: the parent may run a progress-bar thread.
    with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn")) as pool:
        pending: dict[int, Future[bytes]] = {}
        next_submit = 0
        for chunk in range(n):
            while next_submit < n and next_submit < chunk + window:
                pending[next_submit] = pool.submit(_chunk_bytes, config_json, next_submit)
                next_submit += 1
            yield pending.pop(chunk).result()


def synthesize_catalog(
    config: SynthConfig,
    out_path: str | Path,
    *,
    progress: bool = True,
    on_chunk: Callable[[int], None] | None = None,
) -> SynthSummary:
    """Write the synthetic catalog to ``out_path`` (``.jsonl`` or ``.jsonl.gz``), streaming.

    Args:
        config: Generator knobs; the output depends on everything but ``workers``.
        out_path: Destination; written to a temporary sibling first and renamed when complete.
        progress: Show a Rich progress bar on stderr.
        on_chunk: Called with the number of products after each chunk is written.

    Returns:
        What was written and how fast.
    """
    if config.workers is None:
        config = config.model_copy(update={"workers": default_workers(SYNTH_WORKER_MEMORY_BYTES)})
    out = Path(out_path)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".part")
    started = time.perf_counter()
    written = 0
    bar = None
    if progress:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        bar = Progress(
            TextColumn("synth"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("products"),
            TimeRemainingColumn(),
            console=Console(stderr=True),
            transient=False,
        )
        task = bar.add_task("synth", total=config.products)
        bar.start()
    try:
        fh = _open_output(tmp, compress=out.suffix == ".gz")
        try:
            for chunk_no, data in enumerate(_ordered_chunks(config)):
                fh.write(data)
                done = min((chunk_no + 1) * config.chunk_size, config.products)
                if bar is not None:
                    bar.update(task, completed=done)
                if on_chunk is not None:
                    on_chunk(done)
                written = done
        finally:
            fh.close()
        os.replace(tmp, out)
    finally:
        if bar is not None:
            bar.stop()
        if tmp.exists():
            tmp.unlink()
    seconds = time.perf_counter() - started
    return SynthSummary(
        path=str(out),
        products=written,
        chunks=config.n_chunks(),
        workers=config.workers,
        shops_in_table=config.resolved_shops(),
        categories=config.categories or len(vocab.LEAVES),
        bytes_written=out.stat().st_size,
        seconds=round(seconds, 3),
        products_per_second=round(written / seconds, 1) if seconds > 0 else 0.0,
    )


# ------------------------------------------------------------------------------------------------------
# Texture statistics.
# ------------------------------------------------------------------------------------------------------


class CatalogStats(BaseModel):
    """Texture statistics of a catalog (synthetic or real); see ``docs/catalog.md``."""

    model_config = ConfigDict(extra="forbid")

    products: int
    shops: int
    shops_with_4_plus_share: float = Field(description="Share of shops in the catalog with >= 4 products.")
    products_in_4_plus_shops_share: float
    largest_shop: int
    categories: int
    category_depths: dict[int, int]
    brands: int
    empty_brand_share: float
    variants_histogram: dict[int, int]
    sku_keys: dict[str, int] = Field(description="Most frequent SKU option keys (products using them).")
    distinct_sku_keys: int
    attribute_keys: dict[str, int] = Field(description="Most frequent attribute keys (products using them).")
    distinct_attribute_keys: int
    attributes_per_product_mean: float
    service_rates: dict[str, float]
    any_service_share: float
    price_quantiles: dict[str, float]
    sold_count_quantiles: dict[str, float]
    zero_sold_share: float
    empty_text_shares: dict[str, float]
    title_chars_quantiles: dict[str, float]


_QS = (0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99)


def _quantiles(values: array[float]) -> dict[str, float]:
    if not values:
        return {}
    ordered = np.sort(np.frombuffer(values, dtype=np.float64))
    n = len(ordered)
    return {f"p{round(q * 100)}": float(ordered[min(n - 1, int(q * n))]) for q in _QS}


class _StatsAccumulator:
    def __init__(self) -> None:
        self.n = 0
        self.shops: Counter[str] = Counter()
        self.cats: Counter[str] = Counter()
        self.brands: Counter[str] = Counter()
        self.variants: Counter[int] = Counter()
        self.sku_keys: Counter[str] = Counter()
        self.attr_keys: Counter[str] = Counter()
        self.attr_total = 0
        self.services: Counter[str] = Counter()
        self.any_service = 0
        # Compact float arrays (8 bytes a product) so that a 2.5 M catalog's quantiles fit easily.
        self.prices: array[float] = array("d")
        self.sold: array[float] = array("d")
        self.title_chars: array[float] = array("d")
        self.zero_sold = 0
        self.empty: Counter[str] = Counter()

    def add(self, p: dict[str, Any]) -> None:
        self.n += 1
        self.shops[p["shop_id"]] += 1
        self.cats[p["category"]] += 1
        self.brands[p["brand"]] += 1
        self.variants[len(p["sku_options"])] += 1
        self.sku_keys.update(list(dict.fromkeys(k for opts in p["sku_options"].values() for k in opts)))
        self.attr_keys.update(list(p["attributes"]))
        self.attr_total += len(p["attributes"])
        self.services.update(p["service"])
        self.any_service += bool(p["service"])
        self.prices.append(float(p["price"]))
        self.sold.append(float(p["sold_count"]))
        self.zero_sold += p["sold_count"] == 0
        self.title_chars.append(float(len(p["title"])))
        for field in ("short_description", "description", "specification", "main_image_url"):
            self.empty[field] += p[field] == ""

    def result(self, top: int) -> CatalogStats:
        n = max(self.n, 1)
        shop_sizes = list(self.shops.values())
        big = [s for s in shop_sizes if s >= 4]
        return CatalogStats(
            products=self.n,
            shops=len(self.shops),
            shops_with_4_plus_share=round(len(big) / max(len(shop_sizes), 1), 4),
            products_in_4_plus_shops_share=round(sum(big) / n, 4),
            largest_shop=max(shop_sizes, default=0),
            categories=len(self.cats),
            category_depths=dict(sorted(Counter(c.count(" > ") + 1 for c in self.cats.elements()).items())),
            brands=len([b for b in self.brands if b]),
            empty_brand_share=round(self.brands.get("", 0) / n, 4),
            variants_histogram={k: self.variants.get(k, 0) for k in range(10)},
            sku_keys=dict(self.sku_keys.most_common(top)),
            distinct_sku_keys=len(self.sku_keys),
            attribute_keys=dict(self.attr_keys.most_common(top)),
            distinct_attribute_keys=len(self.attr_keys),
            attributes_per_product_mean=round(self.attr_total / n, 3),
            service_rates={s: round(self.services.get(s, 0) / n, 4) for s in SERVICES},
            any_service_share=round(self.any_service / n, 4),
            price_quantiles=_quantiles(self.prices),
            sold_count_quantiles=_quantiles(self.sold),
            zero_sold_share=round(self.zero_sold / n, 4),
            empty_text_shares={k: round(v / n, 4) for k, v in sorted(self.empty.items())},
            title_chars_quantiles=_quantiles(self.title_chars),
        )


def product_stats(products: Iterable[Product | dict[str, Any]], *, top: int = 15) -> CatalogStats:
    """Texture statistics of in-memory products."""
    acc = _StatsAccumulator()
    for p in products:
        acc.add(p.model_dump() if isinstance(p, Product) else p)
    return acc.result(top)


def synth_stats(path: str | Path, *, top: int = 15) -> CatalogStats:
    """Texture statistics of a catalog file (streamed; any upstream-format file, synthetic or real).

    Memory grows with the number of products (three floats each are kept for quantiles: 24 bytes).
    Lines that are not JSON objects with a ``product`` are skipped; validate with ``catalog validate``.
    """
    acc = _StatsAccumulator()
    for _, raw in iter_raw_lines(path):
        try:
            data = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
        if isinstance(data, dict) and isinstance(data.get("product"), dict):
            acc.add(data["product"])
    return acc.result(top)


_TOKEN = re.compile(r"[a-z0-9]+")


def near_miss_share(products: Iterable[Product], *, min_jaccard: float = 0.6) -> float:
    """Share of products with a *near-miss sibling*: another product of the same category whose title tokens
    overlap by Jaccard >= ``min_jaccard`` yet which differs in brand, price, shop, service or variants.

    Quadratic within a category; meant for catalogs up to some tens of thousands of products.
    """
    by_cat: dict[str, list[tuple[frozenset[str], tuple[Any, ...]]]] = {}
    total = 0
    for p in products:
        total += 1
        key = (p.brand, p.price, p.shop_id, tuple(p.service), orjson.dumps(p.sku_options))
        by_cat.setdefault(p.category, []).append((frozenset(_TOKEN.findall(p.title.lower())), key))
    hits = 0
    for items in by_cat.values():
        for i, (tokens, key) in enumerate(items):
            for j, (other, okey) in enumerate(items):
                if i != j and okey != key and len(tokens & other) >= min_jaccard * len(tokens | other):
                    hits += 1
                    break
    return hits / total if total else 0.0


def render_stats_markdown(stats: CatalogStats) -> str:
    """A compact Markdown table of :class:`CatalogStats` for docs and reports."""
    rows = [
        ("products", stats.products),
        ("shops (in catalog)", stats.shops),
        ("shops with >= 4 products", f"{stats.shops_with_4_plus_share:.1%}"),
        ("products in such shops", f"{stats.products_in_4_plus_shops_share:.1%}"),
        ("largest shop", stats.largest_shop),
        ("leaf categories / depth histogram", f"{stats.categories} / {stats.category_depths}"),
        ("brands / empty-brand share", f"{stats.brands} / {stats.empty_brand_share:.1%}"),
        ("SKU variants histogram (0-9)", stats.variants_histogram),
        ("distinct SKU keys", stats.distinct_sku_keys),
        ("top SKU keys", stats.sku_keys),
        ("distinct attribute keys", stats.distinct_attribute_keys),
        ("attributes per product (mean)", stats.attributes_per_product_mean),
        ("top attribute keys", stats.attribute_keys),
        ("service rates", stats.service_rates),
        ("any service", f"{stats.any_service_share:.1%}"),
        ("price quantiles (PHP)", stats.price_quantiles),
        ("sold_count quantiles", stats.sold_count_quantiles),
        ("zero sold_count", f"{stats.zero_sold_share:.1%}"),
        ("empty text shares", stats.empty_text_shares),
        ("title length quantiles (chars)", stats.title_chars_quantiles),
    ]
    lines = ["| statistic | value |", "|---|---|"]
    lines += [f"| {name} | {str(value).replace('|', '/')} |" for name, value in rows]
    return "\n".join(lines) + "\n"


__all__ = [
    "CatalogStats",
    "SynthConfig",
    "SynthSummary",
    "iter_synth_lines",
    "iter_synth_products",
    "near_miss_share",
    "product_stats",
    "render_stats_markdown",
    "synth_stats",
    "synthesize_catalog",
]
