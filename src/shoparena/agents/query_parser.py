"""Rule-based parsing of shopping requests into per-item search specs (used by the ``planner`` agent).

Three styles are handled:

* the template style of upstream's prompts (numbered requirement lines with backticked values, ``## Product
  i`` groups);
* the natural-language requests written by :mod:`shoparena.suites.queries` (several phrasings per price
  operator and service, bullets, ``(1) ... (2) ...`` and ``First, ... Lastly, ...`` enumerations);
* upstream free text (GPT-4.1 rewrites such as "I'm looking for a ... in grey, size XS, priced between 180
  and 505 pesos, with free shipping"), best effort: comma/"and" lists of items, "and also", "For the X, ..."
  follow-up sentences.

Listed items (bullets, numbered lines, ``(1) ... (2) ...``, ``First, ... Also, ... Lastly, ...``) are read
by :func:`shoparena.formats.profiles.listed_items`, the one home of request-item splitting, so the planner's
items are the values of the compact render profile's listed ``U`` handles; the free-text heuristics above
apply only to a request that lists fewer than two items.

The exact voucher appendix of spec §6.3 is split off first. SKU/attribute values are *not* guessed from free
text here: the planner matches the values it sees in ``view_product_information`` results against
:attr:`ItemSpec.value_text` (see :func:`mentioned_values`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Literal

from shoparena.formats.profiles import listed_items

# ----------------------------------------------------------------------------------------------- prices

_NUMBER = r"(?<![A-OQ-Za-oq-z0-9.,])([0-9][0-9,]*(?:\.[0-9]+)?)"  # not inside a code like "m8"
_CUR_PRE = r"(?:(?:PHP|Php|php|₱|\bP)\s?)"
_CUR_POST = r"(?:\s*(?:PHP|Php|php|pesos?|Pesos?|Philippine\s+Pesos?|₱))"
_MONEY = rf"{_CUR_PRE}?{_NUMBER}{_CUR_POST}?"
_PRICE_WORD_RE = re.compile(r"pric|cost|budget|spend|pay|php|peso|₱", re.IGNORECASE)
_BETWEEN_RES = (
    re.compile(rf"\bbetween\s+{_MONEY}\s*(?:and|to|-|–)\s*{_MONEY}", re.IGNORECASE),
    re.compile(rf"\bfrom\s+{_MONEY}\s*(?:to|-|–|up to|and)\s*{_MONEY}", re.IGNORECASE),
    re.compile(rf"\brange\s+(?:of\s+)?{_MONEY}\s*(?:to|-|–|and)\s*{_MONEY}", re.IGNORECASE),
    re.compile(rf"(?<![\w.]){_MONEY}\s*(?:-|–|to)\s*{_MONEY}", re.IGNORECASE),
)
_LOWER_RES = (
    re.compile(
        rf"\b(?<!no )(?<!not )(?:over|above|more than|at least|greater than|higher than|exceeding|"
        rf"a minimum of|minimum of|min\.?|starting (?:at|from)|no less than|not less than|upwards of|"
        rf"not below|no lower than)\s+"
        rf"{_MONEY}",
        re.IGNORECASE,
    ),
    re.compile(
        rf"(?:\bfrom\s+)?{_MONEY}\s+(?:or more|and above|and up|or higher|or above|upwards|onwards|and over|"
        rf"or over|minimum)\b",
        re.IGNORECASE,
    ),
)
_UPPER_RES = (
    re.compile(
        rf"\b(?:under|below|(?<!no )(?<!not )less than|at most|cheaper than|up to|a maximum of|maximum of|"
        rf"max\.?|no more than|not more than|within|not exceeding|no higher than|not above)\s+{_MONEY}",
        re.IGNORECASE,
    ),
    re.compile(rf"{_MONEY}\s+(?:or less|and below|or below|or under|at most|maximum|max)\b", re.IGNORECASE),
)
# Template lines (``The `price` is between `lo` and `hi` ...``) state their bounds in backticks.
_T_BETWEEN = re.compile(r"`price` (?:is )?between `([0-9.]+)` and `([0-9.]+)`")
_T_GREATER = re.compile(r"`price` (?:is )?greater than `([0-9.]+)`")
_T_LESS = re.compile(r"`price` (?:is )?less than `([0-9.]+)`")
# Whole price phrases (with their verbs) are cut out of the search text and the value text.
_PRICE_LEAD = re.compile(
    r"(?:,?\s*(?:and\s+)?(?:that\s+|which\s+|it\s+)?(?:is\s+|are\s+)?(?:priced|costing|costs?|"
    r"with a price of|with a price|at a price of|a price of|price[sd]?|for|in the)\s*"
    r"(?:of\s+|at\s+|is\s+|should be\s+)?)$",
    re.IGNORECASE,
)
_PRICE_TAIL = re.compile(r"^\s*(?:price range|range)\b", re.IGNORECASE)

# ----------------------------------------------------------------------------------------------- services

SERVICE_PATTERNS: dict[str, re.Pattern[str]] = {
    "freeShipping": re.compile(
        r"free\s+(?:shipping|delivery)|ships?\s+(?:for\s+)?free|complimentary\s+(?:shipping|delivery)|"
        r"shipping\s+(?:is\s+)?free|free\s+ship\b|no shipping fee",
        re.IGNORECASE,
    ),
    "COD": re.compile(
        r"cash[\s-]+on[\s-]+delivery|pay(?:ment)?\s+(?:for\s+)?(?:it\s+)?(?:up)?on\s+delivery|"
        r"(?-i:\bCOD\b)",
        re.IGNORECASE,
    ),
    "official": re.compile(r"laz\s?mall|official (?:store|shop|seller|brand store)", re.IGNORECASE),
    "flashsale": re.compile(r"laz\s?flash|flash[\s-]?sale|flash deal", re.IGNORECASE),
}
# A service phrase with its verb ("that ships for free", "with COD payment", "on a LazFlash deal").
_SERVICE_LEAD = re.compile(
    r"(?:,?\s*(?:and\s+)?(?:that\s+|which\s+|it\s+)?(?:comes?\s+with|available\s+(?:with|for)|offers?|"
    r"offering|supports?|with|has|from|sold\s+by|on|currently\s+in|in|via|for|I\s+can)?\s*"
    r"(?:an?\s+|the\s+)?)$",
    re.IGNORECASE,
)
_SERVICE_TAIL = re.compile(
    r"^\s*(?:\(COD\)|\(LazMall\)|\(LazFlash\)|payment|service|store|shop|official shop|deal|benefits?)\b",
    re.IGNORECASE,
)

# ----------------------------------------------------------------------------------------------- structure

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
_SAME_SHOP_RE = re.compile(
    r"same (?:shop|store|seller)|\bone (?:shop|store|seller)\b|single (?:shop|store|seller)|"
    r"\ba (?:shop|store|seller) (?:that|which|offering|selling|where)|shops? offering|"
    r"(?:shop|store|seller) that (?:sells|offers|has|carries)",
    re.IGNORECASE,
)
_ALSO_RE = re.compile(r",?\s+and also\s+|\.\s+Also,?\s+|;\s+(?:and\s+)?", re.IGNORECASE)
_LIST_SPLIT_RE = re.compile(
    r"\s*(?:,\s*(?:and\s+|plus\s+|as well as\s+)?|\s+and\s+|\s+plus\s+|\s+as well as\s+)"
    r"(?=(?:a|an|some|one|two|the|another|also)\s)",
    re.IGNORECASE,
)
_FOR_THE_RE = re.compile(r"^(?:For|As for|Regarding)\s+the\s+([^,:]+)[,:]\s*", re.IGNORECASE)
_NUMBERED_LINE_RE = re.compile(r"^\s*\d+\.\s+", re.MULTILINE)
_INTRO_RE = re.compile(
    r"^\s*(?:(?:hi|hello|hey)[,!.]?\s+)?(?:please,?\s+)?(?:also,?\s+)?(?:I'm looking for|I am looking for|"
    r"I'm shopping for|I'm searching for|Looking for|Look for|Searching for|Search for|Can you find me|"
    r"Can you find|Could you find|Can you show me|Show me|I need|I'd like to buy|I'd like|I would like|"
    r"I want to buy|I want|Help me find|Please find|Find me|Find|Get me|Get|Buy|Do you have|I'm after)\b\s*",
    re.IGNORECASE,
)
_CHATTER_RE = re.compile(
    r"\b(?:shop|store|seller|shops|stores|sellers|recommend|suggestions?|help|thanks|thank you)\b",
    re.IGNORECASE,
)
# Words that start a modifier: the item's head noun phrase ends before the first of them.
_MODIFIER_RE = re.compile(
    r"\s(?:with|in|from|by|of|made|crafted|priced|costing|costs?|that|which|whose|having|where|for|on|"
    r"under|over|above|below|between|sold|available|featuring|and|is|are|should|must|it)\b|[,;(.!?]|"
    r"\ssize\s+(?=\S*[0-9:]|\S{1,4}\b)",
    re.IGNORECASE,
)
_LEAD_ARTICLE_RE = re.compile(r"^\s*(?:a|an|some|the|one|a pair of|a set of|a pack of|pairs? of)\s+", re.I)


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

    def total_after(self, total: float) -> float:
        """The basket total after the discount (ignoring scope and threshold)."""
        if self.discount_type == "fixed":
            return total - self.face_value
        return max(total * (1 - self.discount), total - self.cap)

    def total_ok(self, total: float, n_shops: int) -> bool:
        """The scorer's budget rule (spec §8.3) for a basket of price ``total`` from ``n_shops`` shops."""
        if total <= self.budget:
            return True
        if self.voucher_type == "shop" and n_shops != 1:
            return False
        if total < self.threshold:
            return False
        return self.total_after(total) <= self.budget


@dataclass(slots=True)
class ItemSpec:
    """What one requested product must satisfy, as far as the text says.

    Attributes:
        text: The item's raw text.
        name: The item's head noun phrase (title words and category), the core search text.
        search_text: The item's text without price/service phrases and filler (the full search text).
        value_text: Lower-cased text after the head in which SKU/attribute values are looked for (price
            phrases removed).
        head_text: The head noun phrase as written, lower-cased (values there may just be title words).
        title: An exact title, when the query states one (template style).
        pairs: Explicit (key, value) requirements (template style; the scorer pools SKU and attributes).
        price_lo: Inclusive lower bound.
        price_hi: Inclusive upper bound.
        services: Required service tokens.
    """

    text: str
    name: str = ""
    search_text: str = ""
    value_text: str = ""
    head_text: str = ""
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
        """The ``find_product`` service parameter (comma list), None for none."""
        return ",".join(self.services) or None

    def price_ok(self, price: float) -> bool:
        """Whether ``price`` meets the stated bounds (inclusive)."""
        return (self.price_lo is None or price >= self.price_lo) and (
            self.price_hi is None or price <= self.price_hi
        )

    def unit_count(self) -> int:
        """Checkable units known from the text (explicit pairs, price bound, services)."""
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


# ----------------------------------------------------------------------------------------------- splitting


def _depth0_split(text: str, pattern: re.Pattern[str]) -> list[str]:
    """Split on ``pattern`` outside parentheses."""
    depth_at, depth = [], 0
    for ch in text:
        depth += ch == "("
        depth_at.append(depth)
        if ch == ")" and depth > 0:
            depth -= 1
    parts, start = [], 0
    for m in pattern.finditer(text):
        if m.start() < len(text) and depth_at[m.start()] == 0:
            parts.append(text[start : m.start()])
            start = m.end()
    parts.append(text[start:])
    return parts


def _item_texts(body: str) -> list[str]:
    """Item texts of a multi-item request: ``## Product i`` groups (template style), else the items the
    request lists (:func:`shoparena.formats.profiles.listed_items`, the compact profile's ``U`` lines), else
    the whole body."""
    if _SECTION_RE.search(body):
        parts = _SECTION_RE.split(body)
        return [p.strip() for p in parts[1:] if p.strip()]
    listed = listed_items(body)
    return listed if len(listed) >= 2 else [body.strip()]


def _split_free_list(text: str) -> list[str]:
    """Split one free-text sentence listing several items ("a X, a Y and a Z"); [text] if no list."""
    sentences = re.split(r"(?<=[.!?])\s+(?=[A-Z])", text.strip())
    lead, follow = sentences[0], sentences[1:]
    lead = re.sub(r"\b(?:both|either)\s+", "", lead, count=1, flags=re.IGNORECASE)
    # The list usually follows "offering/sells/...:"; cut the intro so its words stay out of item 1.
    intro = re.search(
        r"(?:offer(?:s|ing)?|sell(?:s|ing)?|carr(?:y|ies|ying)|ha(?:s|ve)|stock(?:s|ing)?|"
        r"of these|the following|these items|these products|items|products)\s*:?\s+(?=(?:a|an|some|the)\s)",
        lead,
        re.IGNORECASE,
    )
    body = lead[intro.end() :] if intro else lead
    parts = [p.strip(" ,.;") for p in _depth0_split(body, _LIST_SPLIT_RE) if p.strip(" ,.;")]
    if not 2 <= len(parts) <= 4:
        return [text.strip()]
    # Follow-up sentences: "For the blouse, it should be cotton ..." go to the item they name.
    orphan = []
    for sentence in follow:
        m = _FOR_THE_RE.match(sentence)
        if not m:
            orphan.append(sentence)
            continue
        words = set(_words(m.group(1)))
        best = max(range(len(parts)), key=lambda i: len(words & set(_words(parts[i]))))
        parts[best] = f"{parts[best]}. {sentence[m.end() :]}"
    if orphan and not all(_CHATTER_RE.search(s) for s in orphan):
        parts[-1] = " ".join([parts[-1], *[s for s in orphan if not _CHATTER_RE.search(s)]])
    return parts


def _words(text: str) -> list[str]:
    return [w.rstrip("s") for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) > 2]


# ----------------------------------------------------------------------------------------------- one item


def _price_spans(text: str) -> tuple[float | None, float | None, list[tuple[int, int]]]:
    """Price bounds and the spans of the phrases that state them."""
    spans: list[tuple[int, int]] = []
    if m := _T_BETWEEN.search(text):
        return _num(m.group(1)), _num(m.group(2)), [m.span()]
    if m := _T_GREATER.search(text):
        return _num(m.group(1)), None, [m.span()]
    if m := _T_LESS.search(text):
        return None, _num(m.group(1)), [m.span()]

    def pricey(m: re.Match[str], strict: bool = False) -> bool:
        # A currency next to the number, or a price word just before: "size 0-3 months" is no price.
        cur = re.search(rf"{_CUR_PRE}[0-9]|[0-9]{_CUR_POST}", m.group(0)) is not None
        if cur or strict:
            return cur
        return bool(_PRICE_WORD_RE.search(text[max(0, m.start() - 30) : m.end()]))

    lo = hi = None
    for strict, pattern in zip((False, False, False, True), _BETWEEN_RES, strict=True):
        for m in pattern.finditer(text):
            if pricey(m, strict) and _num(m.group(1)) <= _num(m.group(2)):
                lo, hi = _num(m.group(1)), _num(m.group(2))
                spans.append(m.span())
                break
        if spans:
            break
    if lo is None:
        for pattern in _LOWER_RES:
            m = next((m for m in pattern.finditer(text) if pricey(m)), None)
            if m:
                lo = _num(m.group(1))
                spans.append(m.span())
                break
    if hi is None:
        for pattern in _UPPER_RES:
            m = next((m for m in pattern.finditer(text) if pricey(m) and m.span() not in spans), None)
            if m and not any(s <= m.start() < e for s, e in spans):
                hi = _num(m.group(1))
                spans.append(m.span())
                break
    return lo, hi, spans


def _service_spans(text: str) -> tuple[list[str], list[tuple[int, int]]]:
    # Inch marks (10") are not quotes.
    quoted = [m.span() for m in re.finditer(r"`[^`]*`|(?<![0-9])\"[^\"\n]{1,200}\"", text)]
    services, spans = [], []
    for service, pattern in SERVICE_PATTERNS.items():
        for m in pattern.finditer(text):
            # Words inside quoted titles or values ("Box COD Free Shipping") are not requirements.
            if any(s <= m.start() < e for s, e in quoted):
                continue
            if service not in services:
                services.append(service)
            spans.append(m.span())
    return services, spans


def _cut(text: str, spans: Iterable[tuple[int, int]], *, leads: Sequence[re.Pattern[str]] = ()) -> str:
    """``text`` with the spans (and the verb phrases right before them) replaced by a comma."""
    out, pos = [], 0
    for start, end in sorted(spans):
        if start < pos:
            continue
        chunk = text[pos:start]
        for lead in leads:
            if m := lead.search(chunk):
                chunk = chunk[: m.start()]
        out.append(chunk)
        out.append(", ")
        pos = end
        rest = text[pos:]
        for tail in (_PRICE_TAIL, _SERVICE_TAIL):
            if m := tail.match(rest):
                pos += m.end()
    out.append(text[pos:])
    return "".join(out)


_OUTRO_RE = re.compile(
    r"\s*(?:\bis what I(?:'m| am)? (?:need|want|looking for)\b|(?<=[.!?])\s*(?:Any suggestions|"
    r"What would you recommend|Which one would you recommend|Can you help|Thanks|Thank you|Please help)"
    r"[^.!?]*[.!?]?)",
    re.IGNORECASE,
)


def _head_split(text: str) -> tuple[str, str]:
    """(head noun phrase as written, the rest) of an item text without its intro."""
    t = _LEAD_ARTICLE_RE.sub("", text.strip())
    # Category leaves may hold a comma list: "comforters, quilts & duvets".
    m = re.match(r"[^,;()]+(?:,\s*[^,;()\s]+(?:\s[^,;()\s&]+)?)+\s*&\s*[^,;()\s]+", t)
    if m and not _MODIFIER_RE.search(" " + m.group(0)[: m.group(0).find(",")]):
        rest = t[m.end() :]
        paren = re.match(r"\s*\(([^():]+)\)", rest)
        end = m.end() + (paren.end() if paren else 0)
        return t[:end], t[end:]
    m = re.match(r"([^,;(]+?)\s*\(([^():]+)\)", t)
    if m and not re.search(r"\s(?:with|in|from|by|of|made|priced|that|whose|having)\s", m.group(1)):
        return t[: m.end()], t[m.end() :]
    cut = _MODIFIER_RE.search(" " + t)
    if not cut:
        return t, ""
    return t[: max(0, cut.start() - 1)], t[max(0, cut.start() - 1) :]


def head_phrase(text: str) -> str:
    """The item's head noun phrase: its text from the start up to the first modifier word (a parenthesised
    group right after it, "a leaf (title words)", is kept and put first)."""
    head, _ = _head_split(_INTRO_RE.sub("", text.strip(), count=1))
    m = re.match(r"([^;(]+?)\s*\(([^():]+)\)", head)
    if m:
        head = f"{m.group(2)} {m.group(1)}"
    return " ".join(head.split()) or " ".join(text.split()[:4])


def parse_item(text: str) -> ItemSpec:
    """Parse one item's requirements."""
    item = ItemSpec(text=text)
    if m := _TITLE_RE.search(text):
        item.title = m.group(1)
    for key, value in _PAIR_RE.findall(text):
        if key not in ("title", "price") and (key, value) not in item.pairs:
            item.pairs.append((key, value))
    item.price_lo, item.price_hi, price_spans = _price_spans(text)
    templated = bool(_NUMBERED_LINE_RE.search(text)) and "`" in text
    # Template style states services on its numbered lines; the name line holds title words ("cod").
    lines = [ln for ln in text.split("\n") if _NUMBERED_LINE_RE.match(ln)] if templated else [text]
    item.services, _ = _service_spans("\n".join(lines))
    cleaned = _cut(text, price_spans, leads=[_PRICE_LEAD])
    _, service_spans = _service_spans(cleaned)
    searchable = _cut(cleaned, service_spans, leads=[_SERVICE_LEAD])
    if templated:
        first = text.strip().split("\n", 1)[0]
        first = _NUMBERED_LINE_RE.sub("", first) if _NUMBERED_LINE_RE.match(first) else first
        name = _INTRO_RE.sub("", first).strip().rstrip(".").replace(":", " ")
        item.name = "" if "`" in name else " ".join(name.split())
        values = " ".join(v for _, v in item.pairs)
        item.search_text = f"{item.name} {values}".strip()
        item.value_text = values.lower()
        return item
    body = _OUTRO_RE.sub(" ", _INTRO_RE.sub("", cleaned.strip(), count=1))
    head, rest = _head_split(body)
    item.name = head_phrase(body)
    item.head_text = " ".join(head.lower().split())
    item.value_text = " ".join(rest.lower().split())
    search = _OUTRO_RE.sub(" ", _INTRO_RE.sub("", searchable.strip(), count=1))
    item.search_text = " ".join(re.sub(r"[`\"(),;:]", " ", search).split()).strip(" ,.;?!")
    return item


def parse_query(query: str, category: str | None = None) -> QuerySpec:
    """Parse a request into items, shop/voucher requirements.

    Args:
        query: The user's request.
        category: The public task label (Product, Shop, Voucher, Web) when known; Product/Web mean one item.
    """
    body, voucher = parse_voucher(query)
    label = (category or "").lower()
    multi = label in ("shop", "voucher") or voucher is not None
    texts = [body.strip()] if label in ("product", "web") else _item_texts(body)
    if len(texts) == 1 and multi:
        parts = [p.strip(" ,.;") for p in _ALSO_RE.split(texts[0]) if p.strip(" ,.;")]
        if len(parts) >= 2:
            texts = parts
        elif label == "shop" or (voucher is not None and voucher.voucher_type == "shop"):
            # A shop basket always has several items: try a free-text list.
            texts = _split_free_list(texts[0])
    same_shop = label == "shop" or (label not in ("product", "web") and bool(_SAME_SHOP_RE.search(body)))
    return QuerySpec(items=[parse_item(t) for t in texts], same_shop=same_shop, voucher=voucher, body=body)


# ----------------------------------------------------------------------------------------------- values


@lru_cache(maxsize=131072)
def value_pattern(value: str) -> re.Pattern[str]:
    """A pattern for ``value`` as a whole phrase (no letter or digit glued to either side)."""
    return re.compile(r"(?<![a-z0-9])" + re.escape(value.lower()) + r"(?![a-z0-9])")


_VALUE_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "of",
        "in",
        "on",
        "to",
        "by",
        "for",
        "with",
        "from",
        "at",
        "is",
        "are",
        "it",
        "as",
        "be",
        "no",
        "yes",
        "any",
        "all",
        "other",
        "none",
        "na",
        "n/a",
        "default",
    ]
)


def _key_words(key: str) -> set[str]:
    words = {w for w in re.split(r"[_\s]+", key.lower()) if w and w not in ("hb", "fa", "family")}
    for w in list(words):
        words |= set(_KEY_SYNONYMS.get(w, ()))
    return words


_KEY_SYNONYMS: dict[str, tuple[str, ...]] = {
    "color": ("colour",),
    "variation": ("variant", "option"),
    "pattern": ("print",),
    "material": ("fabric",),
}


def key_named(text: str, key: str) -> bool:
    """Whether the text names the key (a word of it or a common synonym)."""
    words = set(re.findall(r"[a-z0-9]+", text.lower()))
    return bool(words & _key_words(key))


def mentioned_values(text: str, pairs: Iterable[tuple[str, str]]) -> set[str]:
    """The values of the (key, value) ``pairs`` that the lower-cased ``text`` states.

    A value counts when it occurs as a whole phrase at least once *outside* the occurrence of a longer
    mentioned value ("red" inside "wine red" does not count). Filler values ("no", "other") and one-letter
    values ("m") count only when the text also names their key ("where the induction compatible is no").
    """
    keys: dict[str, set[str]] = {}
    for key, value in pairs:
        v = str(value).lower().strip()
        if v and len(v) <= 80:
            keys.setdefault(v, set()).add(str(key))
    spans: dict[str, list[tuple[int, int]]] = {}
    for value, owners in keys.items():
        if (value in _VALUE_STOP or len(value) == 1) and not (
            any(key_named(text, k) for k in owners)
            or re.search(rf"\b(?:by|from) (?:the )?{re.escape(value)}\b|\b{re.escape(value)} brand\b", text)
        ):
            continue
        found = [m.span() for m in value_pattern(value).finditer(text)]
        if found:
            spans[value] = found
    out = set()
    for value, occ in spans.items():
        for start, end in occ:
            inside = any(
                len(other) > len(value) and any(s <= start and end <= e for s, e in spans[other])
                for other in spans
            )
            if not inside:
                out.add(value)
                break
    return out


__all__ = [
    "SERVICE_PATTERNS",
    "ItemSpec",
    "QuerySpec",
    "VoucherSpec",
    "head_phrase",
    "key_named",
    "mentioned_values",
    "parse_item",
    "parse_query",
    "parse_voucher",
    "value_pattern",
]
