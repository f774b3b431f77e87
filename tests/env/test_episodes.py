"""episodes run: envelopes written per problem, readable by shoparena.formats, resumable; the CLI form."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from shoparena.agents import PlannerAgent, ScriptedAgent, tagged_step
from shoparena.cli.main import app
from shoparena.env.episodes import run_episodes, run_episodes_dir
from shoparena.formats.io import read_trajectories
from shoparena.runs.envelopes import EnvelopeLog
from shoparena.runs.manifest import EpisodesManifest, read_manifest
from shoparena.suites.loaders import load_suite, write_oro_suite
from shoparena.suites.options import SynthOptions
from shoparena.suites.synth import synthesize_problems


def bank(index, n: int, seed: int):
    """A small synthesised bank over the test catalog (all four intents)."""
    return synthesize_problems(list(index.iter_products()), SynthOptions(n=n, seed=seed)).problems


def test_run_writes_envelopes_and_resumes(synth, tmp_path) -> None:
    problems = bank(synth.index, 8, 3)
    out = tmp_path / "output.jsonl"
    first = run_episodes(PlannerAgent(), problems[:5], synth.index, out, workers=2, progress=False)
    assert first.written == 5 and first.skipped == 0
    second = run_episodes(PlannerAgent(), problems, synth.index, out, workers=2, progress=False)
    assert second.skipped == 5 and second.written == len(problems) - 5
    trajs = list(read_trajectories(out))
    assert sorted(t.problem_id for t in trajs) == sorted(p.problem_id for p in problems)  # no duplicates
    assert all(t.steps and t.steps[-1].tool_calls[-1].name == "terminate" for t in trajs)
    assert EnvelopeLog(out).done() == {p.problem_id for p in problems}


def test_killed_run_resumes_over_a_torn_line_and_an_empty_manifest(synth, tmp_path) -> None:
    """A run killed mid-write: the torn last envelope is cut and redone, the empty manifest rebuilt."""
    problems = bank(synth.index, 6, 5)
    run_dir = tmp_path / "run"
    run_episodes_dir(PlannerAgent(), problems[:4], synth.index, run_dir, config={}, progress=False)
    out = run_dir / "output.jsonl"
    lines = out.read_bytes().split(b"\n")[:-1]
    torn_id = json.loads(lines[-1])["problem_id"]
    out.write_bytes(b"\n".join(lines[:-1]) + b"\n" + lines[-1][: len(lines[-1]) // 2])  # half a line
    (run_dir / "manifest.json").write_bytes(b"")
    summary = run_episodes_dir(PlannerAgent(), problems, synth.index, run_dir, config={}, progress=False)
    assert summary.skipped == 3 and summary.written == 3
    records = [json.loads(line) for line in out.read_bytes().split(b"\n") if line]  # every line valid JSON
    ids = [r["problem_id"] for r in records]
    assert sorted(ids) == sorted(p.problem_id for p in problems) and torn_id in ids  # each exactly once
    assert read_manifest(run_dir, EpisodesManifest).suite_size == len(problems)


def test_agent_crash_is_recorded_as_failed(hand, product_problem, tmp_path) -> None:
    class Crashing:
        name = "crash"

        def act(self, observation, tools):
            raise RuntimeError("model server gone")

    out = tmp_path / "o.jsonl"
    summary = run_episodes(Crashing(), [product_problem], hand.index, out, progress=False)
    assert summary.statuses == {"FAILED": 1}
    (traj,) = read_trajectories(out)
    assert traj.status.value == "FAILED" and "model server gone" in traj.error.message


def test_scripted_agent_replays_steps(hand, product_problem, tmp_path) -> None:
    agent = ScriptedAgent(
        [
            tagged_step("s", [{"name": "find_product", "parameters": {"q": "nike", "page": 1}}]),
            tagged_step(
                "r",
                [
                    {"name": "recommend_product", "parameters": {"product_ids": "101"}},
                    {"name": "terminate", "parameters": {"status": "success"}},
                ],
            ),
        ]
    )
    out = tmp_path / "o.jsonl"
    run_episodes(agent, [product_problem], hand.index, out, progress=False)
    (traj,) = read_trajectories(out)
    assert [c.name for s in traj.steps for c in s.tool_calls] == [
        "find_product",
        "recommend_product",
        "terminate",
    ]
    assert traj.steps[0].tool_calls[0].result[0]["product_id"] == "101"
    assert [i for _, i in agent.calls] == [1, 2]


def test_cli_run_out_and_run_dir(synth, tmp_path) -> None:
    problems = bank(synth.index, 4, 5)
    suite = tmp_path / "suite.json"
    write_oro_suite(problems, suite)
    loaded, _ = load_suite(suite)
    assert [p.problem_id for p in loaded] == [p.problem_id for p in problems]
    out = tmp_path / "out.jsonl"
    runner = CliRunner()
    args = [
        "episodes",
        "run",
        "--agent",
        "planner",
        "--suite",
        str(suite),
        "--index",
        str(synth.index.index_dir),
        "--no-progress",
    ]
    res = runner.invoke(app, [*args, "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert len(list(read_trajectories(out))) == len(problems)
    res = runner.invoke(app, [*args, "--out", str(out)])
    assert res.exit_code == 0 and json.loads(res.stdout.strip().splitlines()[-1])["skipped"] == len(problems)
    scored = runner.invoke(
        app,
        [
            "score",
            "--suite",
            str(suite),
            "--trajectories",
            str(out),
            "--index",
            str(synth.index.index_dir),
            "--json",
        ],
    )
    assert scored.exit_code == 0, scored.output
    run_dir = tmp_path / "run"
    res = runner.invoke(app, [*args, "--run-dir", str(run_dir)])
    assert res.exit_code == 0, res.output
    assert {p.name for p in run_dir.iterdir()} >= {
        "config.yaml",
        "manifest.json",
        "output.jsonl",
        "summary.json",
    }
    manifest = json.loads((run_dir / "manifest.json").read_text())
    summary = run_episodes_dir(PlannerAgent(), loaded, synth.index, run_dir, config={}, progress=False)
    assert summary.skipped == len(problems) and summary.run_id == manifest["run_id"]
    assert runner.invoke(app, [*args]).exit_code != 0  # neither --out nor --run-dir
