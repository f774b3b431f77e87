"""One benchmark's section of a docs page: the text between its ``<!-- NAME:start -->`` and
``<!-- NAME:end -->`` markers is replaced, or the section is appended when the page has no such markers.
Benchmarks import it as a sibling module (they run as ``python benchmarks/NAME.py``)."""

from __future__ import annotations

from pathlib import Path

BENCHMARKS_DOC = Path(__file__).resolve().parent.parent / "docs" / "benchmarks.md"


def markers(name: str) -> tuple[str, str]:
    """The start and end markers of section ``name``."""
    return f"<!-- {name}:start -->", f"<!-- {name}:end -->"


def write_section(name: str, text: str, doc: Path = BENCHMARKS_DOC, heading: str = "") -> Path:
    """Put ``text`` between section ``name``'s markers in ``doc`` (``heading`` precedes an appended one)."""
    start, end = markers(name)
    body = doc.read_text(encoding="utf-8") if doc.exists() else "# Benchmarks\n"
    block = f"{start}\n{text.strip(chr(10))}\n{end}"
    if start in body and end in body[body.index(start) :]:
        head, rest = body.split(start, 1)
        body = head + block + rest.split(end, 1)[1]
    else:
        body = body.rstrip("\n") + "\n\n" + (f"{heading}\n\n" if heading else "") + block + "\n"
    doc.parent.mkdir(parents=True, exist_ok=True)
    doc.write_text(body, encoding="utf-8")
    return doc


__all__ = ["BENCHMARKS_DOC", "markers", "write_section"]
