"""Stream-read and stream-write catalogs in the upstream index-line format.

Records are split on ``\\n`` only (never ``str.splitlines``: upstream files hold raw U+0085), files may be
gzip compressed (by suffix ``.gz``), and the whole file is never held in memory. Every line ends up kept or
quarantined with its line number and the reason, and :class:`LoadSummary` counts add up.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from shoparena.jsonl import iter_raw_lines, open_binary
from shoparena.records.catalog import (
    JUNK_BRANDS,
    MAX_COUNT,
    MAX_TITLE_CHARS,
    DigitString,
    IndexLine,
    Product,
    Service,
    build_contents,
)


class CatalogLoadError(ValueError):
    """Raised in strict mode on the first bad line; names the line and the field."""


@dataclass(slots=True)
class QuarantinedLine:
    line_no: int
    reason: str
    raw: str

    def to_json(self) -> bytes:
        return orjson.dumps({"line_no": self.line_no, "reason": self.reason, "raw": self.raw})


@dataclass(slots=True)
class LoadSummary:
    """Accounting of one catalog read: ``read == kept + quarantined`` always holds."""

    path: str
    read: int = 0
    kept: int = 0
    quarantined: int = 0
    reasons: dict[str, int] = field(default_factory=dict)
    #: Physical (1-based) line number of the record read last: lets consumers of a stream name lines.
    line_no: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "read": self.read,
            "kept": self.kept,
            "quarantined": self.quarantined,
            "reasons": dict(self.reasons),
        }


class SamePathError(ValueError):
    """An output path that names an input: writing it would destroy the input before it is read."""


def ensure_not_input(output: str | Path, *inputs: str | Path, option: str = "output") -> None:
    """Refuse an output path that is one of the inputs (same file, also through links).

    Raises:
        SamePathError: naming the option and the path.
    """
    out = Path(output)
    for item in inputs:
        src = Path(item)
        same = out.resolve() == src.resolve()
        if not same and out.exists() and src.exists():
            same = out.samefile(src)
        if same:
            raise SamePathError(f"{option} {output} is the input file {item}; writing it would destroy it")


def json_error_reason(raw: bytes | str, exc: orjson.JSONDecodeError) -> str:
    """``invalid JSON: ...`` with the real position; orjson reports bad UTF-8 anywhere as column 1."""
    if isinstance(raw, bytes) and "UTF-8" in str(exc):
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as uerr:
            return f"invalid UTF-8: {uerr.reason} at byte {uerr.start} (column {uerr.start + 1})"
    return f"invalid JSON: {exc}"


def _describe_validation_error(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:5]:
        loc = ".".join(str(p) for p in err["loc"]) or "<root>"
        parts.append(f"{loc}: {err['msg']}")
    return "; ".join(parts)


def parse_index_line(raw: bytes | str, *, rebuild_contents: bool = False) -> IndexLine:
    """Parse one upstream line. Accepts a bare product object too and builds ``id``/``contents`` for it."""
    data = orjson.loads(raw)
    if not isinstance(data, dict):
        raise ValueError(f"expected a JSON object, got {type(data).__name__}")
    if "product" not in data and "product_id" in data:
        product = Product.model_validate(data)
        return IndexLine.from_product(product)
    line = IndexLine.model_validate(data)
    if rebuild_contents:
        line = IndexLine.from_product(line.product)
    return line


class CleanProduct(BaseModel):
    """A :class:`~shoparena.records.catalog.Product` that needed no cleaning, validated in Rust only.

    Same fields, order, types and constraints as ``Product`` (a test holds them equal), so its JSON is
    ``Product``'s byte for byte; strict types and no Python validators. A record is accepted as one only
    when ``Product``'s validators would change nothing (:func:`_needs_cleaning`); anything else goes
    through ``Product``, which cleans it or names the bad field.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    product_id: DigitString
    shop_id: DigitString
    brand: str = ""
    category: str
    title: str = Field(min_length=1, max_length=MAX_TITLE_CHARS)
    short_description: str = ""
    description: str = ""
    specification: str = ""
    price: float = Field(ge=0, allow_inf_nan=False)
    sold_count: int = Field(ge=0, le=MAX_COUNT)
    sku_options: dict[str, dict[str, str]] = Field(default_factory=dict)
    attributes: dict[str, list[str]] = Field(default_factory=dict)
    main_image_url: str = ""
    product_url: str = ""
    service: list[Service] = Field(default_factory=list)


class CleanIndexLine(BaseModel):
    """An :class:`~shoparena.records.catalog.IndexLine` whose product is a :class:`CleanProduct`."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    id: str
    contents: str
    product: CleanProduct


#: The variant keys ``Product`` accepts for n variants: exactly "1".."n".
_VARIANT_KEYS = [frozenset(str(i) for i in range(1, n + 1)) for n in range(10)]


def _needs_cleaning(line: CleanIndexLine) -> bool:
    """Whether ``Product``/``IndexLine`` validation would change or refuse anything of ``line``."""
    p = line.product
    if line.id != p.product_id:
        return True
    for text in (p.title, p.short_description, p.description, p.specification):
        if text.strip() != text or ("&" in text and html.unescape(text) != text):
            return True
    brand = p.brand
    if brand.strip() != brand or brand.lower() in JUNK_BRANDS:
        return True
    levels = p.category.split(" > ")
    if len(levels) > 6 or not all(map(str.strip, levels)):
        return True
    service = p.service
    if len(service) > 1 and len(set(service)) != len(service):
        return True
    sku = p.sku_options
    if sku:
        if len(sku) > 9 or sku.keys() != _VARIANT_KEYS[len(sku)]:
            return True
        for options in sku.values():
            for key, value in options.items():
                if key.lower() != key or value.lower() != value:
                    return True
    for key, values in p.attributes.items():
        if key.lower() != key:
            return True
        for value in values:
            if value.lower() != value:
                return True
    return False


_validate_clean_json = CleanIndexLine.model_validate_json


class IndexedLine(NamedTuple):
    """A kept catalog line as the index build reads it."""

    line: IndexLine | CleanIndexLine
    #: ``line.product.model_dump_json()`` as bytes: the product's JSON in the upstream key order.
    product_json: bytes


def parse_index_line_fast(raw: bytes | str) -> IndexedLine:
    """:func:`parse_index_line` with a fast path for lines that need no cleaning, plus the product's JSON.

    A line is parsed and validated against :class:`CleanIndexLine` in one pass by pydantic-core (its JSON
    parser accepts what orjson accepts, and gives the same values: ``tests/catalog/test_fast_parse.py``);
    when that fails or :func:`_needs_cleaning` says ``Product`` would change something,
    :func:`parse_index_line` runs on the same bytes, so errors, cleaned values and quarantine reasons are
    exactly ``IndexLine``'s. The product's JSON is ``orjson.dumps`` of the validated fields (in
    ``Product``'s order, the price a float): orjson writes every string, integer and float as pydantic's
    serializer does (a test holds them equal), in a fifth of the time.

    Raises:
        Whatever :func:`parse_index_line` raises for the line.
    """
    try:
        line = _validate_clean_json(raw)
    except (ValidationError, ValueError):
        line = None
    if line is None or _needs_cleaning(line):
        slow = parse_index_line(raw)
        return IndexedLine(slow, slow.product.model_dump_json().encode())
    return IndexedLine(line, orjson.dumps(line.product.__dict__))


def iter_products(
    path: str | Path,
    *,
    summary: LoadSummary | None = None,
    quarantine: Callable[[QuarantinedLine], None] | None = None,
    strict: bool = False,
) -> Iterator[IndexLine]:
    """Stream validated index lines; bad lines go to ``quarantine`` (or raise in ``strict`` mode)."""
    return _iter_lines(path, parse_index_line, summary, quarantine, strict)


def iter_index_lines(
    path: str | Path,
    *,
    summary: LoadSummary | None = None,
    quarantine: Callable[[QuarantinedLine], None] | None = None,
) -> Iterator[IndexedLine]:
    """:func:`iter_products` for readers that only read fields (the index build): each kept line with
    its product's JSON, clean lines as :class:`CleanIndexLine` (:func:`parse_index_line_fast`, about 3x
    cheaper); the same lines are kept and quarantined, with the same reasons and counts.
    """
    return _iter_lines(path, parse_index_line_fast, summary, quarantine, False)


def _iter_lines(
    path: str | Path,
    parse: Callable[[bytes], Any],
    summary: LoadSummary | None,
    quarantine: Callable[[QuarantinedLine], None] | None,
    strict: bool,
) -> Iterator[Any]:
    summary = summary if summary is not None else LoadSummary(path=str(path))
    for line_no, raw in iter_raw_lines(path):
        summary.read += 1
        summary.line_no = line_no
        try:
            line = parse(raw)
        except ValidationError as exc:
            reason = _describe_validation_error(exc)
        except (orjson.JSONDecodeError, ValueError) as exc:
            reason = json_error_reason(raw, exc) if isinstance(exc, orjson.JSONDecodeError) else str(exc)
        else:
            summary.kept += 1
            yield line
            continue
        kind = reason.split(":", 1)[0]
        summary.quarantined += 1
        summary.reasons[kind] = summary.reasons.get(kind, 0) + 1
        if strict:
            raise CatalogLoadError(f"{path}:{line_no}: {reason}")
        if quarantine is not None:
            quarantine(QuarantinedLine(line_no, reason, raw.decode("utf-8", "replace")[:2000]))


def read_catalog(
    path: str | Path, *, quarantine_path: str | Path | None = None, strict: bool = False
) -> tuple[list[IndexLine], LoadSummary]:
    """Read a whole (small) catalog into memory; use :func:`iter_products` for large ones."""
    summary = LoadSummary(path=str(path))
    if quarantine_path:
        ensure_not_input(quarantine_path, path, option="quarantine_path")
    qfh = open(quarantine_path, "wb") if quarantine_path else None  # noqa: SIM115
    try:
        sink = (lambda q: qfh.write(q.to_json() + b"\n")) if qfh else None
        lines = list(iter_products(path, summary=summary, quarantine=sink, strict=strict))
    finally:
        if qfh:
            qfh.close()
    return lines, summary


def dump_index_line(line: IndexLine | CleanIndexLine) -> bytes:
    """Serialise one index line exactly in the upstream key order."""
    return orjson.dumps(line.model_dump(mode="json"))


class CatalogWriter:
    """Append index lines to ``documents.jsonl`` or ``.jsonl.gz``, streaming."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fh = open_binary(self.path, "wb")
        self.written = 0

    def write(self, item: IndexLine | Product) -> None:
        line = IndexLine.from_product(item) if isinstance(item, Product) else item
        self._fh.write(dump_index_line(line) + b"\n")
        self.written += 1

    def write_raw(self, data: bytes) -> None:
        """Write an already-serialised line (the generator's fast path)."""
        self._fh.write(data.rstrip(b"\n") + b"\n")
        self.written += 1

    def close(self) -> None:
        self._fh.close()

    def __enter__(self) -> CatalogWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = [
    "CatalogLoadError",
    "CatalogWriter",
    "CleanIndexLine",
    "CleanProduct",
    "IndexedLine",
    "LoadSummary",
    "QuarantinedLine",
    "SamePathError",
    "build_contents",
    "dump_index_line",
    "ensure_not_input",
    "iter_index_lines",
    "iter_products",
    "json_error_reason",
    "parse_index_line",
    "parse_index_line_fast",
    "read_catalog",
]
