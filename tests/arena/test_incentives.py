"""judge_run on a real run directory, and the race stage through the CLI (determinism, decaying threshold)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from arena_helpers import needs_bwrap
from miner_helpers import read_jsonl
from typer.testing import CliRunner

from shoparena.arena.miners import miner_path
from shoparena.arena.richness import trajectory_richness
from shoparena.arena.run_directory import ArenaRunConfig, run_arena
from shoparena.arena.run_judging import judge_run
from shoparena.arena.sandbox import SandboxConfig
from shoparena.cli.main import app
from shoparena.judge.records import SCORE_BINS
from shoparena.llm.planner_backend import PlannerBackend
from shoparena.llm.scripted import ScriptedBackend
from shoparena.records.race import RaceDocument

pytestmark = needs_bwrap


@pytest.fixture(scope="module")
def judged_run(tmp_path_factory, shop_world) -> Path:
    out = tmp_path_factory.mktemp("incentives") / "run"
    config = ArenaRunConfig(
        agents=[miner_path(a) for a in ("agentic", "shortcut", "crash")], suite=shop_world.mixed, out=out,
        workers=2, timeout_s=10, sandbox=SandboxConfig(grace_s=1, memory_bytes=1024**3),
    )
    run_arena(config, backend=PlannerBackend(), search=shop_world.engine)
    return out


def test_trajectory_richness_reads_proof_kinds_and_both_published_variants():
    entries = [
        {"kind": "summary", "path": "/inference/chat/completions", "status_code": 200,
         "parsed_tool_names": ["find_product", "view_product_information"]},
        {"kind": "summary", "path": "/search/find_product", "nonce_status": "valid", "proof": "nonce_valid"},
        {"kind": "summary", "path": "/search/view_product_information", "nonce_status": "replayed",
         "proof": "unmatched"},
        {"kind": "summary", "path": "/search/get_product_raw"},
    ]
    rich = trajectory_richness("p", entries)
    assert (rich.valid_count, rich.total_dispatch_count, rich.agentic_richness) == (1, 2, 0.5)
    assert rich.proof_kinds == {"nonce_valid": 1, "unmatched": 1}
    assert (rich.pending_target, rich.nonce_stamped) == (1.0, 0.5)
    # No model reply at all: no proof either way (None), distinct from 0.
    no_model = trajectory_richness("p", [{"kind": "summary", "path": "/search/find_product"}])
    assert no_model.agentic_richness is None and no_model.nonce_stamped is None
    assert not no_model.has_nonce_stamps and no_model.pending_target == 0.0


def test_judge_run_rubric_writes_verdicts_and_both_finals(judged_run):
    report = judge_run(judged_run, "rubric")
    scores = json.loads((judged_run / "scores.json").read_text())
    for entry in report.agents:
        verdicts = read_jsonl(judged_run / "agents" / entry.agent / "judge.jsonl")
        successes = entry.envelope_statuses.get("SUCCESS", 0)
        assert len(verdicts) == entry.judged == successes
        assert all(v["status"] == "ok" and v["score"] in SCORE_BINS for v in verdicts)
        assert entry.success_rate == scores[entry.agent]["strict"]["success_rate"]
        assert entry.score is not None
        assert entry.score.final_judge == round(entry.success_rate * entry.reasoning_coefficient, 4)
        saved = json.loads((judged_run / "agents" / entry.agent / "incentives.json").read_text())
        assert saved["score"]["final_judge"] == entry.score.final_judge
    agentic, shortcut, crash = (report.agent(n) for n in ("agentic", "shortcut", "crash"))
    assert agentic.richness.agentic_richness == 1.0 and agentic.richness.valid_count > 0
    assert agentic.richness.proof_kinds == {"nonce_valid": agentic.richness.total_dispatch_count}
    # No model call at all: the headline has no proof (None); Variant B still sees two unstamped dispatches.
    assert shortcut.richness.agentic_richness is None and shortcut.richness.nonce_stamped == 0.0
    assert shortcut.richness.proof_kinds == {"unmatched": 2}
    assert shortcut.richness.nonce_statuses == {"missing": 2}
    assert shortcut.reasoning_quality == 0.1  # no inference call: gate 1 fails on every trajectory
    assert agentic.reasoning_quality > shortcut.reasoning_quality
    # Crashed problems are not judged (no verdicts), and the richness variant has no proof to work with.
    assert crash.judged == 0 and crash.envelope_statuses == {"FAILED": 2}
    assert crash.richness.agentic_richness is None and crash.score.final_richness is None
    assert json.loads((judged_run / "incentives.json").read_text())["judge"] == "rubric"


def test_judge_run_llm_failures_are_statuses_counted_as_oro_or_left_out(judged_run):
    report = judge_run(judged_run, "llm", backend=ScriptedBackend(default="no verdict here, sorry"))
    agentic = report.agent("agentic")
    verdicts = read_jsonl(judged_run / "agents" / "agentic" / "judge.jsonl")
    assert verdicts and {v["status"] for v in verdicts} <= {"parse_error", "skipped_breaker"}
    assert all(v["score"] is None for v in verdicts)  # the verdict file never turns a failure into a score
    calls = sum(len(v["attempts"]) for v in verdicts)
    assert agentic.score is not None and agentic.score.failure_accounting == "oro"
    # ORO: each failed judgement is 0.0 in q (coefficient 0.3); model calls are counted.
    assert (agentic.score.judge_total, agentic.score.judge_failed) == (calls, calls)
    assert agentic.reasoning_quality == 0.0 and agentic.score.reasoning_coefficient == 0.3
    assert report.failure_accounting == "oro"
    kept = judge_run(judged_run, "llm", backend=ScriptedBackend(default="no verdict here, sorry"),
                     failure_accounting="verdicts").agent("agentic")
    assert kept.score is not None and kept.score.judge_failed == kept.score.judge_total == len(verdicts)


def test_judge_cli_takes_the_failure_accounting_from_the_config(judged_run):
    def judge(*extra: str) -> dict:
        result = CliRunner().invoke(app, ["arena", "judge", str(judged_run), *extra])
        assert result.exit_code == 0, result.output
        return json.loads((judged_run / "incentives.json").read_text())

    earlier = judge("--failure-accounting", "verdicts", "--blacklist-scope", "run")
    assert earlier["failure_accounting"] == "verdicts"
    assert {a["score"]["failure_accounting"] for a in earlier["agents"]} == {"verdicts"}
    assert judge()["failure_accounting"] == "oro"
    wrong = CliRunner().invoke(app, ["arena", "judge", str(judged_run), "--failure-accounting", "zero"])
    assert wrong.exit_code == 2 and "zero" in wrong.output


def _race(args: list[str]) -> None:
    result = CliRunner().invoke(app, ["arena", "race", *args])
    assert result.exit_code == 0, result.output


def test_race_cli_is_deterministic_and_the_margin_decays(tmp_path, shop_world):
    qual = tmp_path / "qual"
    result = CliRunner().invoke(app, [
        "arena", "run", "--agents", "agentic", "shortcut", "--suite", str(shop_world.product_only),
        "--index", str(shop_world.index), "--out", str(qual), "--backend", "planner", "--workers", "2",
        "--timeout", "10", "--judge", "rubric",
    ])
    assert result.exit_code == 0, result.output
    assert (qual / "agents" / "agentic" / "judge.jsonl").exists()
    common = ["--qualifying", str(qual), "--race-bank", str(shop_world.product_only), "--index",
              str(shop_world.index), "--backend", "planner", "--workers", "2", "--timeout", "10",
              "--incumbent", "shortcut", "--incumbent-since", "2026-05-01T00:00:00Z",
              "--margin0", "5", "--margin-min", "0", "--half-life-s", "3600"]
    fresh = [*common, "--completed-at", "2026-05-01T00:00:00Z"]
    _race([*fresh, "--out", str(tmp_path / "r1")])
    _race([*fresh, "--out", str(tmp_path / "r2")])
    assert (tmp_path / "r1" / "weights.json").read_bytes() == (tmp_path / "r2" / "weights.json").read_bytes()
    board = json.loads((tmp_path / "r1" / "leaderboard.json").read_text())
    scores = {row["hotkey"]: row["race_score"] for row in board}
    assert scores["agentic"] > scores["shortcut"] > 0  # the challenger wins the race on points...
    race = json.loads((tmp_path / "r1" / "race.json").read_text())
    # The race stage writes the one race.json shape the firehose writes too (records.race.RaceDocument).
    assert RaceDocument.model_validate(race).bank is not None
    decision = race["outcome"]["decision"]
    assert decision["promoted"] is False and decision["required_score"] > scores["agentic"]
    # ...but the fresh incumbent keeps rank 1.
    assert board[0]["hotkey"] == "shortcut" and board[0]["rank"] == 1
    # ORO's validator ignores the race's rank: the top share goes to the best race score.
    weights = json.loads((tmp_path / "r1" / "weights.json").read_text())
    assert weights["top_hotkey"] == "agentic" and weights["config"]["rank_by"] == "race_score"
    assert any("incumbent protection" in note for note in race["notes"])
    # The earlier choice, by name: the incumbent's rank 1 takes the top share.
    earlier = tmp_path / "r4"
    _race([*fresh, "--out", str(earlier), "--rank-by", "race_rank", "--failure-accounting", "verdicts"])
    assert json.loads((earlier / "weights.json").read_text())["top_hotkey"] == "shortcut"
    assert json.loads((earlier / "race.json").read_text())["config"]["failure_accounting"] == "verdicts"
    # Thirty days later the margin has decayed to ~0: the same scores now promote the challenger.
    _race([*common, "--completed-at", "2026-05-31T00:00:00Z", "--out", str(tmp_path / "r3")])
    late = json.loads((tmp_path / "r3" / "race.json").read_text())["outcome"]
    assert late["decision"]["promoted"] is True and late["decision"]["margin"] < 1e-6
    assert late["incumbent"]["hotkey"] == "agentic"
    assert json.loads((tmp_path / "r3" / "weights.json").read_text())["top_hotkey"] == "agentic"


def test_a_judge_that_cannot_judge_prints_no_score_and_exits_1(judged_run, monkeypatch):
    """Issue 31, finding 10: verdicts parse_error/skipped_breaker printed final 0.23 with exit 0."""
    import shoparena.arena.run_judging as run_judging

    real = run_judging.judge_run

    def with_a_model_that_cannot_judge(run_dir, judge, backend_spec=None, **kwargs):
        return real(run_dir, judge, backend=ScriptedBackend(default="no verdict here, sorry"), **kwargs)

    monkeypatch.setattr(run_judging, "judge_run", with_a_model_that_cannot_judge)
    args = ["arena", "judge", str(judged_run), "--judge", "llm"]
    result = CliRunner().invoke(app, args, env={"COLUMNS": "300"})
    assert result.exit_code == 1, result.output
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "the judge failed" in errors[0] and "no final(judge) score" in errors[0]
    agentic = next(line for line in result.stdout.splitlines() if line.strip("│ ").startswith("agentic"))
    assert "judge failed" in agentic
    saved = json.loads((judged_run / "agents" / "agentic" / "incentives.json").read_text())
    assert saved["score"]["judge_failed"] == saved["score"]["judge_total"] > 0
