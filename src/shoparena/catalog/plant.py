"""Plant upstream problems into a catalog so that they run and score end to end (environment spec §7.5).

The real catalog is not available offline, yet upstream problems reference real ids and titles. For every
problem of any upstream file (ShoppingBench JSONL of any intent, ORO suite JSON) this module builds:

* **GT products**: the GT ``product_id`` and title, one SKU variant per required SKU dict, the required
  attribute values and services, a price inside every bound; shop problems (and shop vouchers) put their
  items in one shop; voucher baskets are priced so that the recorded ``price_after_voucher`` and ``budget``
  hold (T recovered per §7.2, split over the items, one cent under); web problems plant the full product
  object as given. A GT id used by several problems gets one product meeting all of them (or a conflict).
* **Distractors** (``k`` per slot, new unique ids): copies of a product meeting the slot that violate exactly
  one constraint each: a price bound, one service, one SKU or attribute pair, the title (only for slots
  without other constraints), the one-shop rule (shop problems), the budget (voucher problems), or the
  answer keyword (web problems; the title then changes too).

:func:`plant_into_catalog` streams the input catalog to the output unchanged and appends the planted lines;
reading the problem files first is :func:`shoparena.suites.planting.plant_catalog`.
"""

from __future__ import annotations

import hashlib
import math
import random
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
from pydantic import ValidationError

from shoparena.catalog.io import CatalogWriter
from shoparena.jsonl import iter_raw_lines
from shoparena.records.catalog import Product
from shoparena.records.problem import Intent, Problem, RewardItem, Voucher

PLANTED_CATEGORY = "Planted > Upstream"
_GENERIC_DECOYS = ("standard", "other", "mixed", "assorted", "generic")
_MAX_POOL_VALUES = 12


def digits_id(text: str, n: int = 11) -> str:
    """A deterministic id of ``n`` digits (no leading zero) from ``text``."""
    value = int(hashlib.sha256(text.encode()).hexdigest(), 16)
    return str(10 ** (n - 1) + value % (9 * 10 ** (n - 1)))


@dataclass(slots=True)
class Planted:
    """One planted product: a GT or a distractor, with the constraint a distractor violates."""

    product: Product
    role: str  # "gt" or "distractor"
    problem_id: str
    slot: int
    violates: str | None = None


@dataclass(slots=True)
class PlantReport:
    """What planting did; every problem is either planted or listed in ``failed`` with the reason."""

    problems: int = 0
    planted_problems: int = 0
    gt_products: int = 0
    distractors: int = 0
    already_in_catalog: int = 0
    catalog_lines: int = 0
    by_intent: dict[str, int] = field(default_factory=dict)
    violations: dict[str, int] = field(default_factory=dict)
    conflicts: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "problems": self.problems,
            "planted_problems": self.planted_problems,
            "gt_products": self.gt_products,
            "distractors": self.distractors,
            "already_in_catalog": self.already_in_catalog,
            "catalog_lines": self.catalog_lines,
            "by_intent": dict(sorted(self.by_intent.items())),
            "violations": dict(sorted(self.violations.items())),
            "conflicts": self.conflicts,
            "failed": self.failed,
        }


# ------------------------------------------------------------------------------------------------ prices


def price_interval(items: Iterable[RewardItem]) -> tuple[float, float | None]:
    """The intersection of every known price bound of ``items`` (inclusive; hi None = unbounded)."""
    lo, hi = 0.0, None
    for item in items:
        for entry in item.price:
            for op, bounds in entry.items():
                if op in ("between", "greater than"):
                    lo = max(lo, float(bounds[0]))
                if op in ("between", "less than"):
                    hi = float(bounds[1]) if hi is None else min(hi, float(bounds[1]))
    return lo, hi


def price_inside(lo: float, hi: float | None) -> float:
    """A marketplace-looking price in ``[lo, hi]``."""
    if hi is None:
        return float(math.floor(lo * 1.2) + 9)
    mid = round((lo + hi) / 2, 2)
    return mid if lo <= mid <= hi else lo


def voucher_prices(
    voucher: Voucher,
    n: int,
    rng: random.Random,
    bounds: Sequence[tuple[float, float | None]] | None = None,
) -> list[float]:
    """Prices of ``n`` items summing to just under the recovered GT total T (spec §7.2), in whole cents.

    One cent under T keeps float sums from crossing the budget when ``price_after_voucher == budget``.
    ``bounds`` (one ``(lo, hi)`` per item, from other problems sharing a GT id) are respected: every item
    gets its lower bound first, the rest is spread by random weights without passing an upper bound.

    Raises:
        ValueError: when the bounds cannot be met by a basket of total T.
    """
    cents = max(n, math.ceil(voucher.recover_total() * 100 - 1e-6) - 1)
    limits = list(bounds) if bounds is not None else [(0.0, None)] * n
    lows = [max(1, math.ceil(lo * 100 - 1e-6)) for lo, _ in limits]
    highs = [None if hi is None else math.floor(hi * 100 + 1e-6) for _, hi in limits]
    if sum(lows) > cents:
        raise ValueError(f"voucher basket total {cents / 100} is below the items' lower price bounds")
    shares = list(lows)
    weights = [rng.uniform(0.5, 1.5) for _ in range(n)]
    rest = cents - sum(shares)
    for _ in range(n + 1):  # spread, then hand what a capped item cannot take to the others
        open_items = [i for i in range(n) if highs[i] is None or shares[i] < highs[i]]
        if rest <= 0 or not open_items:
            break
        total_w = sum(weights[i] for i in open_items)
        given = 0
        for j, i in enumerate(open_items):
            add = rest - given if j == len(open_items) - 1 else int(rest * weights[i] / total_w)
            room = add if highs[i] is None else min(add, highs[i] - shares[i])
            shares[i] += room
            given += room
        rest = cents - sum(shares)
    if rest > 0:
        raise ValueError("voucher basket total exceeds the items' upper price bounds")
    return [s / 100 for s in shares]


# ------------------------------------------------------------------------------------------------ products


def _coerce_product(raw: Mapping[str, Any], *, shop_id: str) -> Product:
    """A :class:`Product` from an upstream product object, filling fields it lacks."""
    data: dict[str, Any] = {
        "shop_id": shop_id,
        "category": PLANTED_CATEGORY,
        "price": 0.0,
        "sold_count": 0,
    }
    data.update({k: v for k, v in raw.items() if k in Product.model_fields and v is not None})
    for key in ("shop_id", "product_id"):
        data[key] = str(data[key])
    data["service"] = [
        s for s in data.get("service") or [] if s in ("official", "freeShipping", "COD", "flashsale")
    ]
    return Product.model_validate(data)


def product_for(
    product_id: str,
    title: str,
    items: Sequence[RewardItem],
    *,
    shop_id: str,
    price: float,
    sold_count: int = 0,
) -> Product:
    """A product meeting every item: one variant per distinct SKU dict, attribute values, services."""
    variants: list[dict[str, str]] = []
    for item in items:
        for opts in item.sku_options:
            if opts and opts not in variants:
                variants.append(dict(opts))
    if len(variants) > 9:
        raise ValueError(f"product {product_id}: {len(variants)} SKU variants required, at most 9")
    attributes: dict[str, list[str]] = {}
    services: list[str] = []
    for item in items:
        for attr in item.attributes:
            for key, values in attr.items():
                bucket = attributes.setdefault(key, [])
                bucket.extend(v for v in values if v not in bucket)
        services.extend(s for s in item.service if s not in services)
    return Product(
        product_id=product_id,
        shop_id=shop_id,
        category=PLANTED_CATEGORY,
        title=title,
        price=price,
        sold_count=sold_count,
        sku_options={str(i): v for i, v in enumerate(variants, start=1)},
        attributes=attributes,
        service=[s for s in services if s in ("official", "freeShipping", "COD", "flashsale")],
        product_url=f"https://www.lazada.com.ph/products/-i{product_id}.html",
    )


# ------------------------------------------------------------------------------------------------ distractors


def _pair_counts(item: RewardItem) -> dict[tuple[str, str], int]:
    counts: dict[tuple[str, str], int] = defaultdict(int)
    for opts in item.sku_options:
        for k, v in opts.items():
            counts[(k, v)] += 1
    for attr in item.attributes:
        for k, vals in attr.items():
            for v in vals:
                counts[(k, v)] += 1
    return counts


def violation_kinds(item: RewardItem, problem: Problem) -> list[str]:
    """The single-constraint violations available for a slot, in a fixed order."""
    if problem.intent is Intent.WEB:
        return ["kw"]
    kinds: list[str] = []
    lo, hi = price_interval([item])
    if item.price and (lo > 1 or hi is not None):
        kinds.append("price")
    kinds += [f"service:{s}" for s in item.service]
    counts = _pair_counts(item)
    kinds += [f"sku:{k}={v}" for opts in item.sku_options for k, v in opts.items() if counts[(k, v)] == 1]
    kinds += [
        f"attr:{k}={v}"
        for attr in item.attributes
        for k, vals in attr.items()
        for v in vals
        if counts[(k, v)] == 1
    ]
    if problem.intent is Intent.SHOP or (
        problem.voucher is not None and problem.voucher.voucher_type == "shop"
    ):
        kinds.append("shop")
    if problem.voucher is not None:
        kinds.append("budget")
    if not kinds:
        kinds.append("title")
    return kinds


def _decoy(key: str, value: str, pools: Mapping[str, Sequence[str]]) -> str:
    for candidate in [*pools.get(key, ()), *_GENERIC_DECOYS]:
        if candidate != value:
            return candidate
    return value + " alt"


def _replace_pair(
    variants: dict[str, dict[str, str]],
    attrs: dict[str, list[str]],
    key: str,
    value: str,
    decoy: str,
    sku: bool,
) -> None:
    if sku:
        for opts in variants.values():
            if opts.get(key) == value:
                opts[key] = decoy
    else:
        attrs[key] = [decoy if v == value else v for v in attrs.get(key, [])]


def make_distractor(
    base: Product,
    kind: str,
    item: RewardItem,
    *,
    new_id: str,
    other_shop: str,
    pools: Mapping[str, Sequence[str]],
    voucher: Voucher | None = None,
    answer: str | None = None,
) -> Product:
    """A copy of ``base`` (a product meeting ``item``) with ``new_id`` that violates exactly ``kind``."""
    data = base.model_dump()
    data["product_id"] = new_id
    data["product_url"] = f"https://www.lazada.com.ph/products/-i{new_id}.html"
    data["sold_count"] = base.sold_count + 1 + int(new_id[-2:])
    if kind == "price":
        lo, hi = price_interval([item])
        data["price"] = (
            round(hi + max(1.0, 0.1 * hi), 2) if hi is not None else round(lo - max(1.0, 0.1 * lo), 2)
        )
    elif kind.startswith("service:"):
        data["service"] = [s for s in base.service if s != kind.split(":", 1)[1]]
    elif kind.startswith(("sku:", "attr:")):
        key, value = kind.split(":", 1)[1].split("=", 1)
        _replace_pair(
            data["sku_options"], data["attributes"], key, value, _decoy(key, value, pools), kind[0] == "s"
        )
    elif kind == "shop":
        data["shop_id"] = other_shop
    elif kind == "budget":
        assert voucher is not None
        data["price"] = round(base.price + float(voucher.budget) + 1, 2)
    elif kind == "title":
        words = base.title.split()
        data["title"] = " ".join(words[:-1]) if len(words) > 1 else base.title + " Replica"
    elif kind == "kw":
        needle = (answer or "").lower()
        for key in ("title", "description", "short_description"):
            text = str(data.get(key) or "")
            while needle and needle in text.lower():
                at = text.lower().index(needle)
                text = text[:at] + "Generic" + text[at + len(needle) :]
            data[key] = text
    else:
        raise ValueError(f"make_distractor: unknown violation kind {kind!r}")
    return Product.model_validate(data)


# ------------------------------------------------------------------------------------------------ planting


class _Shops:
    """Union-find over GT ids that must share a shop."""

    def __init__(self) -> None:
        self.parent: dict[str, str] = {}

    def find(self, x: str) -> str:
        self.parent.setdefault(x, x)
        while self.parent[x] != x:
            self.parent[x] = self.parent[self.parent[x]]
            x = self.parent[x]
        return x

    def union(self, ids: Sequence[str]) -> None:
        for other in ids[1:]:
            a, b = self.find(ids[0]), self.find(other)
            if a != b:
                self.parent[max(a, b)] = min(a, b)


@dataclass(slots=True)
class PlantResult:
    """Planted products (GT first, then distractors, in problem order) and the report."""

    planted: list[Planted]
    report: PlantReport

    @property
    def products(self) -> list[Product]:
        return [p.product for p in self.planted]


def _one_shop(problem: Problem) -> bool:
    return problem.intent is Intent.SHOP or (
        problem.voucher is not None and problem.voucher.voucher_type == "shop"
    )


def _decoy_pools(
    problems: Sequence[Problem], value_pools: Mapping[str, Sequence[str]] | None
) -> dict[str, list[str]]:
    """Decoy values per SKU/attribute key: the catalogue's, then the problems' own."""
    pools: dict[str, list[str]] = {k: list(v) for k, v in (value_pools or {}).items()}
    for problem in problems:  # the problems' own values make realistic decoys too
        for item in problem.reward:
            for k, v in [(k, v) for o in item.sku_options for k, v in o.items()] + [
                (k, v) for a in item.attributes for k, vs in a.items() for v in vs
            ]:
                bucket = pools.setdefault(k, [])
                if v not in bucket and len(bucket) < _MAX_POOL_VALUES:
                    bucket.append(v)
    return pools


def _requirements(
    problems: Sequence[Problem], report: PlantReport
) -> tuple[dict[str, list[RewardItem]], dict[str, str], dict[str, Mapping[str, Any]]]:
    """Every reward item naming each GT id, its title (a conflict is reported) and web products."""
    needs: dict[str, list[RewardItem]] = defaultdict(list)
    titles: dict[str, str] = {}
    web: dict[str, Mapping[str, Any]] = {}
    for problem in problems:
        for item in problem.reward:
            pid = item.product_id
            needs[pid].append(item)
            title = item.title[0] if item.title else f"Product {pid}"
            if titles.setdefault(pid, title) != title:
                report.conflicts.append(
                    f"{pid}: titles differ between problems ({titles[pid]!r} vs {title!r})"
                )
            if problem.web_product is not None:
                web[pid] = problem.web_product
    return needs, titles, web


def _voucher_prices(
    problems: Sequence[Problem],
    needs: Mapping[str, list[RewardItem]],
    seed: int,
    report: PlantReport,
    failed: dict[str, str],
) -> dict[str, float]:
    """GT id → price fixed by a voucher basket (a basket that cannot be split fails its problem)."""
    fixed: dict[str, float] = {}
    for problem in problems:
        if problem.voucher is None:
            continue
        # Seeded by content, so the same problem read from two files splits its basket identically.
        rng = random.Random(f"{seed}:{problem.content_hash}")
        try:
            prices = voucher_prices(
                problem.voucher, len(problem.reward), rng, [price_interval(needs[i]) for i in problem.gt_ids]
            )
        except ValueError as exc:
            report.conflicts.append(f"{problem.problem_id}: {exc}")
            failed.setdefault(problem.problem_id, str(exc))
            continue
        for pid, price in zip(problem.gt_ids, prices, strict=True):
            if pid in fixed and abs(fixed[pid] - price) > 0.005:
                report.conflicts.append(f"{pid}: two voucher baskets price it differently")
                failed.setdefault(problem.problem_id, f"GT {pid} priced by two voucher baskets")
            fixed.setdefault(pid, price)
    return fixed


def _gt_products(
    problems: Sequence[Problem],
    needs: Mapping[str, list[RewardItem]],
    titles: Mapping[str, str],
    web: Mapping[str, Mapping[str, Any]],
    fixed: Mapping[str, float],
    shops: _Shops,
    report: PlantReport,
    failed: dict[str, str],
) -> dict[str, Product]:
    """One product per GT id meeting every item that names it (a conflict fails the problems)."""
    gt: dict[str, Product] = {}
    for pid, items in needs.items():
        shop = digits_id(f"shop:{shops.find(pid)}", 9)
        lo, hi = price_interval(items)
        try:
            if pid in web:
                product = _coerce_product(web[pid], shop_id=shop)
            else:
                price = fixed.get(pid, price_inside(lo, hi))
                if price < lo or (hi is not None and price > hi):
                    raise ValueError(f"price {price} outside the bounds [{lo}, {hi}] of another problem")
                product = product_for(
                    pid, titles[pid], items, shop_id=shop, price=price, sold_count=len(items) * 7
                )
        except (ValidationError, ValueError) as exc:
            reason = f"GT {pid}: {str(exc).splitlines()[0]}"
            report.conflicts.append(reason)
            for problem in problems:
                if pid in problem.gt_ids:
                    failed.setdefault(problem.problem_id, reason)
            continue
        gt[pid] = product
    return gt


def plant_problems(
    problems: Sequence[Problem],
    *,
    distractors: int = 2,
    seed: int = 0,
    taken_ids: set[str] | None = None,
    value_pools: Mapping[str, Sequence[str]] | None = None,
) -> PlantResult:
    """Build GT products and distractors for ``problems``.

    Args:
        problems: Problems of any intent (several files together; a shared GT id gets one product).
        distractors: Distractors per slot, each violating exactly one constraint.
        seed: Seed of the voucher price split and of the violation order.
        taken_ids: Ids already in the catalog: their GT products are not planted again (counted), and new
            distractor ids avoid them.
        value_pools: Values seen per SKU/attribute key, used as decoy values.

    Returns:
        The planted products and the report.
    """
    taken = set(taken_ids or ())
    pools = _decoy_pools(problems, value_pools)
    report = PlantReport(problems=len(problems))
    shops = _Shops()
    for problem in problems:
        if _one_shop(problem):
            shops.union(problem.gt_ids)

    # Gather every requirement on each GT id.
    needs, titles, web = _requirements(problems, report)
    failed: dict[str, str] = {}
    fixed = _voucher_prices(problems, needs, seed, report, failed)

    gt = _gt_products(problems, needs, titles, web, fixed, shops, report, failed)

    planted: list[Planted] = []
    new_ids: set[str] = set()

    def fresh_id(text: str) -> str:
        n = 0
        while True:
            candidate = digits_id(f"{text}:{n}")
            if candidate not in taken and candidate not in new_ids and candidate not in needs:
                new_ids.add(candidate)
                return candidate
            n += 1

    emitted: set[str] = set()
    for problem in problems:
        if problem.problem_id in failed:
            report.failed.append(f"{problem.problem_id}: {failed[problem.problem_id]}")
            continue
        report.planted_problems += 1
        report.by_intent[problem.intent.value] = report.by_intent.get(problem.intent.value, 0) + 1
        for slot, item in enumerate(problem.reward):
            base = gt[item.product_id]
            if item.product_id not in emitted:
                emitted.add(item.product_id)
                if item.product_id in taken:
                    report.already_in_catalog += 1
                else:
                    planted.append(Planted(base, "gt", problem.problem_id, slot))
                    report.gt_products += 1
            # Distractors copy a product meeting this slot only, so each breaks exactly one constraint.
            own = (
                base
                if problem.intent is Intent.WEB
                else product_for(item.product_id, base.title, [item], shop_id=base.shop_id, price=base.price)
            )
            kinds = violation_kinds(item, problem)
            start = random.Random(f"{seed}:{problem.problem_id}:{slot}").randrange(len(kinds))
            for k in range(distractors):
                kind = kinds[(start + k) % len(kinds)]
                new_id = fresh_id(f"{problem.problem_id}:{slot}:{k}:{kind}")
                other = digits_id(f"other-shop:{new_id}", 9)
                product = make_distractor(
                    own,
                    kind,
                    item,
                    new_id=new_id,
                    other_shop=other,
                    pools=pools,
                    voucher=problem.voucher,
                    answer=str(problem.knowledge_attribute)
                    if problem.knowledge_attribute is not None
                    else None,
                )
                if kind not in ("shop",) and not _one_shop(problem):
                    product = product.model_copy(update={"shop_id": other})
                planted.append(Planted(product, "distractor", problem.problem_id, slot, kind))
                report.distractors += 1
                family = kind.split(":", 1)[0]
                report.violations[family] = report.violations.get(family, 0) + 1
    return PlantResult(planted, report)


def _catalog_scan(
    catalog_in: str | Path, writer: CatalogWriter
) -> tuple[set[str], dict[str, list[str]], int]:
    """Copy the input catalog line by line; collect its ids and a few values per SKU/attribute key."""
    ids: set[str] = set()
    pools: dict[str, list[str]] = {}
    lines = 0
    for _, raw in iter_raw_lines(catalog_in):
        writer.write_raw(raw)
        lines += 1
        try:
            data = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
        if not isinstance(data, dict):
            continue
        pid = data.get("id")
        if isinstance(pid, str):
            ids.add(pid)
        product = data.get("product")
        if not isinstance(product, dict) or len(pools) > 5000:
            continue
        pairs = [
            (k, v)
            for o in (product.get("sku_options") or {}).values()
            if isinstance(o, dict)
            for k, v in o.items()
        ]
        pairs += [
            (k, v) for k, vs in (product.get("attributes") or {}).items() if isinstance(vs, list) for v in vs
        ]
        for k, v in pairs:
            bucket = pools.setdefault(str(k), [])
            if len(bucket) < _MAX_POOL_VALUES and str(v) not in bucket:
                bucket.append(str(v))
    return ids, pools, lines


def plant_into_catalog(
    problems: Sequence[Problem],
    catalog_in: str | Path,
    out: str | Path,
    *,
    distractors: int = 2,
    seed: int = 0,
) -> PlantReport:
    """Write ``out`` = the input catalog (streamed, unchanged) + planted GT products and distractors.

    Args:
        problems: The problems to plant (the same problem twice, by content hash, is planted once).
        catalog_in: The catalog to extend (``.jsonl`` or ``.jsonl.gz``).
        out: Output catalog (``.gz`` compresses).
        distractors: Distractors per slot.
        seed: Seed of voucher price splits and violation order.
    """
    # The same problem in two files (ORO suites are verbatim SB problems) is planted once.
    unique = list({p.content_hash: p for p in reversed(problems)}.values())[::-1]
    with CatalogWriter(out) as writer:
        taken, pools, lines = _catalog_scan(catalog_in, writer)
        result = plant_problems(
            unique, distractors=distractors, seed=seed, taken_ids=taken, value_pools=pools
        )
        for item in result.planted:
            writer.write(item.product)
    report = result.report
    report.catalog_lines = lines
    return report


__all__ = [
    "PLANTED_CATEGORY",
    "PlantReport",
    "PlantResult",
    "Planted",
    "digits_id",
    "make_distractor",
    "plant_into_catalog",
    "plant_problems",
    "price_inside",
    "price_interval",
    "product_for",
    "violation_kinds",
    "voucher_prices",
]
