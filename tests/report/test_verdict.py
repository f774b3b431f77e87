"""The report's result in words: beats / ties / falls below the shortcut floor with the planner's ceiling
beside it, every interval named, and a race without a winner saying why (no browser needed)."""

from __future__ import annotations

import json

import pytest
from report_fixtures import full_run_dir

from shoparena.arena.layout import ArenaRun
from shoparena.arena.run_judging import why_no_winner
from shoparena.records.race import Qualifier, QualifyingResult, Race, RaceDocument, RaceStatus
from shoparena.report import render_report
from shoparena.report.html import verdict_word


def _section(html: str, key: str) -> str:
    return html.split(f'<section id="{key}">')[1].split("</section>")[0]


def _with_shortcut_interval(run, low: float, high: float, diff: float) -> None:
    manifest = json.loads((run / "manifest.json").read_text())
    paired = manifest["stages"]["eval_student"]["outputs"]["vs_shortcut"]["greedy_asr"]
    paired.update(ci_low=low, ci_high=high, diff=diff)
    (run / "manifest.json").write_text(json.dumps(manifest))


@pytest.mark.parametrize(
    ("low", "high", "word"),
    [(0.04, 0.46, "beats"), (-0.1, 0.1, "ties"), (0.0, 0.2, "ties"), (-0.3, -0.01, "falls below")],
)
def test_the_verdict_follows_the_paired_interval(low, high, word):
    assert verdict_word(low, high) == word


def test_the_headline_says_the_student_beats_the_floor_and_names_each_interval(tmp_path):
    html = render_report(full_run_dir(tmp_path), tmp_path / "r.html").read_text()
    result = _section(html, "result")
    assert "The student beats the shortcut floor" in result
    assert "13/24 solved vs the shortcut's 7/24" in result
    assert "no learning at all" in result and "learnt something beyond" in result
    assert result.count("paired 95 % bootstrap interval of the difference") == 3  # verdict, base, shortcut
    assert "95 % CI" not in html
    assert "95 % Wilson interval of the ASR" in _section(html, "asr")
    assert "95 % bootstrap interval (problems resampled)" in _section(html, "passk")


def test_a_student_level_with_the_shortcut_ties_it_and_the_planner_ceiling_stands_beside(tmp_path):
    run = full_run_dir(tmp_path)
    _with_shortcut_interval(run, -0.125, 0.125, 0.0)
    manifest = json.loads((run / "manifest.json").read_text())
    strict = {"asr": 0.833, "n": 24, "successes": 20, "per_category": {}}
    reference = dict(manifest["stages"]["eval_base"], name="reference")  # a stage record as the DAG writes
    reference["outputs"] = {"path": "./r", "executor": "process", "counts": {}, "scores": {"strict": strict}}
    manifest["stages"]["reference"] = reference
    (run / "manifest.json").write_text(json.dumps(manifest))
    result = _section(render_report(run, tmp_path / "r.html").read_text(), "result")
    assert "The student ties the shortcut floor" in result and "learnt nothing measurable" in result
    assert "includes 0" in result and "planner&#x27;s ceiling" not in result
    assert "the planner's ceiling (the rule-based reference that taught it) 20/24" in result
    assert 'class="headline warn"' in result


def test_a_student_under_the_shortcut_falls_below_it(tmp_path):
    run = full_run_dir(tmp_path)
    _with_shortcut_interval(run, -0.4, -0.05, -0.2)
    result = _section(render_report(run, tmp_path / "r.html").read_text(), "result")
    assert "The student falls below the shortcut floor" in result and "does worse than" in result


def _cancelled_race(path, scores: dict[str, float]) -> None:
    rejected = [
        Qualifier(hotkey=k, agent_version_id=f"{k}@abc", qualifying_score=v) for k, v in scores.items()
    ]
    qualifying = QualifyingResult(status=RaceStatus.CANCELLED, threshold=0.1, rejected=rejected)
    race = Race(race_id="race-9", status=RaceStatus.CANCELLED, qualifiers=rejected)
    run = ArenaRun.at(path)
    run.race_path.parent.mkdir(parents=True, exist_ok=True)
    run.race_path.write_text(RaceDocument(race=race, qualifying=qualifying).model_dump_json())


def test_a_cancelled_race_names_the_threshold_and_the_best_score(tmp_path):
    _cancelled_race(tmp_path, {"shortcut": 0.0, "agentic-regular": 0.0625})
    why = why_no_winner(tmp_path)
    assert why == "no miner reached the qualifying threshold 0.1: the best, agentic-regular, scored 0.0625"


def test_the_report_says_why_a_race_has_no_winner(tmp_path):
    run = full_run_dir(tmp_path)
    manifest = json.loads((run / "manifest.json").read_text())
    firehose = manifest["stages"]["firehose"]["outputs"]
    firehose["races"][0].update(winner="", status="CANCELLED", weights={"burn (uid 0)": 1.0})
    firehose["race_dirs"] = ["./race-1", "./race-2"]  # a manifest written before reasons were recorded
    _cancelled_race(run / "race-1", {"agentic-regular": 0.05})
    (run / "manifest.json").write_text(json.dumps(manifest))
    section = _section(render_report(run, tmp_path / "r.html").read_text(), "races")
    why = "no miner reached the qualifying threshold 0.1: the best, agentic-regular, scored 0.0500"
    assert f"none ({why})" in section
    assert "the whole weight burns" in section


def test_a_race_with_one_finisher_says_the_burn_takes_all(tmp_path):
    one = Qualifier(hotkey="agentic-regular", agent_version_id="a@1", qualifying_score=0.68, race_score=0.68)
    qualifying = QualifyingResult(status=RaceStatus.RACE_RUNNING, threshold=0.65, qualifiers=[one])
    race = Race(race_id="race-1", status=RaceStatus.RACE_COMPLETE, qualifiers=[one])
    run = ArenaRun.at(tmp_path)
    run.race_path.write_text(RaceDocument(race=race, qualifying=qualifying).model_dump_json())
    assert why_no_winner(tmp_path) == (
        "only one miner finished the race (agentic-regular, race score 0.6800); with fewer than two "
        "finishers ORO's weights give it all to the burn"
    )
