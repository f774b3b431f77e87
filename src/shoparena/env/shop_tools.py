"""The shopping tools (environment spec §4): upstream's five tools plus ORO's three local helpers.

Names, required parameters, enums and return strings follow upstream. Client-side normalisation of
``find_product`` is upstream's: empty ``shop_id``/``price`` are dropped, as are ``sort``/``service`` equal to
``default`` and ``default`` tokens inside a service list. ``get_product_raw`` is deliberately not a tool.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

from shoparena.env.knowledge import KnowledgeBase
from shoparena.env.session import ShopSession
from shoparena.env.toolkit import Param, ToolError, ToolKind, ToolKit, tool
from shoparena.search import SearchEngine

SORT_VALUES = ["priceasc", "pricedesc", "order", "default"]
SERVICE_VALUES = ["official", "freeShipping", "COD", "flashsale", "default"]
TERMINATE_STATUSES = ["success", "failure"]


def normalise_find_params(
    shop_id: str | None, price: str | None, sort: str | None, service: str | None
) -> dict[str, str]:
    """Upstream's client-side clean-up of the optional ``find_product`` parameters (empty/default dropped)."""
    out: dict[str, str] = {}
    if shop_id:
        out["shop_id"] = shop_id
    if price:
        out["price"] = price
    if sort and sort != "default":
        out["sort"] = sort
    if service:
        tokens = [t for t in service.split(",") if t != "default"]
        if any(tokens):
            out["service"] = ",".join(tokens)
    return out


def _dump(items: list[Any]) -> list[dict[str, Any]]:
    return [item.model_dump(mode="json") if hasattr(item, "model_dump") else dict(item) for item in items]


class ShopTools(ToolKit):
    """``find_product``, ``view_product_information``, ``recommend_product``, ``terminate``, ``web_search``.

    Args:
        engine: The product search backend.
        knowledge: Pages behind ``web_search``; None makes ``web_search`` answer ``success: false``.
    """

    def __init__(self, engine: SearchEngine, knowledge: KnowledgeBase | None = None) -> None:
        self._engine = engine
        self._knowledge = knowledge

    @tool(kind=ToolKind.READ)
    def find_product(
        self,
        q: str,
        page: Annotated[int, Param(minimum=1, maximum=5)],
        session: ShopSession,
        shop_id: str | None = None,
        price: str | None = None,
        sort: Annotated[str | None, Param(enum=SORT_VALUES)] = None,
        service: str | None = None,
    ) -> list[dict[str, Any]]:
        """Search the product catalog. Returns up to 10 products per page (product_id, shop_id, title, price,
        service, sold_count); at most 50 results over 5 pages.

        Args:
            q: Search keywords, e.g. 'red running shoes'.
            page: Result page, 1 to 5.
            shop_id: Only products of this shop.
            price: Price range in PHP as 'low-high', e.g. '0-100' or '1000-' (open side allowed).
            sort: Order of the results: priceasc, pricedesc, order (most sold first) or default (relevance).
            service: Comma-separated services every result must offer: official (LazMall), freeShipping,
                COD (cash on delivery), flashsale (LazFlash), or default for none.
        """
        params: dict[str, Any] = {"q": q, "page": page}
        params.update(normalise_find_params(shop_id, price, sort, service))
        session.searches.append(params)
        return _dump(self._engine.find_product(**params))

    @tool(kind=ToolKind.READ)
    def view_product_information(self, product_ids: str, session: ShopSession) -> list[dict[str, Any]]:
        """Show details of products: descriptions, SKU options (variants) and attributes.

        Args:
            product_ids: Comma-separated product ids, e.g. '123,456'.
        """
        views = _dump(self._engine.view_product_information(product_ids))
        session.note_viewed([v["product_id"] for v in views])
        return views

    @tool(kind=ToolKind.ACTION)
    def recommend_product(self, product_ids: str, session: ShopSession) -> str:
        """Recommend products to the user. Use it only once, with every product the user asked for.

        Args:
            product_ids: Comma-separated product ids, in the order the user asked for the products.
        """
        session.recommendations.append(product_ids)
        return f"Having recommended the products to the user: {product_ids}."

    @tool(kind=ToolKind.TERMINAL, missing_defaults={"status": "success"})
    def terminate(self, status: Annotated[str, Param(enum=TERMINATE_STATUSES)], session: ShopSession) -> str:
        """End the interaction when the request is satisfied or no further progress is possible.

        Args:
            status: 'success' if the request was satisfied, otherwise 'failure'.
        """
        if status not in TERMINATE_STATUSES:
            session.schema_violations.append(f"terminate: status {status!r} not in {TERMINATE_STATUSES}")
        session.terminated = True
        session.terminate_status = status
        return f"The interaction has been completed with status: {status}"

    @tool(kind=ToolKind.READ)
    def web_search(
        self, q: str, max_results: Annotated[int, Param(minimum=1, maximum=20)] = 10
    ) -> dict[str, Any]:
        """Search the web for background knowledge (offline: a local knowledge base).

        Args:
            q: Search query.
            max_results: Number of results, 1 to 20.
        """
        if self._knowledge is None:
            return {"observation": [], "success": False}
        hits = self._knowledge.search(q, max(1, min(20, max_results)))
        return {"observation": [p.model_dump(mode="json") for p in hits], "success": True}


def _parse_json_arg(value: Any, what: str, expected: type) -> Any:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise ToolError(f"{what} is not valid JSON: {exc.msg} at char {exc.pos}") from None
    if not isinstance(value, expected):
        raise ToolError(f"{what} must be a JSON {'object' if expected is dict else 'array'}")
    return value


class OroHelperTools(ToolKit):
    """ORO's reference-agent helpers (§4 ORO): local conveniences built on the agent-visible endpoints.

    The scorer ignores them; they never read hidden product fields.
    """

    def __init__(self, engine: SearchEngine) -> None:
        self._engine = engine

    @tool(kind=ToolKind.READ)
    def check_product_match(
        self, product_id: str, requirements: Annotated[str | dict[str, Any], Param(schema={"type": "string"})]
    ) -> dict[str, Any]:
        """Check a product against requirements by substring matching on its attributes, SKU values and
        description.

        Args:
            product_id: The product to check.
            requirements: JSON object of requirement name to wanted value, e.g. '{"color": "black"}'.
        """
        reqs = _parse_json_arg(requirements, "requirements", dict)
        views = self._engine.view_product_information(product_id)
        if not views:
            raise ToolError(f"product {product_id!r} not found")
        view = views[0]
        sku_values = [v for variant in view.sku_options.values() for v in variant.values()]
        attr_values = [v for vals in view.attributes.values() for v in vals]
        haystack = [*attr_values, *sku_values, view.description.lower(), view.short_description.lower()]
        matches, mismatches = [], []
        for key, wanted in reqs.items():
            text = str(wanted).lower().strip()
            (matches if text and any(text in h for h in haystack) else mismatches).append(key)
        return {
            "matched": not mismatches,
            "matches": matches,
            "mismatches": mismatches,
            "product_summary": {
                "product_id": view.product_id,
                "sku_options": view.sku_options,
                "attributes": view.attributes,
            },
        }

    @tool(kind=ToolKind.READ)
    def find_products_in_same_shop(
        self, product_queries: Annotated[str | list[Any], Param(schema={"type": "string"})]
    ) -> dict[str, Any]:
        """Find one shop that sells every product: searches the first query, then tries up to 10 of its shops
        for the others.

        Args:
            product_queries: JSON array of objects {"q": ..., "price": optional, "service": optional}.
        """
        queries = _parse_json_arg(product_queries, "product_queries", list)
        if not queries or not all(isinstance(q, dict) and isinstance(q.get("q"), str) for q in queries):
            raise ToolError("product_queries must be a non-empty array of objects with a string 'q'")

        def search(spec: dict[str, Any], shop_id: str | None = None) -> list[Any]:
            extra = normalise_find_params(shop_id, spec.get("price"), None, spec.get("service"))
            return list(self._engine.find_product(spec["q"], 1, **extra))

        first_hits = search(queries[0])
        shops = list(dict.fromkeys(h.shop_id for h in first_hits))[:10]
        tried = []
        for shop in shops:
            tried.append(shop)
            picks = [next(h for h in first_hits if h.shop_id == shop)]
            for spec in queries[1:]:
                hits = search(spec, shop)
                if not hits:
                    break
                picks.append(hits[0])
            else:
                return {
                    "found": True,
                    "shop_id": shop,
                    "products": [
                        {"q": spec["q"], "product_id": h.product_id, "title": h.title, "price": h.price}
                        for spec, h in zip(queries, picks, strict=True)
                    ],
                    "shops_tried": tried,
                }
        return {"found": False, "shop_id": None, "products": [], "shops_tried": tried}

    @tool(kind=ToolKind.READ)
    def calculate_voucher(
        self,
        product_prices: Annotated[str | list[float], Param(schema={"type": "string"})],
        voucher_type: Annotated[str, Param(enum=["fixed", "percentage"])],
        discount_value: float,
        threshold: float,
        budget: float,
        cap: float = 0,
    ) -> dict[str, Any]:
        """Total a basket and apply a voucher: fixed face value, or percentage (min(total*pct/100, cap)).

        Args:
            product_prices: Comma-separated prices or a JSON array, e.g. '120.5,80'.
            voucher_type: 'fixed' or 'percentage'.
            discount_value: The face value (fixed) or the percent, e.g. 20 for 20% (percentage).
            threshold: Minimum total for the voucher to apply.
            budget: The user's budget.
            cap: Maximum saving of a percentage voucher; 0 for no cap.
        """
        raw = product_prices
        if isinstance(raw, str):
            raw = raw.strip()
            items = json.loads(raw) if raw.startswith("[") else [p for p in raw.split(",") if p.strip()]
        else:
            items = raw
        try:
            prices = [float(p) for p in items]
        except (TypeError, ValueError):
            raise ToolError("product_prices must be numbers") from None
        if voucher_type not in ("fixed", "percentage"):
            raise ToolError(f"voucher_type must be 'fixed' or 'percentage', got {voucher_type!r}")
        total = round(sum(prices), 2)
        applied = total >= threshold
        discount = 0.0
        if applied:
            if voucher_type == "fixed":
                discount = discount_value
            else:
                discount = total * discount_value / 100
                if cap > 0:
                    discount = min(discount, cap)
        after = round(total - discount, 2)
        return {
            "total": total,
            "discount": round(discount, 2),
            "total_after": after,
            "within_budget": after <= budget,
            "voucher_applied": applied,
        }


__all__ = [
    "SERVICE_VALUES",
    "SORT_VALUES",
    "TERMINATE_STATUSES",
    "OroHelperTools",
    "ShopTools",
    "normalise_find_params",
]
