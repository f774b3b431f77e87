"""``shoparena arena run`` end to end on a two-problem ORO suite; a second invocation resumes."""

from __future__ import annotations

import json

import yaml
from arena_helpers import AGENTS, needs_bwrap
from typer.testing import CliRunner

from shoparena.cli.main import app

pytestmark = needs_bwrap


def test_run_dir_and_resume(tmp_path):
    suite = tmp_path / "suite.json"
    suite.write_text(
        json.dumps(
            [
                {
                    "query": "red mug",
                    "reward": {"product_id": "1", "title": ["Red Mug"]},
                    "category": "Product",
                    "difficulty": "easy",
                    "title": "Product 1",
                },
                {
                    "query": "blue cup",
                    "reward": {"product_id": "2", "title": ["Blue Cup"]},
                    "category": "Product",
                    "difficulty": "easy",
                    "title": "Product 2",
                },
            ]
        )
    )
    out = tmp_path / "run"
    args = [
        "arena",
        "run",
        "--agents",
        str(AGENTS / "behaviour_agent.py"),
        "--agents",
        str(AGENTS / "missing_main_agent.py"),
        "--suite",
        str(suite),
        "--out",
        str(out),
        "--workers",
        "2",
        "--timeout",
        "5",
    ]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "behaviour_agent" in result.output
    config = yaml.safe_load((out / "config.yaml").read_text())
    manifest = json.loads((out / "manifest.json").read_text())
    assert config["workers"] == 2 and config["run_id"] == manifest["run_id"]
    assert (
        manifest["isolation"]["backend"] == "bwrap"
        and "net-namespace(proxy-only)" in manifest["isolation"]["mechanisms"]
    )
    assert set(manifest["agents"]) == {"behaviour_agent", "missing_main_agent"}
    good = [
        json.loads(x) for x in (out / "agents" / "behaviour_agent" / "output.jsonl").read_text().splitlines()
    ]
    bad = [
        json.loads(x)
        for x in (out / "agents" / "missing_main_agent" / "output.jsonl").read_text().splitlines()
    ]
    assert [e["status"] for e in good] == ["SUCCESS", "SUCCESS"]
    assert [e["status"] for e in bad] == ["FAILED", "FAILED"]
    # Problems carry the loader's ids; ground truth never reaches the agent's problem dict.
    assert all(e["problem_id"] for e in good)
    rerun = CliRunner().invoke(app, args)
    assert rerun.exit_code == 0, rerun.output
    again = (out / "agents" / "behaviour_agent" / "output.jsonl").read_text().splitlines()
    assert len(again) == 2
    assert json.loads((out / "manifest.json").read_text())["run_id"] == manifest["run_id"]


def test_run_arena_scores_both_profiles(tmp_path):
    from arena_helpers import ScoringSearch

    from shoparena.arena.run_directory import ArenaRunConfig, run_arena

    suite = tmp_path / "suite.json"
    suite.write_text(json.dumps([
        {"query": "red mug", "reward": {"product_id": "9", "title": ["Red Mug"]}, "category": "Product",
         "difficulty": "easy", "title": "Product 1"},
    ]))
    config = ArenaRunConfig(agents=[AGENTS / "ok_agent.py"], suite=suite, out=tmp_path / "run", workers=1,
                            timeout_s=10)
    summary = run_arena(config, search=ScoringSearch({"100": "Red Mug", "101": "Other"}))
    agent = summary.agents[0]
    assert agent.success == 1, summary
    assert set(agent.scores) == {"shoppingbench", "strict"}, summary.notes
    assert agent.scores["shoppingbench"]["success_rate"] == 1.0
    assert json.loads((tmp_path / "run" / "scores.json").read_text())["ok_agent"]["strict"]


def test_a_failed_row_shows_its_reason_in_the_table(tmp_path):
    """A miner importing a module the sandbox does not hold (numpy: stdlib only) fails every problem, and the
    table says why (the record itself stays in output.jsonl); progress lines go to stderr as agents run."""
    suite = tmp_path / "suite.json"
    suite.write_text(
        json.dumps(
            [
                {"query": q, "reward": {"product_id": str(i), "title": [q]}, "category": "Product"}
                for i, q in enumerate(["red mug", "blue cup", "green bowl"], start=1)
            ]
        )
    )
    args = ["arena", "run", "--agents", str(AGENTS / "numpy_miner.py"), "--suite", str(suite),
            "--out", str(tmp_path / "run"), "--workers", "2", "--timeout", "10"]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    row = next(line for line in result.output.splitlines() if "numpy_miner" in line and "│" in line)
    assert "3× ModuleNotFoundError: No module named 'numpy'" in row
    assert "numpy_miner: 3/3 (FAILED 3)" in result.stderr
    output = tmp_path / "run" / "agents" / "numpy_miner" / "output.jsonl"
    envelopes = [json.loads(line) for line in output.read_text().splitlines()]
    assert {e["error"]["type"] for e in envelopes} == {"ModuleNotFoundError"}
