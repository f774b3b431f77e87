"""`episodes run` loads the bank's knowledge sidecar beside the suite (plus --kb files) for web problems."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from shoparena.cli.main import app
from shoparena.env.knowledge import knowledge_path_for
from shoparena.formats.io import read_trajectories
from shoparena.records.problem import Intent
from shoparena.suites.options import SynthOptions
from shoparena.suites.synth import synthesize_bank


def _web_urls(out) -> list[str]:
    urls = []
    for traj in read_trajectories(out):
        for step in traj.steps:
            for call in step.tool_calls:
                if call.name == "web_search" and isinstance(call.result, dict):
                    urls += [page["url"] for page in call.result.get("observation", [])]
    return urls


def test_run_uses_suite_sidecar_and_extra_kb(synth, tmp_path) -> None:
    suite = tmp_path / "bank.json"
    synthesize_bank(synth.index.index_dir, suite, SynthOptions(n=3, seed=4, intents=(Intent.WEB,)))
    sidecar = knowledge_path_for(suite)
    assert sidecar.exists()
    args = ["episodes", "run", "--suite", str(suite), "--index", str(synth.index.index_dir), "--no-progress"]
    runner = CliRunner()
    res = runner.invoke(app, [*args, "--out", str(tmp_path / "with.jsonl")])
    assert res.exit_code == 0, res.output
    assert any("/wiki/" in u for u in _web_urls(tmp_path / "with.jsonl"))  # brand-fact pages were searched
    # Move the sidecar away: only catalog pages remain, unless it is passed with --kb.
    moved = tmp_path / "pages.jsonl"
    sidecar.rename(moved)
    res = runner.invoke(app, [*args, "--out", str(tmp_path / "without.jsonl")])
    assert res.exit_code == 0, res.output
    assert not any("/wiki/" in u for u in _web_urls(tmp_path / "without.jsonl"))
    res = runner.invoke(app, [*args, "--out", str(tmp_path / "kb.jsonl"), "--kb", str(moved)])
    assert res.exit_code == 0, res.output
    assert any("/wiki/" in u for u in _web_urls(tmp_path / "kb.jsonl"))
    assert json.loads(res.stdout.strip().splitlines()[-1])["written"] == 3
