"""The HTML report's diversity section: the corpus report.json's table, or "not run" without it."""

from __future__ import annotations

import json

from report_fixtures import full_run_dir

from shoparena.report import render_report


def test_diversity_table_is_rendered_from_the_corpus_report(tmp_path) -> None:
    run = full_run_dir(tmp_path)
    path = run / "corpus" / "report.json"
    doc = json.loads(path.read_text())
    doc["diversity"] = {
        "kept": {"trajectories": 77, "query_distinct_2": 0.2546, "near_duplicate_rate": 0.0909, "shops": 40},
        "all / miner_kind=subtask": {"trajectories": 90, "query_distinct_2": None},
    }
    path.write_text(json.dumps(doc))
    html = render_report(run, tmp_path / "r.html").read_text()
    section = html.split('<section id="diversity">')[1].split("</section>")[0]
    assert "not run" not in section
    for needle in (
        "kept",
        "all / miner_kind=subtask",
        "0.255",
        "0.091",
        '<td class="num">40</td>',
        "near-dup",
    ):
        assert needle in section, needle


def test_without_diversity_the_section_is_not_run(tmp_path) -> None:
    html = render_report(full_run_dir(tmp_path), tmp_path / "r.html").read_text()
    section = html.split('<section id="diversity">')[1].split("</section>")[0]
    assert "not run" in section and "no diversity" in section
