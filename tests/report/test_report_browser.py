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
        "student 13/24 vs base 3/24",
        "McNemar exact p",
        "Product 9/12 vs 2/12",
        "1,234",
        "321",
        "0.542",  # the student's strict ASR overall: 13/24
        "race-1",
        "miner-b",
        "find_product",
        "Answer: P77",
        "rejected: subtask",
        "view sft/train",
        "red <shoes> under 50",
        "pass@k",
        "Provenance",
    ):
        assert needle in text, needle
    assert "not run" not in text.split("Provenance")[0]
    # the fixture scores both profiles alike: one ASR chart, the lenient profile folded into a sentence
    assert "shoppingbench: identical to strict" in text
    assert svgs >= 5  # ASR, funnel, pass@k, richness, judge, weights
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


def _layout(path, viewport=(1280, 800)):
    """Boxes (page coordinates) of the headline, the first chart and every section heading, in a laptop-sized
    window."""
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": viewport[0], "height": viewport[1]})
        page.goto(path.resolve().as_uri())
        page.wait_for_load_state("load")
        headline = page.locator(".headline").bounding_box()
        first_chart = page.locator("svg").first.bounding_box()
        sections = [(el.get_attribute("id"), el.bounding_box()["y"]) for el in page.locator("section").all()]
        funnel_steps = page.locator("#funnel table").first.locator("td:first-child").all_inner_texts()
        browser.close()
    return headline, first_chart, sections, funnel_steps


def test_the_report_opens_with_the_result(tmp_path):
    """The headline (student vs base, paired difference, p) is in the first screen, above the first chart;
    then per-intent ASR, then the funnel in funnel order."""
    out = render_report(full_run_dir(tmp_path), tmp_path / "report.html")
    headline, first_chart, sections, funnel_steps = _layout(out)
    assert headline is not None and headline["y"] + headline["height"] <= 800
    assert headline["y"] + headline["height"] <= first_chart["y"]
    order = [name for name, _ in sorted(sections, key=lambda s: s[1])]
    assert order[:3] == ["result", "asr", "funnel"]
    assert funnel_steps == [
        "input", "quarantined", "records", "rejected: subtask", "rejected: judge_below_bar", "kept",
    ]  # fmt: skip


def test_headline_and_intents_show_the_shortcut_beside_the_base(tmp_path):
    """The result section pairs the student with the shortcut (search the request verbatim, recommend the top
    hit) as eval_student recorded it, per intent too, and the ASR table has the shortcut with intervals."""
    html = render_report(full_run_dir(tmp_path), tmp_path / "r.html").read_text()
    result = html.split('<section id="result">')[1].split("</section>")[0]
    assert "vs the shortcut 7/24" in result and "[+0.042, +0.458]" in result and "p = 0.11" in result
    assert "Product 9/12 vs 2/12 vs 7/12" in result and "Shop 4/12 vs 1/12 vs 0/12" in result
    asr = html.split('<section id="asr">')[1].split("</section>")[0]
    assert "shortcut" in asr


def test_one_sample_per_problem_draws_no_pass_at_k_curve(tmp_path):
    html = render_report(full_run_dir(tmp_path, samples=1), tmp_path / "r.html").read_text()
    section = html.split('<section id="passk">')[1].split("</section>")[0]
    assert "<svg" not in section and "n = 1" in section
    assert '<td class="num">1</td>' in section  # pass@1 still tabled


def test_a_race_without_winner_says_the_weight_burns(tmp_path):
    import json

    run = full_run_dir(tmp_path)
    manifest = json.loads((run / "manifest.json").read_text())
    races = manifest["stages"]["firehose"]["outputs"]["races"]
    races[0].update(winner="", status="CANCELLED", weights={"burn (uid 0)": 1.0})
    (run / "manifest.json").write_text(json.dumps(manifest))
    html = render_report(run, tmp_path / "r.html").read_text()
    section = html.split('<section id="races">')[1].split("</section>")[0]
    assert "none (no miner qualified); the whole weight burns" in section and "UID 0" in section


def test_report_of_an_arena_run_is_refused_naming_its_kind(tmp_path):
    from typer.testing import CliRunner

    from shoparena.cli.main import app
    from shoparena.runs.manifest import ArenaManifest, write_manifest

    write_manifest(ArenaManifest(run_id="r1"), tmp_path)
    result = CliRunner().invoke(app, ["report", str(tmp_path)])
    assert result.exit_code == 2
    assert "not a pipeline run (manifest kind 'arena')" in result.output
    assert not (tmp_path / "report.html").exists()


def test_result_shows_each_policy_by_intent_and_basket_size(tmp_path):
    """One line per policy (student, base; the shortcut and planner rows need the run's index and the
    planner's log, which this fixture lacks: the table says the rows were left out rather than failing)."""
    from report_fixtures import BASE_SOLVES, PER_INTENT, STUDENT_SOLVES

    html = render_report(full_run_dir(tmp_path), tmp_path / "r.html").read_text()
    result = html.split('<section id="result">')[1].split("</section>")[0]
    table = result.split("by intent and basket size")[1]
    rows = {row.split("</td>")[0].split("<td>")[-1]: row for row in table.split("<tr>")[2:]}
    assert set(rows) == {"student", "base"}
    n = PER_INTENT * len(BASE_SOLVES)
    assert f"{STUDENT_SOLVES['Shop']}/{PER_INTENT} [" in rows["student"].split("</td>")[2]
    assert f"{sum(STUDENT_SOLVES.values())}/{n} [" in rows["student"]
    assert f"{sum(BASE_SOLVES.values())}/{n} [" in rows["base"]
    assert "shortcut row left out" in result
