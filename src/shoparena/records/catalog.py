"""Catalog records: the upstream product document and its index line (environment spec §2)."""

from __future__ import annotations

import html
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

#: The only service tokens upstream knows, in their exact case.
SERVICES: tuple[str, ...] = ("official", "freeShipping", "COD", "flashsale")
Service = Literal["official", "freeShipping", "COD", "flashsale"]

#: Brand values upstream blanks out (compared case-insensitively).
JUNK_BRANDS = frozenset(
    {"nobrand", "no brand", "n/a", "na", "null", "none", "other", "others", "unknown", "new"}
)

MAX_TITLE_CHARS = 2000
#: Largest accepted count (``sold_count``): 2**53 - 1, the largest integer that JSON readers holding numbers
#: as float64 (JavaScript, numpy price/score arrays) keep exactly; it also fits the index's int64 column.
MAX_COUNT = 2**53 - 1
DigitString = Annotated[str, Field(pattern=r"^[0-9]+$")]


def _clean_text(value: str) -> str:
    return html.unescape(value).strip()


class Product(BaseModel):
    """One catalog product with every upstream field, in the upstream key order.

    Keys and values of ``sku_options`` and ``attributes`` are lower-cased on the way in, as upstream stores
    them; ``brand`` junk values become ``""``.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    product_id: DigitString = Field(description="Unique id, a string of digits; the lookup key.")
    shop_id: DigitString = Field(description="Shop id, compared as an exact string.")
    brand: str = Field(default="", description="Brand, '' when missing or junk.")
    category: str = Field(description="Category path of 2-6 levels joined by ' > '.")
    title: str = Field(min_length=1, max_length=MAX_TITLE_CHARS)
    short_description: str = ""
    description: str = ""
    specification: str = Field(default="", description="Free 'k:v;k:v' text.")
    price: float = Field(ge=0, allow_inf_nan=False, description="Price in PHP (finite, >= 0).")
    sold_count: int = Field(ge=0, le=MAX_COUNT, description="Sales volume, 0..2**53-1.")
    sku_options: dict[str, dict[str, str]] = Field(
        default_factory=dict, description="Variant index '1'..'9' -> {option_key: option_value}, lower-case."
    )
    attributes: dict[str, list[str]] = Field(
        default_factory=dict, description="Lower-case key -> list of lower-case values."
    )
    main_image_url: str = ""
    product_url: str = ""
    service: list[Service] = Field(default_factory=list)

    @field_validator("title", "short_description", "description", "specification", mode="before")
    @classmethod
    def _unescape(cls, value: object) -> object:
        return _clean_text(value) if isinstance(value, str) else value

    @field_validator("price", "sold_count", mode="before")
    @classmethod
    def _not_boolean(cls, value: object) -> object:
        # JSON true/false would otherwise pass as 1/0: a boolean in a number field is a broken record.
        if isinstance(value, bool):
            raise ValueError(f"must be a number, got the boolean {str(value).lower()}")
        return value

    @field_validator("brand", mode="before")
    @classmethod
    def _brand(cls, value: object) -> object:
        if value is None:
            return ""
        if isinstance(value, str):
            value = value.strip()
            return "" if value.lower() in JUNK_BRANDS else value
        return value

    @field_validator("category")
    @classmethod
    def _category(cls, value: str) -> str:
        levels = value.split(" > ")
        if not 1 <= len(levels) <= 6 or any(not level.strip() for level in levels):
            raise ValueError(f"category must be 1-6 non-empty levels joined by ' > ', got {value!r}")
        return value

    @field_validator("sku_options", mode="before")
    @classmethod
    def _lower_sku(cls, value: object) -> object:
        if isinstance(value, dict):
            return {
                str(idx): {str(k).lower(): str(v).lower() for k, v in opts.items()}
                if isinstance(opts, dict)
                else opts
                for idx, opts in value.items()
            }
        return value

    @field_validator("sku_options")
    @classmethod
    def _variant_keys(cls, value: dict[str, dict[str, str]]) -> dict[str, dict[str, str]]:
        if len(value) > 9:
            raise ValueError(f"at most 9 SKU variants, got {len(value)}")
        expected = [str(i) for i in range(1, len(value) + 1)]
        if sorted(value, key=lambda k: (len(k), k)) != expected:
            raise ValueError(f"variant keys must be consecutive '1'..'{len(value)}', got {list(value)}")
        return value

    @field_validator("attributes", mode="before")
    @classmethod
    def _lower_attrs(cls, value: object) -> object:
        if isinstance(value, dict):
            return {
                str(k).lower(): [str(v).lower() for v in vals] if isinstance(vals, list) else vals
                for k, vals in value.items()
            }
        return value

    @field_validator("service")
    @classmethod
    def _dedup_service(cls, value: list[str]) -> list[str]:
        return list(dict.fromkeys(value))

    def sku_values(self) -> list[str]:
        """Distinct SKU option values in first-seen order."""
        return list(dict.fromkeys(v for opts in self.sku_options.values() for v in opts.values()))

    def attribute_values(self) -> list[str]:
        """Distinct attribute values in first-seen order."""
        return list(dict.fromkeys(v for vals in self.attributes.values() for v in vals))


def build_contents(product: Product) -> str:
    """The only searchable text, built as upstream does: title, SKU values, attribute values, one per line."""
    return "\n".join([product.title, " ".join(product.sku_values()), " ".join(product.attribute_values())])


class IndexLine(BaseModel):
    """One line of ``documents.jsonl``: ``{id, contents, product}``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    contents: str
    product: Product

    @model_validator(mode="after")
    def _id_matches(self) -> IndexLine:
        if self.id != self.product.product_id:
            raise ValueError(f"id {self.id!r} differs from product.product_id {self.product.product_id!r}")
        return self

    @classmethod
    def from_product(cls, product: Product) -> IndexLine:
        return cls(id=product.product_id, contents=build_contents(product), product=product)


class ProductHit(BaseModel):
    """A ``find_product`` result item (§2.3 field order)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    product_id: str
    shop_id: str
    title: str
    price: float
    service: list[str]
    sold_count: int


class ProductView(BaseModel):
    """A ``view_product_information`` item: no title, no price (§2.3)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    product_id: str
    short_description: str
    description: str
    sku_options: dict[str, dict[str, str]]
    attributes: dict[str, list[str]]
