"""An eval run directory names its inputs by absolute path and a resume that plays nothing changes nothing
(issue 31, finding 6: paths relative to where a command was typed)."""

from __future__ import annotations

import shutil

import yaml
from typer.testing import CliRunner

from shoparena.cli.main import app
from shoparena.eval.config import EvalConfig
from shoparena.runs.identity import fingerprint
from shoparena.viewer import episode_detail, load_runs


def test_relative_inputs_are_stored_absolute_and_an_idle_resume_leaves_the_run_unchanged(
    bank, synth, tmp_path, monkeypatch
) -> None:
    work = tmp_path / "typed-here"
    work.mkdir()
    shutil.copy(bank, work / "bank.json")
    shutil.copytree(synth.index.index_dir, work / "index")
    monkeypatch.chdir(work)
    common = ["--limit", "2", "--max-steps", "6", "--no-progress"]
    args = ["eval", "run", "--policy", "planner", "--suite", "bank.json", "--index", "index", "--out", "run"]
    assert CliRunner().invoke(app, [*args, *common]).exit_code == 0
    run = work / "run"
    config = EvalConfig.model_validate(yaml.safe_load((run / "config.yaml").read_text()))
    assert config.suite == work / "bank.json" and config.index == work / "index" and config.out == run
    before = fingerprint(run)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    again = [*args[:5], str(work / "bank.json"), "--index", str(work / "index"), "--out", str(work / "run")]
    result = CliRunner().invoke(app, [*again, *common])
    assert result.exit_code == 0, result.output
    assert fingerprint(run) == before  # a resume that played 0 episodes: the same content
    (loaded,) = load_runs([run])  # read from another directory: the verdict is still there
    assert episode_detail(loaded.items[0])["checks"] is not None
