"""The synthetic catalog's product-line names: what lets a few title words single out one product."""

from __future__ import annotations

import random
from collections import Counter

from shoparena.catalog.synth import SynthConfig, _line_name, iter_synth_products
from shoparena.search.analysis import analyze


def test_line_names_are_diverse_and_deterministic() -> None:
    names = [_line_name(random.Random(f"t:{i}")) for i in range(20_000)]
    assert len(set(names)) > 0.97 * len(names)
    assert names[:50] == [_line_name(random.Random(f"t:{i}")) for i in range(50)]


def test_most_titles_hold_a_rare_term() -> None:
    products = list(iter_synth_products(SynthConfig(products=3000, seed=3)))
    terms = [set(analyze(p.title)) for p in products]
    df = Counter(t for ts in terms for t in ts)
    # Rare within the sample: shared by at most a family's handful of siblings.
    rare = sum(1 for ts in terms if any(df[t] <= 12 for t in ts))
    assert rare / len(products) > 0.9  # 0.82 without product-line names
