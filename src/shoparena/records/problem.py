"""Problem records: one :class:`Problem` for all four intents (environment spec §6).

A problem is a query plus hidden "reward" constraints (one :class:`RewardItem` per recommendation slot), an
optional :class:`Voucher` and, for the web/knowledge intent, the answer attribute and the full GT product.
Loading and writing the upstream files lives in :mod:`shoparena.suites.loaders`; this module holds the schema.
"""

from __future__ import annotations

import hashlib
import math
from enum import StrEnum
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

#: Price operators the scorers know; any other operator is kept and counted as a unit without a hit.
KNOWN_PRICE_OPS: tuple[str, ...] = ("between", "greater than", "less than")
#: ORO's difficulty labels; any other label is rejected at load time (it would form a bogus report group).
DIFFICULTIES: tuple[str, ...] = ("easy", "medium", "hard")
#: Largest accepted amount in PHP (price bounds, budgets, thresholds): upstream's largest is ~36,000, so a
#: billion can only be a broken record.
MAX_PESOS = 1e9


class Intent(StrEnum):
    """What the user asks for; selects the scorer path."""

    PRODUCT = "product"
    SHOP = "shop"
    VOUCHER = "voucher"
    WEB = "web"


#: ORO's category label for each intent (web has none upstream; ORO never runs it).
CATEGORY_OF_INTENT: dict[Intent, str] = {
    Intent.PRODUCT: "Product",
    Intent.SHOP: "Shop",
    Intent.VOUCHER: "Voucher",
    Intent.WEB: "Web",
}


def problem_id_for_query(query: str) -> str:
    """The stable id of a problem without an upstream id: ``sha256(query)[:16]`` (hex).

    >>> problem_id_for_query("red shoes")
    '61959b3a303f52c5'
    """
    return hashlib.sha256(query.encode("utf-8")).hexdigest()[:16]


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _check_amount(value: object, *, positive: bool = False) -> object:
    """A finite, non-negative (or positive) amount of at most :data:`MAX_PESOS`; booleans are refused."""
    if value is None:
        return value
    if not _is_number(value):
        raise ValueError(f"must be a number, got {type(value).__name__} {value!r}")
    if not math.isfinite(value) or value < 0 or value > MAX_PESOS or (positive and value == 0):
        bound = "> 0" if positive else ">= 0"
        raise ValueError(f"must be a finite amount {bound} and <= {MAX_PESOS:.0e}, got {value!r}")
    return value


class RewardItem(BaseModel):
    """The constraints of one recommendation slot (§6.2), in the upstream key order.

    Fields the source did not carry stay unset, so writers reproduce the source keys exactly.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    product_id: str = Field(min_length=1, description="The ground-truth product id (non-empty).")
    title: list[str] = Field(
        default_factory=list, description="Title constraints (upstream: one, the GT title)."
    )
    sku_options: list[dict[str, str]] = Field(
        default_factory=list, description="Dicts of (option key, value) pairs that one variant must hold."
    )
    attributes: list[dict[str, list[str]]] = Field(
        default_factory=list, description="Elements {key: [value, ...]}; each value is one unit."
    )
    service: list[str] = Field(default_factory=list, description="Required services (exact tokens).")
    price: list[dict[str, Any]] = Field(
        default_factory=list,
        description="Entries {op: [lo, hi]}; ops between / greater than / less than; unknown ops kept as-is.",
    )

    @field_validator("price")
    @classmethod
    def _price_entries(cls, value: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for entry in value:
            for op, bounds in entry.items():
                if op not in KNOWN_PRICE_OPS:
                    continue  # kept verbatim; the scorer counts it as a unit that never hits
                if not isinstance(bounds, list) or len(bounds) != 2:
                    raise ValueError(f"price op {op!r} needs [lo, hi], got {bounds!r}")
                lo, hi = bounds
                need_lo = op in ("between", "greater than")
                need_hi = op in ("between", "less than")
                if (need_lo and not _is_number(lo)) or (need_hi and not _is_number(hi)):
                    raise ValueError(f"price op {op!r} has a missing or non-numeric bound: {bounds!r}")
                for bound in (lo, hi):
                    if _is_number(bound):
                        try:
                            _check_amount(bound)
                        except ValueError as exc:
                            raise ValueError(f"price op {op!r} bound {exc}") from None
        return value

    @field_validator("product_id")
    @classmethod
    def _product_id(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must be a non-empty product id")
        return value

    def unit_count(self) -> int:
        """Countable constraints: titles + price ops + services + SKU pairs + attribute values."""
        return (
            len(self.title)
            + sum(len(entry) for entry in self.price)
            + len(self.service)
            + sum(len(opts) for opts in self.sku_options)
            + sum(len(vals) for attr in self.attributes for vals in attr.values())
        )

    def to_json_dict(self) -> dict[str, Any]:
        """The upstream dict: only the keys the source carried (or that were set), in upstream order."""
        return self.model_dump(mode="json", exclude_unset=True)


class Voucher(BaseModel):
    """A voucher (§6.3). An unknown ``discount_type`` is rejected at load time (upstream raises later)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    voucher_type: Literal["platform", "shop"]
    threshold: int | float = Field(description="Minimum total for the voucher to apply (T >= threshold).")
    discount_type: Literal["fixed", "percentage"]
    face_value: int | float | None = Field(default=None, description="Fixed discount (fixed vouchers).")
    discount: float | None = Field(
        default=None, description="Fraction in [0.10, 0.50] (percentage vouchers)."
    )
    cap: int | float | None = Field(default=None, description="Maximum saving (percentage vouchers).")
    price_after_voucher: float = Field(description="The GT total after the discount.")
    budget: int | float

    @field_validator("threshold", "face_value", "cap", "price_after_voucher", mode="before")
    @classmethod
    def _amounts(cls, value: object) -> object:
        return _check_amount(value)

    @field_validator("budget", mode="before")
    @classmethod
    def _budget(cls, value: object) -> object:
        return _check_amount(value, positive=True)

    @field_validator("discount", mode="before")
    @classmethod
    def _discount(cls, value: object) -> object:
        if value is not None and (not _is_number(value) or not 0 < value < 1):
            raise ValueError(f"must be a fraction strictly between 0 and 1, got {value!r}")
        return value

    @model_validator(mode="after")
    def _discount_fields(self) -> Voucher:
        if self.discount_type == "fixed" and self.face_value is None:
            raise ValueError("a fixed voucher needs face_value")
        if self.discount_type == "percentage" and (self.discount is None or self.cap is None):
            raise ValueError("a percentage voucher needs discount and cap")
        return self

    def recover_total(self) -> float:
        """The GT total T before the discount (spec §7.2), recovered from ``price_after_voucher``."""
        pav = self.price_after_voucher
        if self.discount_type == "fixed":
            return pav + float(self.face_value or 0)
        d = float(self.discount or 0)
        cap = float(self.cap or 0)
        total = pav / (1 - d) if d < 1 else pav + cap
        return total if total * d <= cap else pav + cap


class ProblemSource(BaseModel):
    """Where a problem was read from, for error messages and round trips."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    path: str = ""
    format: Literal["sb_jsonl", "oro_json", "inline"] = "inline"
    line: int | None = Field(default=None, description="1-based line number (JSONL sources).")
    index: int | None = Field(default=None, description="0-based array index (ORO JSON sources).")
    problem_id_given: bool = Field(default=False, description="True when the source carried problem_id.")
    reward_shape: Literal["dict", "list", "product"] | None = Field(
        default=None,
        description="The source's reward shape: one dict, a list, or a full product (web); None = natural.",
    )

    def describe(self) -> str:
        where = f"line {self.line}" if self.line is not None else f"index {self.index}"
        return f"{self.path or '<inline>'}:{where}"


class Problem(BaseModel):
    """One benchmark problem of any intent, keyed by ``problem_id`` and fingerprinted by ``content_hash``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: int = 1
    problem_id: str = Field(description="ORO's id, or sha256(query)[:16] when the source has none.")
    query: str = Field(min_length=1)
    intent: Intent
    category: str | None = Field(default=None, description="ORO category label: Product, Shop or Voucher.")
    difficulty: str | None = Field(default=None, description="ORO difficulty: easy, medium or hard.")
    title: str | None = Field(
        default=None, description="ORO display label such as 'Shop 4' (not a product title)."
    )
    reward: list[RewardItem] = Field(min_length=1, description="One constraint set per slot, in query order.")
    voucher: Voucher | None = None
    knowledge_attribute: str | int | None = Field(default=None, description="Web intent: the trivia answer.")
    web_product: dict[str, Any] | None = Field(
        default=None, description="Web intent: the full GT product object, kept verbatim (title is a string)."
    )
    reward_title_embeddings: dict[str, list[float]] | None = Field(
        default=None, description="ORO v3: reference-model vectors of the reward titles."
    )
    source: ProblemSource = Field(default_factory=ProblemSource)
    content_hash: str = Field(default="", description="sha256 of the canonical query + constraints.")

    @field_validator("difficulty")
    @classmethod
    def _difficulty(cls, value: str | None) -> str | None:
        if value is not None and value not in DIFFICULTIES:
            raise ValueError(f"unknown difficulty {value!r}; expected one of {', '.join(DIFFICULTIES)}")
        return value

    @model_validator(mode="after")
    def _consistency(self) -> Problem:
        if self.intent is Intent.VOUCHER and self.voucher is None:
            raise ValueError("a voucher problem needs a voucher object")
        if self.intent is not Intent.VOUCHER and self.voucher is not None:
            raise ValueError(f"a {self.intent.value} problem cannot carry a voucher")
        if self.intent in (Intent.PRODUCT, Intent.WEB) and len(self.reward) != 1:
            raise ValueError(
                f"a {self.intent.value} problem needs exactly one reward item, got {len(self.reward)}"
            )
        if self.intent is Intent.WEB:
            if self.knowledge_attribute is None:
                raise ValueError("a web problem needs Knowledge_Attribute")
            if self.web_product is None:
                raise ValueError("a web problem needs the full GT product as reward")
        if not self.content_hash:
            object.__setattr__(self, "content_hash", compute_content_hash(self))
        return self

    @property
    def category_label(self) -> str:
        """The ORO category when given, else the label of the intent (used to group reports)."""
        return self.category or CATEGORY_OF_INTENT[self.intent]

    @property
    def gt_ids(self) -> list[str]:
        """The GT product id of every slot, in slot order."""
        return [item.product_id for item in self.reward]

    def public_view(self) -> dict[str, Any]:
        """What an agent may see: never the reward, voucher object or embeddings."""
        view: dict[str, Any] = {"problem_id": self.problem_id, "query": self.query}
        view["category"] = self.category_label
        if self.difficulty is not None:
            view["difficulty"] = self.difficulty
        if self.title is not None:
            view["title"] = self.title
        return view


def compute_content_hash(problem: Problem) -> str:
    """sha256 of the canonical JSON of query, intent, constraints, voucher and answer."""
    payload = {
        "query": problem.query,
        "intent": problem.intent.value,
        "reward": [item.to_json_dict() for item in problem.reward],
        "voucher": problem.voucher.model_dump(mode="json") if problem.voucher else None,
        "knowledge_attribute": problem.knowledge_attribute,
    }
    return hashlib.sha256(orjson.dumps(payload, option=orjson.OPT_SORT_KEYS)).hexdigest()
