"""The benchmarks' one docs-section writer: replaces a section between its markers, else appends it."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from doc_sections import markers, write_section


def test_a_section_is_replaced_between_its_markers_and_nothing_else_moves(tmp_path: Path) -> None:
    doc = tmp_path / "benchmarks.md"
    a_start, a_end = markers("a")
    b_start, b_end = markers("b")
    b_part = f"middle\n{b_start}\nold b\n{b_end}\ntail\n"
    doc.write_text(f"# Benchmarks\n\nintro\n{a_start}\nold a\n{a_end}\n{b_part}")
    write_section("a", "new a\nsecond line\n", doc=doc)
    assert doc.read_text() == f"# Benchmarks\n\nintro\n{a_start}\nnew a\nsecond line\n{a_end}\n{b_part}"


def test_a_missing_section_is_appended_under_its_heading(tmp_path: Path) -> None:
    doc = tmp_path / "benchmarks.md"
    doc.write_text("# Benchmarks\n\nintro\n\n\n")
    write_section("c", "body", doc=doc, heading="## C")
    start, end = markers("c")
    assert doc.read_text() == f"# Benchmarks\n\nintro\n\n## C\n\n{start}\nbody\n{end}\n"
    write_section("c", "body 2", doc=doc, heading="## C")  # it has markers now: replaced, no second heading
    text = doc.read_text()
    assert text.count("## C") == 1 and f"{start}\nbody 2\n{end}" in text and "body\n" not in text


def test_an_end_marker_before_the_start_does_not_swallow_the_page(tmp_path: Path) -> None:
    doc = tmp_path / "benchmarks.md"
    start, end = markers("d")
    doc.write_text(f"{end}\nkeep me\n{start}\n")
    write_section("d", "x", doc=doc)
    assert "keep me" in doc.read_text() and doc.read_text().endswith(f"{start}\nx\n{end}\n")
