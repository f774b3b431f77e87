"""Vocabularies of the synthetic catalog generator (:mod:`shoparena.catalog.synth`), loaded from package data.

Everything in ``_data/vocab.json`` is invented for shoparena in a Lazada-Philippines flavour: departments, a
category tree of 2-6 levels, product kinds (nouns, adjectives, attribute keys, SKU schemes, price level),
several hundred attribute keys with lower-case value pools, title noise and text templates. The file is read
once at import into plain tuples, dicts and frozen dataclasses, so generation stays fast and deterministic
(no sets are iterated anywhere; JSON object order is kept).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from typing import Any


@dataclass(frozen=True, slots=True)
class SkuScheme:
    """One SKU option dimension: alternative key spellings with weights, and the value pool."""

    keys: tuple[tuple[str, float], ...]
    pool: str


@dataclass(frozen=True, slots=True)
class Department:
    """A top-level family of categories; shops specialise in one or two."""

    weight: float
    empty_brand: float  # share of products with brand "" before the global scaling knob
    tail: tuple[str, ...]  # rarely used attribute keys (long tail)


@dataclass(frozen=True, slots=True)
class Kind:
    """A product kind: what the title is made of, which attributes and SKU options it carries, its price."""

    dept: str
    nouns: tuple[str, ...]
    adjs: tuple[str, ...]
    attrs: tuple[str, ...]
    sku: tuple[str, ...]  # SKU scheme names, at most two
    price: tuple[float, float]  # median PHP and log-normal sigma
    measures: tuple[str, ...] = ()
    extras: tuple[str, ...] = ()  # title phrases ("for Men", "with Free Gift")


def _tuples(value: Any) -> Any:
    """JSON lists back to (nested) tuples; objects keep their order."""
    if isinstance(value, list):
        return tuple(_tuples(v) for v in value)
    if isinstance(value, dict):
        return {k: _tuples(v) for k, v in value.items()}
    return value


def _load() -> dict[str, Any]:
    text = resources.files("shoparena.catalog").joinpath("_data/vocab.json").read_text(encoding="utf-8")
    return {name: _tuples(value) for name, value in json.loads(text).items()}


_DATA = _load()

#: Value pools shared by attributes and SKU options (all lower-case).
POOLS: dict[str, tuple[str, ...]] = _DATA["POOLS"]
#: Attribute key -> value pool.
ATTRIBUTES: dict[str, tuple[str, ...]] = _DATA["ATTRIBUTES"]
#: Attribute values meaning "no brand" (the generator writes them like shops do).
BRANDLESS_ATTRIBUTE_VALUES: tuple[str, ...] = _DATA["BRANDLESS_ATTRIBUTE_VALUES"]
#: Junk spellings some shops type into the ``brand`` field; the generator writes "" for these, as upstream.
JUNK_BRAND_SPELLINGS: tuple[str, ...] = _DATA["JUNK_BRAND_SPELLINGS"]
#: SKU option schemes: key spellings (weighted) and the value pool.
SKU_SCHEMES: dict[str, SkuScheme] = {k: SkuScheme(**v) for k, v in _DATA["SKU_SCHEMES"].items()}
#: Measures printed in titles (capacity, size, ...) and the attribute that mirrors them.
MEASURES: dict[str, tuple[tuple[str, ...], str]] = _DATA["MEASURES"]
#: Departments (top-level families).
DEPARTMENTS: dict[str, Department] = {k: Department(**v) for k, v in _DATA["DEPARTMENTS"].items()}
#: Product kinds.
KINDS: dict[str, Kind] = {k: Kind(**v) for k, v in _DATA["KINDS"].items()}
#: (category path, kind name) for every leaf of the synthetic tree.
LEAVES: tuple[tuple[str, str], ...] = _DATA["LEAVES"]
#: Syllables for invented brand names ("Kavora", "Zenlio", ...).
BRAND_HEADS: tuple[str, ...] = _DATA["BRAND_HEADS"]
BRAND_MIDS: tuple[str, ...] = _DATA["BRAND_MIDS"]
BRAND_TAILS: tuple[str, ...] = _DATA["BRAND_TAILS"]
BRAND_SUFFIXES: tuple[str, ...] = _DATA["BRAND_SUFFIXES"]
#: Syllables for invented product-line names ("Velkora 3", "Tazumi", ...): real titles carry series and
#: model names ("Redmi Note", "Air Max") that make a few title words single out one product among millions.
LINE_ONSETS: tuple[str, ...] = _DATA["LINE_ONSETS"]
LINE_VOWELS: tuple[str, ...] = _DATA["LINE_VOWELS"]
LINE_CODAS: tuple[str, ...] = _DATA["LINE_CODAS"]
LINE_MARKS: tuple[str, ...] = _DATA["LINE_MARKS"]
SHOP_WORDS: tuple[str, ...] = _DATA["SHOP_WORDS"]
#: Title noise.
TITLE_PREFIXES: tuple[str, ...] = _DATA["TITLE_PREFIXES"]
TITLE_SUFFIXES: tuple[str, ...] = _DATA["TITLE_SUFFIXES"]
PACK_FORMATS: tuple[str, ...] = _DATA["PACK_FORMATS"]
SEPARATORS: tuple[str, ...] = _DATA["SEPARATORS"]
#: Text templates.
SHORT_BULLETS: tuple[str, ...] = _DATA["SHORT_BULLETS"]
DESCRIPTION_SENTENCES: tuple[str, ...] = _DATA["DESCRIPTION_SENTENCES"]
IMAGE_HOSTS: tuple[str, ...] = _DATA["IMAGE_HOSTS"]
del _DATA
