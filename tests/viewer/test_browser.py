"""The viewer in a real headless Chromium (Debian's, driven by playwright): loads with no console error,
fetches nothing from the network, filters and search work, a trajectory opens, two runs sit side by side."""

from __future__ import annotations

import shutil

import pytest

from shoparena.viewer import ViewerServer

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
playwright = pytest.importorskip(
    "playwright.sync_api", reason="playwright not installed (pip install playwright)"
)
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium not installed (scripts/install_system_deps.sh installs it)"
)


def test_viewer_in_headless_chromium(eval_runs, corpus_run, tmp_path) -> None:
    messages, errors, requests = [], [], []
    with ViewerServer([*eval_runs, corpus_run]) as server, playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.on("console", lambda m: messages.append((m.type, m.text)))
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("request", lambda r: requests.append(r.url))
        page.goto(server.url)
        page.wait_for_load_state("load")
        rows = page.locator("tr.row")
        assert rows.count() == 4 + 4 + 2
        assert "10 of 10 trajectories" in page.inner_text("#count")

        page.select_option("#f-outcome", "low_richness")
        assert rows.count() == 1
        page.select_option("#f-outcome", "")
        page.select_option("#f-run", "planner-2")
        assert rows.count() == 4
        page.fill("#search", "no such words anywhere")
        assert rows.count() == 0
        page.fill("#search", "")
        first_problem = page.locator("tr.row td").nth(1).inner_text()
        page.fill("#search", first_problem)
        assert rows.count() == 1

        rows.first.click()
        page.wait_for_selector("#pane-a .msg.tool")
        pane = page.inner_text("#pane-a")
        assert "Verdict checks" in pane and "strict:" in pane and "tool result" in pane.lower()
        page.select_option("#compare", "planner-12")
        page.wait_for_selector("#pane-b .msg.tool")
        assert first_problem in page.inner_text("#pane-b") and "planner-12" in page.inner_text("#pane-b")

        page.fill("#search", "")
        page.select_option("#f-run", "corpus")
        rows.last.click()
        page.wait_for_selector("#pane-a table.dispatches")
        pane = page.inner_text("#pane-a")
        assert "Gate 4 failed: one candidate." in pane and "not proved" in pane and "model-emitted" in pane
        page.screenshot(path=str(tmp_path / "viewer.png"))
        browser.close()
    assert errors == []
    assert [m for m in messages if m[0] in {"error", "warning"}] == []
    assert requests and all(url.startswith(server.url) for url in requests)
