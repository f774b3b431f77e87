"""Stream-read and stream-write catalogs in the upstream index-line format.

Records are split on ``\\n`` only (never ``str.splitlines``: upstream files hold raw U+0085), files may be
gzip compressed (by suffix ``.gz``), and the whole file is never held in memory. Every line ends up kept or
quarantined with its line number and the reason, and :class:`LoadSummary` counts add up.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
from pydantic import ValidationError

from shoparena.jsonl import iter_raw_lines, open_binary
from shoparena.records.catalog import IndexLine, Product, build_contents


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


def iter_products(
    path: str | Path,
    *,
    summary: LoadSummary | None = None,
    quarantine: Callable[[QuarantinedLine], None] | None = None,
    strict: bool = False,
) -> Iterator[IndexLine]:
    """Stream validated index lines; bad lines go to ``quarantine`` (or raise in ``strict`` mode)."""
    summary = summary if summary is not None else LoadSummary(path=str(path))
    for line_no, raw in iter_raw_lines(path):
        summary.read += 1
        summary.line_no = line_no
        try:
            line = parse_index_line(raw)
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


def dump_index_line(line: IndexLine) -> bytes:
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
    "LoadSummary",
    "QuarantinedLine",
    "SamePathError",
    "build_contents",
    "dump_index_line",
    "ensure_not_input",
    "iter_products",
    "json_error_reason",
    "parse_index_line",
    "read_catalog",
]
