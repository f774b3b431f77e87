"""The embedded-default pipeline (``make run``) end to end, small, and its resume behaviour."""

from __future__ import annotations

import json

import yaml
from rich.console import Console

from shoparena.quickstart import QuickstartConfig, run_quickstart
from shoparena.runs.manifest import RunManifest

STAGES = ["catalog", "index", "suite", "episodes"]


def test_quickstart_runs_every_stage_and_resumes(tmp_path):
    config = QuickstartConfig(products=800, problems=12, seed=3, workers=1, episode_workers=1)
    console = Console(file=open(tmp_path / "console.txt", "w"), width=120)  # noqa: SIM115
    summary = run_quickstart(config, tmp_path / "run", console=console)

    run = tmp_path / "run"
    assert yaml.safe_load((run / "config.yaml").read_text())["problems"] == 12
    manifest = RunManifest.model_validate_json((run / "manifest.json").read_text())
    assert list(manifest.stages) == STAGES
    assert json.loads((run / "summary.json").read_text())["scores"].keys() == {"strict", "shoppingbench"}
    # Every problem of the bank got an episode and a verdict under both profiles.
    bank = json.loads((run / "suite" / "bank.json").read_text())
    episodes_file = run / manifest.stages["episodes"].outputs["path"]
    envelopes = episodes_file.read_text().splitlines()
    assert len(envelopes) == len(bank) == 12
    for profile in ("strict", "shoppingbench"):
        assert len((run / "scores" / f"verdicts.{profile}.jsonl").read_text().splitlines()) == 12
        assert 0.0 <= summary["scores"][profile]["success_rate"] <= 1.0
    assert summary["scores"]["strict"]["format_score"] == 1.0

    # Same command again: every stage is resumed, nothing is redone or appended.
    again = run_quickstart(config, tmp_path / "run", console=console)
    manifest2 = RunManifest.model_validate_json((run / "manifest.json").read_text())
    assert {k: v.completed_at for k, v in manifest2.stages.items()} == {
        k: v.completed_at for k, v in manifest.stages.items()
    }
    assert episodes_file.read_text().splitlines() == envelopes
    assert again["scores"] == summary["scores"]

    # A changed suite config redoes the suite and everything after it, not the catalog or index.
    bigger = config.model_copy(update={"problems": 16})
    run_quickstart(bigger, tmp_path / "run", console=console)
    manifest3 = RunManifest.model_validate_json((run / "manifest.json").read_text())
    assert manifest3.stages["catalog"].completed_at == manifest.stages["catalog"].completed_at
    assert manifest3.stages["suite"].completed_at > manifest.stages["suite"].completed_at
    new_episodes = run / manifest3.stages["episodes"].outputs["path"]
    assert new_episodes != episodes_file
    assert len(new_episodes.read_text().splitlines()) == 16
