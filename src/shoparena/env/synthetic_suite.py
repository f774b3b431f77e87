"""Template-written problems sampled from a catalog, in the ShoppingBench style (spec §7).

Constraint sampling follows §7.1/§7.2 (coins with p = ½, first passing SKU variant, one value per passing
attribute key, services by coin, price `greater than`/`between`, shop problems from shops with enough
products, voucher totals, thresholds and budgets as upstream). The GPT rewrite of §7.3 is replaced by a
deterministic template writer: numbered requirement lines with backticked values, ``## Product i`` groups
for multi-item problems and the exact voucher appendix of §6.3. ``title_mode`` chooses between the raw
requirement line ``The `title` is `...``` (``full``) and a few title keywords (``keywords``, closer to the
LLM-written queries, which name the item without repeating the title).

Web problems ask for a product of the brand that makes another, named product; the answer (the brand) is
found with ``web_search`` on the catalog-derived knowledge base.
"""

from __future__ import annotations

import math
import random
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any, Literal

from shoparena.records.catalog import Product
from shoparena.records.problem import CATEGORY_OF_INTENT, Intent, Problem, ProblemSource, RewardItem, Voucher

TitleMode = Literal["full", "keywords"]

SERVICE_SENTENCES: dict[str, str] = {
    "freeShipping": "It offers free shipping.",
    "COD": "It supports cash on delivery (COD).",
    "official": "It is sold by a LazMall official store.",
    "flashsale": "It is on a LazFlash flash sale.",
}
_WORD_RE = re.compile(r"[a-z][a-z0-9'-]*[a-z0-9]|[a-z]")


def _coin(rng: random.Random) -> bool:
    return rng.randint(0, 1) == 1


def sample_reward_item(
    product: Product, rng: random.Random, *, with_price: bool = True, allow_less_than: bool = False
) -> RewardItem:
    """Sample the constraints of one slot from a GT product (spec §7.1)."""
    fields: dict[str, Any] = {"product_id": product.product_id, "title": [product.title]}
    for key in sorted(product.sku_options, key=int):
        if _coin(rng):
            fields["sku_options"] = [dict(product.sku_options[key])]
            break
    attrs = []
    for key, values in product.attributes.items():
        if values and _coin(rng):
            attrs.append({key: [rng.choice(values)]})
    if attrs:
        fields["attributes"] = attrs
    services = [s for s in product.service if _coin(rng)]
    if services:
        fields["service"] = services
    p = product.price
    if with_price and p > 0:
        ops = ("less than", "greater than", "between")
        for op in ops:
            if not _coin(rng):
                continue
            lo = int(p - rng.randint(0, int(p)))
            hi = int(p + rng.randint(0, int(p)))
            if op == "less than":
                if not allow_less_than:
                    continue  # upstream data hold no `less than` (spec §7.1)
                if hi <= p:
                    continue
                fields["price"] = [{"less than": [0, hi]}]
                break
            if lo < 0 or lo >= p:
                continue
            if op == "between":
                if hi <= p:
                    continue
                fields["price"] = [{"between": [lo, hi]}]
            else:
                fields["price"] = [{"greater than": [lo, None]}]
            break
    return RewardItem(**fields)


def title_keywords(title: str, n: int = 4) -> str:
    """A few distinctive title words (the item's name without the whole title)."""
    words = []
    for word in _WORD_RE.findall(title.lower()):
        if len(word) > 2 and word not in words and not word.isdigit():
            words.append(word)
    return " ".join(words[-n:]) if len(words) > n else " ".join(words)


def requirement_lines(item: RewardItem, *, title_mode: TitleMode) -> list[str]:
    """The numbered requirement lines of one slot (§7.3 style)."""
    lines = []
    if title_mode == "full":
        lines.append(f"The `title` is `{item.title[0]}`.")
    for opts in item.sku_options:
        lines += [f"The `{k}` is `{v}`." for k, v in opts.items()]
    for attr in item.attributes:
        lines += [f"The `{k}` is `{v}`." for k, vals in attr.items() for v in vals]
    for entry in item.price:
        for op, (lo, hi) in entry.items():
            if op == "between":
                lines.append(f"The `price` is between `{lo}` and `{hi}` Philippine Peso.")
            elif op == "greater than":
                lines.append(f"The `price` is greater than `{lo}` Philippine Peso.")
            else:
                lines.append(f"The `price` is less than `{hi}` Philippine Peso.")
    lines += [SERVICE_SENTENCES[s] for s in item.service if s in SERVICE_SENTENCES]
    return [f"{i}. {line}" for i, line in enumerate(lines, start=1)]


def _leaf(product: Product) -> str:
    return product.category.split(" > ")[-1].lower()


def _item_block(item: RewardItem, product: Product, *, title_mode: TitleMode) -> str:
    name = f"{_leaf(product)}: {title_keywords(product.title)}"
    lines = requirement_lines(item, title_mode=title_mode)
    return f"I want {name}." + ("\n" + "\n".join(lines) if lines else "")


def voucher_appendix(v: Voucher) -> str:
    """The code-generated voucher appendix, exactly as upstream writes it (§6.3)."""
    scope = (
        "The voucher applies to all products."
        if v.voucher_type == "platform"
        else "The voucher only applies to the products from the same shop."
    )
    if v.discount_type == "fixed":
        discount = f"It provides a fixed discount of `{v.face_value}`."
    else:
        pct = round(float(v.discount or 0) * 100)
        discount = f"It provides a percentage discount of `{pct}%` with a cap of `{v.cap}`."
    return (
        f"\n\nMy budget is only `{v.budget}`, but I have a voucher with the following rules:\n1. {scope}\n"
        f"2. It is valid only when the total price of the products exceeds `{v.threshold}`.\n3. {discount}"
    )


def sample_voucher(total: float, rng: random.Random, voucher_type: str) -> Voucher | None:
    """A voucher for a GT basket of ``total`` (spec §7.2); None when the sample is rejected."""
    if total < 100:
        return None
    thr = rng.randint(int(0.1 * total), int(0.9 * total))
    if _coin(rng):
        face = rng.randint(int(0.1 * thr), int(0.5 * thr))
        pav = total - face
        fields: dict[str, Any] = {"discount_type": "fixed", "face_value": face}
    else:
        d = rng.randint(10, 50)
        cap = rng.randint(int(thr * d / 100), thr)
        if not cap > thr * d / 100:
            return None
        pav = max(total * (1 - d / 100), total - cap)
        fields = {"discount_type": "percentage", "discount": d / 100, "cap": cap}
    budget = math.ceil(pav) + rng.randint(0, math.ceil(0.1 * pav))
    return Voucher(voucher_type=voucher_type, threshold=thr, price_after_voucher=pav, budget=budget, **fields)


def _multi_query(intro: str, blocks: list[str]) -> str:
    return intro + "\n" + "\n".join(f"## Product {i}\n{b}" for i, b in enumerate(blocks, start=1))


def build_synthetic_suite(
    products: Iterable[Product],
    *,
    per_intent: int | dict[Intent, int] = 10,
    seed: int = 42,
    title_mode: TitleMode = "keywords",
) -> list[Problem]:
    """Sample problems of every intent from a catalog and write their queries with templates.

    Args:
        products: The catalog (products are never reused across problems).
        per_intent: Problems per intent (an int for all four, or a per-intent dict; 0 skips an intent).
        seed: RNG seed (upstream uses 42).
        title_mode: ``full`` writes the title requirement line; ``keywords`` only names the item.

    Returns:
        Problems in intent order product, shop, voucher, web; ids are ``synth-<intent>-<n>``.
    """
    rng = random.Random(seed)
    pool = [p for p in products if p.price > 0]
    counts = per_intent if isinstance(per_intent, dict) else dict.fromkeys(Intent, per_intent)
    used: set[str] = set()
    by_shop: dict[str, list[Product]] = defaultdict(list)
    for p in pool:
        by_shop[p.shop_id].append(p)
    shops = sorted(by_shop)
    problems: list[Problem] = []

    def free(ps: Sequence[Product]) -> list[Product]:
        return [p for p in ps if p.product_id not in used]

    def add(intent: Intent, n: int, query: str, reward: list[RewardItem], **extra: Any) -> None:
        problems.append(
            Problem(
                problem_id=f"synth-{intent.value}-{n}",
                query=query,
                intent=intent,
                category=CATEGORY_OF_INTENT[intent],
                reward=reward,
                source=ProblemSource(problem_id_given=True),
                **extra,
            )
        )

    for n in range(counts.get(Intent.PRODUCT, 0)):
        product = rng.choice(free(pool))
        used.add(product.product_id)
        item = sample_reward_item(product, rng)
        add(Intent.PRODUCT, n, _item_block(item, product, title_mode=title_mode), [item])

    def pick_shop_items(k: int) -> list[Product] | None:
        for _ in range(100):
            shop = rng.choice(shops)
            avail = free(by_shop[shop])
            if len(avail) >= k:
                return rng.sample(avail, k)
        return None

    n = 0
    while n < counts.get(Intent.SHOP, 0):
        chosen = pick_shop_items(rng.randint(2, 4))
        if chosen is None:
            break
        used.update(p.product_id for p in chosen)
        items = [sample_reward_item(p, rng) for p in chosen]
        blocks = [_item_block(i, p, title_mode=title_mode) for i, p in zip(items, chosen, strict=True)]
        add(Intent.SHOP, n, _multi_query("Find one shop that sells all of these products:", blocks), items)
        n += 1

    n = attempts = 0
    while n < counts.get(Intent.VOUCHER, 0) and attempts < 1000:
        attempts += 1
        vtype = "platform" if _coin(rng) else "shop"
        chosen = (
            rng.sample(free(pool), rng.randint(1, 4))
            if vtype == "platform"
            else pick_shop_items(rng.randint(2, 4))
        )
        if not chosen:
            continue
        voucher = sample_voucher(sum(p.price for p in chosen), rng, vtype)
        if voucher is None:
            continue
        used.update(p.product_id for p in chosen)
        items = [sample_reward_item(p, rng, with_price=False) for p in chosen]
        blocks = [_item_block(i, p, title_mode=title_mode) for i, p in zip(items, chosen, strict=True)]
        body = blocks[0] if len(blocks) == 1 else _multi_query("I want to buy these products:", blocks)
        add(Intent.VOUCHER, n, body + voucher_appendix(voucher), items, voucher=voucher)
        n += 1

    # Web: "a <leaf> from the brand that makes <another product's title>"; the answer is the brand.
    branded = [p for p in pool if p.brand and p.brand.lower() in p.title.lower()]
    by_brand: dict[str, list[Product]] = defaultdict(list)
    for p in branded:
        by_brand[p.brand].append(p)
    n = attempts = 0
    while n < counts.get(Intent.WEB, 0) and attempts < 1000:
        attempts += 1
        target = rng.choice(branded) if branded else None
        if target is None:
            break
        others = [
            p
            for p in by_brand[target.brand]
            if p.product_id != target.product_id and _leaf(p) != _leaf(target)
        ]
        if target.product_id in used or not others:
            continue
        clue = rng.choice(others)
        used.add(target.product_id)
        query = (
            f"I need a {_leaf(target)} ({title_keywords(target.title.replace(target.brand, ''), 3)}) made by "
            f'the same brand as the product "{clue.title}". Which one do you recommend?'
        )
        item = RewardItem(product_id=target.product_id, title=[target.title])
        web_product = {**target.model_dump(mode="json"), "title": target.title}
        add(
            Intent.WEB,
            n,
            query,
            [item],
            knowledge_attribute=target.brand.lower(),
            web_product=web_product,
        )
        n += 1
    return problems


__all__ = [
    "SERVICE_SENTENCES",
    "build_synthetic_suite",
    "requirement_lines",
    "sample_reward_item",
    "sample_voucher",
    "title_keywords",
    "voucher_appendix",
]
