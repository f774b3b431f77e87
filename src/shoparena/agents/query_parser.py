"""Rule-based parsing of shopping requests into per-item search specs (used by the ``planner`` agent).

Handles the template style (numbered requirement lines with backticked values, ``## Product i`` groups, the
exact voucher appendix of spec §6.3) and, best effort, free text: price phrases ("between X and Y", "from X
to Y", "over/above/at least/more than X", "under/below/less than X"), service phrases (free shipping or
delivery, cash/payment on delivery or COD, LazMall/official store, LazFlash/flash sale), "from the same
shop", and item enumerations ("(1) ... (2) ...", "First, ... Second, ...").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

_NUM = r"(?:PHP|Php|php|₱|P)?\s*([0-9][0-9,]*(?:\.[0-9]+)?)"
_APPENDIX_RE = re.compile(
    r"\n*\s*My budget is only `([0-9.]+)`, but I have a voucher with the following rules:\s*\n"
    r"\s*1\.\s*(?P<scope>[^\n]+)\n\s*2\.\s*[^\n]*?`(?P<thr>[0-9.]+)`[^\n]*\n\s*3\.\s*(?P<disc>[^\n]+)\s*$",
    re.DOTALL,
)
_FIXED_RE = re.compile(r"fixed discount of `([0-9.]+)`")
_PCT_RE = re.compile(r"percentage discount of `([0-9.]+)%` with a cap of `([0-9.]+)`")
_SECTION_RE = re.compile(r"^\s*#{1,3}\s*Product\s+\d+\s*:?\s*$", re.MULTILINE | re.IGNORECASE)
_TITLE_RE = re.compile(r"The `title` is `([^`]+)`")
_PAIR_RE = re.compile(r"The `([^`]+)` (?:is|are) `([^`]+)`")
_T_BETWEEN = re.compile(r"`price` is between `([0-9.]+)` and `([0-9.]+)`")
_T_GREATER = re.compile(r"`price` is greater than `([0-9.]+)`")
_T_LESS = re.compile(r"`price` is less than `([0-9.]+)`")
_F_BETWEEN = [
    re.compile(rf"between\s+{_NUM}\s*(?:PHP|pesos?)?\s*(?:and|to|-)\s*{_NUM}", re.IGNORECASE),
    re.compile(rf"from\s+{_NUM}\s*(?:PHP|pesos?)?\s*(?:to|-)\s*{_NUM}", re.IGNORECASE),
    re.compile(rf"{_NUM}\s*(?:-|to)\s*{_NUM}\s*(?:PHP|pesos?|Philippine)", re.IGNORECASE),
]
_F_LOWER = re.compile(
    rf"(?:over|above|more than|at least|greater than|higher than|exceeding|minimum of|starting at)\s+{_NUM}",
    re.IGNORECASE,
)
_F_UPPER = re.compile(
    rf"(?:under|below|less than|at most|cheaper than|up to|maximum of|no more than|within)\s+{_NUM}",
    re.IGNORECASE,
)
SERVICE_PATTERNS: dict[str, re.Pattern[str]] = {
    "freeShipping": re.compile(r"free\s+(?:shipping|delivery)", re.IGNORECASE),
    "COD": re.compile(
        r"cash[\s-]+on[\s-]+delivery|payment on delivery|pay on delivery|(?-i:\bCOD\b)", re.IGNORECASE
    ),
    "official": re.compile(r"lazmall|official (?:store|shop|seller)", re.IGNORECASE),
    "flashsale": re.compile(r"lazflash|flash[\s-]?sale", re.IGNORECASE),
}
_SAME_SHOP_RE = re.compile(
    r"same (?:shop|store|seller)|one shop|one store|single (?:shop|store)|a shop that", re.IGNORECASE
)
_ENUM_PAREN_RE = re.compile(r"\(\d\)\s*")
_ENUM_WORD_RE = re.compile(r"\b(?:First|Second|Third|Fourth|Next|Lastly|Finally|Also),?\s+", re.IGNORECASE)
_INTRO_RE = re.compile(r"^\s*(?:I want|I need|I'm looking for|Looking for|Show me|Find)\s+", re.IGNORECASE)
_ALSO_RE = re.compile(r",?\s+and also\s+|\.\s+Also,?\s+|;\s+", re.IGNORECASE)
_NUMBERED_LINE_RE = re.compile(r"^\s*\d+\.\s+", re.MULTILINE)


def _num(text: str) -> float:
    return float(text.replace(",", ""))


@dataclass(slots=True)
class VoucherSpec:
    """The voucher appendix, parsed."""

    budget: float
    voucher_type: Literal["platform", "shop"]
    threshold: float
    discount_type: Literal["fixed", "percentage"]
    face_value: float = 0.0
    discount: float = 0.0
    cap: float = 0.0

    def total_ok(self, total: float, n_shops: int) -> bool:
        """The scorer's budget rule (spec §8.3) for a basket of price ``total`` from ``n_shops`` shops."""
        if total <= self.budget:
            return True
        if self.voucher_type == "shop" and n_shops != 1:
            return False
        if total < self.threshold:
            return False
        if self.discount_type == "fixed":
            after = total - self.face_value
        else:
            after = max(total * (1 - self.discount), total - self.cap)
        return after <= self.budget


@dataclass(slots=True)
class ItemSpec:
    """What one requested product must satisfy, as far as the text says.

    Attributes:
        text: The item's raw text.
        name: The item's name/keywords (search text).
        title: An exact title, when the query states one.
        pairs: (key, value) requirements (SKU options or attributes; the scorer pools both).
        price_lo: Inclusive lower bound.
        price_hi: Inclusive upper bound.
        services: Required service tokens.
    """

    text: str
    name: str = ""
    title: str | None = None
    pairs: list[tuple[str, str]] = field(default_factory=list)
    price_lo: float | None = None
    price_hi: float | None = None
    services: list[str] = field(default_factory=list)

    def price_filter(self) -> str | None:
        """The ``find_product`` price parameter (``lo-hi``, open sides allowed), None for no bounds."""
        if self.price_lo is None and self.price_hi is None:
            return None
        lo = "" if self.price_lo is None else f"{self.price_lo:g}"
        hi = "" if self.price_hi is None else f"{self.price_hi:g}"
        return f"{lo}-{hi}"

    def service_filter(self) -> str | None:
        return ",".join(self.services) or None

    def unit_count(self) -> int:
        """Checkable units (pairs, price bound, services)."""
        price = int(self.price_lo is not None or self.price_hi is not None)
        return len(self.pairs) + price + len(self.services)


@dataclass(slots=True)
class QuerySpec:
    """A parsed request."""

    items: list[ItemSpec]
    same_shop: bool = False
    voucher: VoucherSpec | None = None
    body: str = ""


def parse_voucher(query: str) -> tuple[str, VoucherSpec | None]:
    """Split off the voucher appendix; returns ``(body, voucher or None)``."""
    m = _APPENDIX_RE.search(query)
    if not m:
        return query, None
    scope = "shop" if "same shop" in m.group("scope") else "platform"
    disc = m.group("disc")
    fixed, pct = _FIXED_RE.search(disc), _PCT_RE.search(disc)
    if fixed:
        spec = VoucherSpec(
            _num(m.group(1)), scope, _num(m.group("thr")), "fixed", face_value=_num(fixed.group(1))
        )
    elif pct:
        spec = VoucherSpec(
            _num(m.group(1)),
            scope,
            _num(m.group("thr")),
            "percentage",
            discount=_num(pct.group(1)) / 100,
            cap=_num(pct.group(2)),
        )
    else:
        return query, None
    return query[: m.start()].rstrip(), spec


def _split_items(body: str) -> list[str]:
    if _SECTION_RE.search(body):
        parts = _SECTION_RE.split(body)
        return [p.strip() for p in parts[1:] if p.strip()]
    if len(_ENUM_PAREN_RE.findall(body)) >= 2:
        parts = _ENUM_PAREN_RE.split(body)
        return [p.strip(" ;,.") for p in parts[1:] if p.strip(" ;,.")]
    if len(_ENUM_WORD_RE.findall(body)) >= 2:
        parts = [p.strip(" ;,.") for p in _ENUM_WORD_RE.split(body)]
        parts = [p for p in parts if p]
        if len(parts) >= 2:
            # The intro before "First" names the task, not an item.
            return parts[1:] if _SAME_SHOP_RE.search(parts[0]) and len(parts) > 2 else parts
    return [body.strip()]


def _price_bounds(text: str) -> tuple[float | None, float | None]:
    if m := _T_BETWEEN.search(text):
        return _num(m.group(1)), _num(m.group(2))
    if m := _T_GREATER.search(text):
        return _num(m.group(1)), None
    if m := _T_LESS.search(text):
        return None, _num(m.group(1))
    for pattern in _F_BETWEEN:
        if m := pattern.search(text):
            return _num(m.group(1)), _num(m.group(2))
    lo = hi = None
    if m := _F_LOWER.search(text):
        lo = _num(m.group(1))
    if m := _F_UPPER.search(text):
        hi = _num(m.group(1))
    return lo, hi


_PRICE_PHRASE_RE = re.compile(
    r"(?:(?:priced|costing|costs?|price(?:d)?|with a price|that costs?)\s+)?"
    r"(?:between|from|over|above|more than|at least|greater than|higher than|exceeding|under|below|less than|"
    r"at most|up to|within)\s+(?:PHP|₱|P)?\s*[0-9][0-9,.]*(?:\s*(?:and|to|-)\s*(?:PHP|₱|P)?\s*[0-9][0-9,.]*)?"
    r"\s*(?:PHP|pesos?|Philippine Peso)?",
    re.IGNORECASE,
)


def _name_of(text: str) -> str:
    """Search keywords of an item: its first line (template) or its text without price/service phrases."""
    first = text.strip().split("\n", 1)[0]
    if _NUMBERED_LINE_RE.search(text) or "`" in text:
        name = _NUMBERED_LINE_RE.sub("", first) if _NUMBERED_LINE_RE.match(first) else first
        name = _INTRO_RE.sub("", name).strip().rstrip(".")
        if "`" not in name:
            return name.replace(":", " ")
    name = _PRICE_PHRASE_RE.sub(" ", text)
    for pattern in SERVICE_PATTERNS.values():
        name = pattern.sub(" ", name)
    name = _INTRO_RE.sub("", name)
    return " ".join(name.replace("`", " ").split())


def _requirement_text(text: str) -> str:
    """The text that states requirements: numbered lines (template style) without backticked values."""
    lines = [ln for ln in text.split("\n") if _NUMBERED_LINE_RE.match(ln)]
    body = "\n".join(lines) if lines else text
    # Titles and values are quoted; words inside them ("COD", "Free Shipping") are not requirements.
    return re.sub(r"`[^`]*`|\"[^\"]*\"", " ", body)


def parse_item(text: str) -> ItemSpec:
    """Parse one item's requirements."""
    item = ItemSpec(text=text)
    if m := _TITLE_RE.search(text):
        item.title = m.group(1)
    for key, value in _PAIR_RE.findall(text):
        if key not in ("title", "price") and (key, value) not in item.pairs:
            item.pairs.append((key, value))
    item.price_lo, item.price_hi = _price_bounds(text)
    item.services = [s for s, pattern in SERVICE_PATTERNS.items() if pattern.search(_requirement_text(text))]
    item.name = _name_of(text)
    return item


def parse_query(query: str, category: str | None = None) -> QuerySpec:
    """Parse a request into items, shop/voucher requirements.

    Args:
        query: The user's request.
        category: The public task label (Product, Shop, Voucher, Web) when known; Product means one item.
    """
    body, voucher = parse_voucher(query)
    label = (category or "").lower()
    texts = [body.strip()] if label in ("product", "web") else _split_items(body)
    if len(texts) == 1 and (label in ("shop", "voucher") or voucher is not None):
        parts = [p.strip(" ,.;") for p in _ALSO_RE.split(texts[0]) if p.strip(" ,.;")]
        texts = parts or texts
    same_shop = label == "shop" or (label != "product" and bool(_SAME_SHOP_RE.search(body)))
    return QuerySpec(items=[parse_item(t) for t in texts], same_shop=same_shop, voucher=voucher, body=body)


__all__ = [
    "SERVICE_PATTERNS",
    "ItemSpec",
    "QuerySpec",
    "VoucherSpec",
    "parse_item",
    "parse_query",
    "parse_voucher",
]
