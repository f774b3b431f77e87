"""The HTML report in a real headless Chromium (Debian's, driven by playwright): loads without console
errors, shows the key numbers, and its screenshot is not blank."""

from __future__ import annotations

import shutil

import pytest
from report_fixtures import empty_run_dir, full_run_dir

from shoparena.report import render_report

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
playwright = pytest.importorskip(
    "playwright.sync_api", reason="playwright not installed (pip install playwright)"
)
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium not installed (scripts/install_system_deps.sh installs it)"
)


def _open(path, screenshot=None):
    """(console messages, page errors, page text, failed requests) of ``path`` in headless Chromium."""
    messages, errors, requests = [], [], []
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1100, "height": 1400})
        page.on("console", lambda m: messages.append((m.type, m.text)))
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("request", lambda r: requests.append(r.url))
        page.goto(path.resolve().as_uri())
        page.wait_for_load_state("load")
        text = page.inner_text("body")
        svg_count = page.locator("svg").count()
        if screenshot is not None:
            page.screenshot(path=str(screenshot), full_page=True)
        browser.close()
    return messages, errors, text, requests, svg_count


def _not_blank(png) -> float:
    from PIL import Image, ImageStat

    stats = ImageStat.Stat(Image.open(png).convert("L"))
    return stats.stddev[0]


def test_full_report_renders_every_section_with_key_numbers(tmp_path):
    out = render_report(full_run_dir(tmp_path), tmp_path / "report.html")
    messages, errors, text, requests, svgs = _open(out, tmp_path / "shot.png")
    assert errors == []
    assert [m for m in messages if m[0] in {"error", "warning"}] == []
    assert all(url.startswith("file://") for url in requests)  # self-contained: nothing fetched
    for needle in (
        "1,234",
        "321",
        "0.123",
        "0.456",
        "race-1",
        "miner-b",
        "find_product",
        "Answer: P77",
        "0.606",
        "rejected: subtask",
        "view sft/train",
        "red <shoes> under 50",
        "pass@k",
        "Provenance",
    ):
        assert needle in text, needle
    assert "not run" not in text.split("Provenance")[0]
    assert svgs >= 6  # funnel, richness, judge, weights, ASR x2, pass@k
    assert _not_blank(tmp_path / "shot.png") > 10


def test_empty_run_renders_sections_as_not_run(tmp_path):
    out = render_report(empty_run_dir(tmp_path), tmp_path / "empty.html", notes={"corpus": "unavailable: x"})
    messages, errors, text, _, _ = _open(out, tmp_path / "empty.png")
    assert errors == [] and [m for m in messages if m[0] == "error"] == []
    assert text.count("not run") >= 6
    assert "unavailable: x" in text
    assert _not_blank(tmp_path / "empty.png") > 5


def test_report_has_no_external_references(tmp_path):
    html = render_report(full_run_dir(tmp_path), tmp_path / "r.html").read_text()
    import re

    without_namespaces = re.sub(r'xmlns(:\w+)?="[^"]*"', "", html)
    for marker in ("http://", "https://", "<script", "<link ", "src="):
        assert marker not in without_namespaces, marker


def test_report_cli_errors_cleanly_on_a_non_run_directory(tmp_path):
    from typer.testing import CliRunner

    from shoparena.cli.main import app

    result = CliRunner().invoke(app, ["report", str(tmp_path), "--out", str(tmp_path / "r.html")])
    assert result.exit_code == 2 and "no manifest.json" in result.output
