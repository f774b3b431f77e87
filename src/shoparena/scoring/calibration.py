"""Calibrate a non-reference title-similarity backend on real titles (numbers in docs/scoring.md).

Positive pairs are a title against noisy rewrites of itself (dropped words, local reordering, case changes);
negative pairs are near-miss siblings: the closest *other* real title (same product family) and the title with
its brand, model number or colour swapped. Thresholds per profile:

Thresholds are chosen against the sibling negatives (see :func:`build_pairs`):

* ``shoppingbench`` (upstream 0.5, lenient): the highest threshold that still accepts >= 97.5 % of positives;
* ``strict`` (upstream 0.7): the threshold with the best balanced accuracy;
* ``web`` (upstream 0.8): the lowest threshold that rejects >= 97.5 % of negatives.

Run ``python benchmarks/similarity_calibration.py`` to reprint the table.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

_COLOURS = (
    "black",
    "white",
    "red",
    "blue",
    "green",
    "pink",
    "grey",
    "gray",
    "yellow",
    "brown",
    "purple",
    "gold",
    "silver",
    "orange",
    "beige",
    "navy",
)
_NUM = re.compile(r"\d+")
#: Marketplace noise a relisting of the same product often adds.
_FILLERS = (
    "New",
    "Original",
    "2024",
    "COD",
    "Sale",
    "Hot",
    "Authentic",
    "Free Shipping",
    "Best Seller",
    "Ready Stock",
)


@dataclass(slots=True)
class CalibrationResult:
    backend: str
    n_pos: int
    n_neg: int
    auc: float
    thresholds: dict[str, float] = field(default_factory=dict)
    rates: dict[str, tuple[float, float]] = field(default_factory=dict)  # key -> (TPR, TNR)


def _rewrite(title: str, rng: random.Random) -> str:
    words = title.split()
    if len(words) > 3:  # drop up to a quarter of the words
        for _ in range(rng.randint(1, max(1, len(words) // 4))):
            if len(words) > 3:
                words.pop(rng.randrange(len(words)))
    if len(words) > 2 and rng.random() < 0.6:  # swap two neighbours
        i = rng.randrange(len(words) - 1)
        words[i], words[i + 1] = words[i + 1], words[i]
    if rng.random() < 0.5:  # add one filler word or phrase
        words.insert(rng.randrange(len(words) + 1), rng.choice(_FILLERS))
    text = " ".join(words)
    return rng.choice([text, text.lower(), text.upper(), text.title()])


def _sibling(title: str, donors: Sequence[str], rng: random.Random) -> str | None:
    words = title.split()
    if len(words) < 2:
        return None
    kind = rng.choice(("brand", "number", "colour"))
    if kind == "number" and _NUM.search(title):
        return _NUM.sub(lambda m: str(int(m.group()) + rng.randint(1, 9)), title, count=1)
    lowered = [w.lower() for w in words]
    colour_at = [i for i, w in enumerate(lowered) if w in _COLOURS]
    if kind == "colour" and colour_at:
        i = rng.choice(colour_at)
        words[i] = rng.choice([c for c in _COLOURS if c != lowered[i]])
        return " ".join(words)
    donor = rng.choice(donors).split()
    words[0] = donor[0] if donor and donor[0].lower() != lowered[0] else words[0] + "X"
    return " ".join(words)


def _token_jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 0.0


Pairs = list[tuple[str, str]]


def build_pairs(titles: Sequence[str], *, seed: int = 7) -> tuple[Pairs, Pairs, Pairs]:
    """(positives, sibling negatives, edit negatives) for ``titles``; deterministic for a seed.

    Sibling negatives pair a title with its closest other real title (token Jaccard >= 0.2); edit negatives
    swap one brand word, model number or colour. One-token edits of a long title are lexically closer than a
    rewrite that drops words, so no lexical measure separates them (nor does the reference model at 0.5);
    they are reported, not used to choose thresholds.
    """
    rng = random.Random(seed)
    positives = [(t, _rewrite(t, rng)) for t in titles for _ in range(2)]
    token_sets = [set(t.lower().split()) for t in titles]
    negatives: Pairs = []
    edits: Pairs = []
    for i, title in enumerate(titles):
        best, best_j = None, 0.0
        for j, other in enumerate(titles):
            if j != i and other != title:
                score = _token_jaccard(token_sets[i], token_sets[j])
                if score > best_j:
                    best, best_j = other, score
        if best is not None and best_j >= 0.2:
            negatives.append((title, best))
        sib = _sibling(title, titles, rng)
        if sib is not None and sib != title:
            edits.append((title, sib))
    return positives, negatives, edits


def _auc(pos: Sequence[float], neg: Sequence[float]) -> float:
    ranked = sorted([(s, 1) for s in pos] + [(s, 0) for s in neg])
    # Mann-Whitney U with average ranks for ties.
    rank_sum, i = 0.0, 0
    while i < len(ranked):
        j = i
        while j < len(ranked) and ranked[j][0] == ranked[i][0]:
            j += 1
        avg = (i + j + 1) / 2
        rank_sum += avg * sum(1 for k in range(i, j) if ranked[k][1] == 1)
        i = j
    n_pos, n_neg = len(pos), len(neg)
    return (rank_sum - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg) if n_pos and n_neg else float("nan")


def calibrate(
    name: str,
    score: Callable[[str, str], float],
    positives: Sequence[tuple[str, str]],
    negatives: Sequence[tuple[str, str]],
    *,
    target: float = 0.975,
) -> CalibrationResult:
    """Score the pairs and choose the three per-profile thresholds (on a 0.05 grid)."""
    pos = [score(a, b) for a, b in positives]
    neg = [score(a, b) for a, b in negatives]
    grid = [round(0.05 * k, 2) for k in range(1, 21)]

    def rates(t: float) -> tuple[float, float]:
        return sum(s >= t for s in pos) / len(pos), sum(s < t for s in neg) / len(neg)

    lenient = max((t for t in grid if rates(t)[0] >= target), default=grid[0])
    balanced = max(grid, key=lambda t: (sum(rates(t)) / 2, -t))
    tight = min((t for t in grid if rates(t)[1] >= target), default=grid[-1])
    result = CalibrationResult(name, len(pos), len(neg), _auc(pos, neg))
    for key, t in (("shoppingbench", lenient), ("strict", balanced), ("web", tight)):
        result.thresholds[key] = t
        result.rates[key] = rates(t)
    return result
