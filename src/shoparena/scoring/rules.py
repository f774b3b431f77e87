"""Rule score of one product against one reward item (environment spec §8.2), with per-constraint checks."""

from __future__ import annotations

from collections.abc import Sequence

from shoparena.records.catalog import Product
from shoparena.records.problem import KNOWN_PRICE_OPS, RewardItem
from shoparena.records.verdict import FIELDS, Check, SlotVerdict
from shoparena.scoring._trusted import trusted
from shoparena.scoring.profiles import ScoringProfile


def _price_hit(op: str, bounds: object, price: float) -> bool:
    if op not in KNOWN_PRICE_OPS or not isinstance(bounds, list) or len(bounds) != 2:
        return False  # unknown ops are units that never hit
    lo, hi = bounds
    if op == "less than":
        return price <= hi
    if op == "greater than":
        return price >= lo
    return lo <= price <= hi


def _opt_float(value: object) -> float | None:
    # What SlotVerdict's ``float | None`` validation would store, for the values products hold.
    return value if value is None or type(value) is float else float(value)  # type: ignore[arg-type]


def sku_attr_pairs(item: RewardItem) -> list[tuple[str, str]]:
    """L: every (k, v) of every SKU dict, then (k, v) for every value of every attribute dict."""
    pairs = [(k, v) for opts in item.sku_options for k, v in opts.items()]
    pairs.extend((k, v) for attr in item.attributes for k, vals in attr.items() for v in vals)
    return pairs


def best_variant(product: Product, required: Sequence[tuple[str, str]]) -> tuple[str | None, int, list[bool]]:
    """The variant (or none) meeting most required pairs with the attribute pool: (key, hits, flags)."""
    # (k, v) is in the attribute pool iff v is listed under k; a variant holds it iff its k maps to v.
    attrs = product.attributes
    in_pool = [k in attrs and v in attrs[k] for k, v in required]
    best_key: str | None = None
    best = in_pool
    best_hits = sum(best)
    for key, opts in product.sku_options.items():
        flags = [hit or (k in opts and opts[k] == v) for (k, v), hit in zip(required, in_pool, strict=True)]
        hits = sum(flags)
        if hits > best_hits:  # first maximum wins, like upstream's max over the variant list
            best_key, best_hits, best = key, hits, flags
    return best_key, best_hits, best


def _constraint_checks(
    product: Product,
    item: RewardItem,
    slot: int,
    gt: bool,
    title_sims: Sequence[float] | None,
    threshold: float,
    checks: list[Check],
) -> tuple[dict[str, int], dict[str, int]]:
    """Units and hits per field (title, price, service, sku attributes) of one slot; appends the checks."""
    units = dict.fromkeys(FIELDS, 0)
    hits = dict.fromkeys(FIELDS, 0)
    for k, title in enumerate(item.title):
        if gt:
            sim, hit, detail = 1.0, True, "GT id: hit without embedding"
        else:
            sim = title_sims[k] if title_sims is not None else 0.0
            hit = sim >= threshold
            detail = f"similarity {sim:.3f} {'>=' if hit else '<'} {threshold}"
        units["title"] += 1
        hits["title"] += 1 if hit else 0  # a plain int even when a backend returns numpy scalars
        checks.append(Check("title", hit, "title", slot, title, product.title, True, 1, int(hit), detail))
    for entry in item.price:
        for op, bounds in entry.items():
            hit = _price_hit(op, bounds, product.price)
            units["price"] += 1
            hits["price"] += hit
            detail = f"{product.price} {op} {bounds}" if op in KNOWN_PRICE_OPS else f"unknown price op {op!r}"
            checks.append(
                Check("price", hit, f"price.{op}", slot, bounds, product.price, True, 1, int(hit), detail)
            )
    for service in item.service:
        hit = service in product.service
        units["service"] += 1
        hits["service"] += hit
        detail = f"{service} {'offered' if hit else 'not offered'}"
        checks.append(
            Check("service", hit, "service", slot, service, product.service, True, 1, int(hit), detail)
        )
    required = sku_attr_pairs(item)
    if required:
        key, n_hit, flags = best_variant(product, required)
        units["sku_attrs"] = len(required)
        hits["sku_attrs"] = n_hit
        missing = [f"{k}={v}" for (k, v), ok in zip(required, flags, strict=True) if not ok]
        where = f"variant {key} + attributes" if key else "attributes only"
        checks.append(
            Check(
                name="sku_attrs",
                field="sku_options+attributes",
                slot=slot,
                expected=[f"{k}={v}" for k, v in required],
                actual={"best_variant": key, "missing": missing},
                passed=n_hit == len(required),
                units=len(required),
                hits=n_hit,
                detail=f"{n_hit}/{len(required)} via {where}"
                + (f"; missing {', '.join(missing)}" if missing else ""),
            )
        )
    return units, hits


def score_slot(
    product: Product,
    item: RewardItem,
    *,
    slot: int,
    recommended_id: str,
    scoring_profile: ScoringProfile,
    title_sims: Sequence[float] | None,
    threshold: float,
) -> tuple[SlotVerdict, list[Check]]:
    """Score one found product against one reward item under a profile.

    Args:
        product: The catalog product recommended for this slot.
        item: The slot's constraints.
        slot: 0-based slot index (for the checks).
        recommended_id: The id as the agent wrote it (after profile parsing).
        scoring_profile: The scoring profile.
        title_sims: Similarity of ``product.title`` to each ``item.title`` (None when the GT id matched).
        threshold: Title hit threshold.

    Returns:
        The slot verdict and its checks.
    """
    gt = product.product_id == item.product_id
    # Checks are built positionally (Check's field order: name, passed, field, slot, expected, actual,
    # required, units, hits, detail): keyword construction was a measurable share of scoring time.
    detail = "ground-truth product" if gt else "not the ground-truth product"
    checks = [
        Check("gt_id", gt, "product_id", slot, item.product_id, product.product_id, False, 0, 0, detail)
    ]
    price, shop_id = _opt_float(product.price), product.shop_id
    if gt and scoring_profile.gt_short_circuit:
        checks[0].detail += ": rule 1 immediately, constraints not counted"
        # One check per constraint all the same, counted as met and not checked: a public verdict (its
        # required checks) then has the shape another passing product's has, never an exact-id oracle.
        _constraint_checks(product, item, slot, True, None, threshold, checks)
        for check in checks[1:]:
            check.passed, check.actual, check.hits = True, None, check.units
            check.detail = "ground-truth product: counted as met under this profile, not checked"
        # Keys in SlotVerdict's declaration order (adopted without a copy).
        return trusted(
            SlotVerdict,
            {
                "slot": slot,
                "gt_product_id": item.product_id,
                "recommended_id": recommended_id,
                "found": True,
                "gt": 1.0,
                "rule": 1.0,
                "units": {},
                "hits": {},
                "field_scores": dict.fromkeys(FIELDS, float(scoring_profile.absent_field_score)),
                "price": price,
                "shop_id": shop_id,
                "counts_as_hit": True,
            },
        ), checks

    units, hits = _constraint_checks(product, item, slot, gt, title_sims, threshold, checks)

    total_units, total_hits = sum(units.values()), sum(hits.values())
    if gt:
        rule = 1.0  # strict: GT forces rule 1; counters still reflect the real matches
    elif total_units == 0:
        rule = float(scoring_profile.zero_units_rule)
    else:
        rule = total_hits / total_units
    absent = float(scoring_profile.absent_field_score)
    field_scores = {f: hits[f] / units[f] if units[f] else absent for f in FIELDS}
    counts = rule > 0 if scoring_profile.hit_requires_rule else True
    values = {
        "slot": slot,
        "gt_product_id": item.product_id,
        "recommended_id": recommended_id,
        "found": True,
        "gt": float(gt),
        "rule": rule,
        "units": units,
        "hits": hits,
        "field_scores": field_scores,
        "price": price,
        "shop_id": shop_id,
        "counts_as_hit": counts,
    }
    return trusted(SlotVerdict, values), checks
