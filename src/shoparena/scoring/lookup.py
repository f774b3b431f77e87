"""Product lookup for scorers: any object with ``get_product(product_id) -> Product | None``.

The search index provides one; :class:`DictLookup` is the in-memory version, and :func:`plant_products` builds
products that satisfy every constraint of a suite (GT id and title, a matching variant, attributes, services,
an in-bounds price, one shop per shop problem, voucher prices summing to the recovered total).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from typing import Protocol, runtime_checkable

from shoparena.records.catalog import SERVICES, Product
from shoparena.records.problem import Intent, Problem, RewardItem


@runtime_checkable
class ProductLookup(Protocol):
    """Resolves a product id to the full product (scoring only; agents never see it)."""

    def get_product(self, product_id: str) -> Product | None: ...


class DictLookup:
    """A dict-backed :class:`ProductLookup` (exact id match, no stripping: the profile strips)."""

    def __init__(self, products: Iterable[Product] | Mapping[str, Product] = ()) -> None:
        if isinstance(products, Mapping):
            self._products = dict(products)
        else:
            self._products = {p.product_id: p for p in products}

    def get_product(self, product_id: str) -> Product | None:
        return self._products.get(product_id)

    def add(self, product: Product) -> None:
        self._products[product.product_id] = product

    def __len__(self) -> int:
        return len(self._products)

    def __contains__(self, product_id: object) -> bool:
        return product_id in self._products


class MemoLookup:
    """A :class:`ProductLookup` over an unchanging one (an opened index) that asks it once per id.

    Scoring reads the products a trajectory names once per profile, and the trajectories of one problem name
    the same products; each lookup decodes and validates the stored product. Answers (``None`` included) are
    kept for at most ``size`` ids, then the memo starts over. Scorers never change a product, so a shared
    one gives the verdict a fresh one gives. Not for a :class:`DictLookup` that is still being added to.
    """

    def __init__(self, inner: ProductLookup, size: int = 4096) -> None:
        self.inner = inner
        self.size = size
        self._products: dict[str, Product | None] = {}

    def get_product(self, product_id: str) -> Product | None:
        if product_id in self._products:
            return self._products[product_id]
        if len(self._products) >= self.size:
            self._products.clear()
        product = self._products[product_id] = self.inner.get_product(product_id)
        return product


def _digits(text: str, n: int = 9) -> str:
    return str(int(hashlib.sha256(text.encode()).hexdigest(), 16))[:n]


def _price_inside(item: RewardItem) -> float:
    lo, hi = 0.0, None
    for entry in item.price:
        for op, bounds in entry.items():
            if op == "between":
                lo, hi = (
                    max(lo, float(bounds[0])),
                    float(bounds[1]) if hi is None else min(hi, float(bounds[1])),
                )
            elif op == "greater than":
                lo = max(lo, float(bounds[0]))
            elif op == "less than":
                hi = float(bounds[1]) if hi is None else min(hi, float(bounds[1]))
    if hi is None:
        return lo + 1.0
    return (lo + hi) / 2


def planted_product(item: RewardItem, *, shop_id: str, price: float | None = None) -> Product:
    """A product meeting every constraint of ``item``: GT id and title, one variant with all SKU pairs."""
    variant: dict[str, str] = {}
    for opts in item.sku_options:
        variant.update(opts)
    attributes: dict[str, list[str]] = {}
    for attr in item.attributes:
        for key, values in attr.items():
            attributes.setdefault(key, []).extend(v for v in values if v not in attributes.get(key, []))
    return Product(
        product_id=item.product_id,
        shop_id=shop_id,
        category="Planted > Fixture",
        title=item.title[0] if item.title else f"product {item.product_id}",
        price=_price_inside(item) if price is None else price,
        sold_count=1,
        sku_options={"1": variant} if variant else {},
        attributes=attributes,
        service=[s for s in item.service if s in SERVICES],
    )


def plant_products(problems: Iterable[Problem]) -> DictLookup:
    """Products that satisfy every constraint of every problem (first problem wins on a shared GT id)."""
    lookup = DictLookup()
    for problem in problems:
        shop = _digits(problem.problem_id)
        prices: list[float | None] = [None] * len(problem.reward)
        if problem.intent is Intent.VOUCHER and problem.voucher is not None:
            # Prices summing to just under the recovered GT total: the voucher then applies exactly as in
            # synthesis, and the small margin keeps float sums from crossing the budget.
            total = problem.voucher.recover_total() - 0.01
            n = len(problem.reward)
            share = round(total / n, 2)
            prices = [share] * (n - 1) + [round(total - share * (n - 1), 2)]
        for i, item in enumerate(problem.reward):
            if item.product_id in lookup:
                continue
            one_shop = problem.intent in (Intent.SHOP, Intent.VOUCHER)
            shop_id = shop if one_shop else _digits(f"{problem.problem_id}/{i}")
            lookup.add(planted_product(item, shop_id=shop_id, price=prices[i]))
    return lookup
