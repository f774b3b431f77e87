"""Sizes a pipeline cannot meet are refused or warned about before any stage runs; the ``small`` preset runs
the same stages at a few minutes' size; the pipeline's corpus defaults are ``corpus build``'s."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from shoparena.cli.main import app
from shoparena.corpus.config import CorpusConfig
from shoparena.pipeline import PipelineConfig, PipelineConfigError, load_pipeline_config
from shoparena.pipeline.checks import size_warnings
from shoparena.pipeline.dag import topological
from shoparena.pipeline.stages import pipeline_stages


def _dry_run(tmp_path, yaml_text: str, *extra: str):
    path = tmp_path / "pipeline.yaml"
    path.write_text(yaml_text)
    args = ["pipeline", "run", "--config", str(path), "--dry-run", "--out", str(tmp_path / "run"), *extra]
    return CliRunner().invoke(app, args)


def test_a_held_out_pool_the_bank_cannot_fill_is_refused_before_any_stage(tmp_path):
    result = _dry_run(tmp_path, "bank:\n  problems: 40\n  heldout: 100\n")
    assert result.exit_code == 2 and "field bank.heldout" in result.stderr
    assert "public_size 150 x public_versions 3 + reserve 30" in result.stderr
    assert not (tmp_path / "run").exists()
    with pytest.raises(PipelineConfigError, match=r"raise bank\.problems"):
        load_pipeline_config(tmp_path / "pipeline.yaml")


def test_a_pool_the_bank_fills_only_in_part_is_a_warning(tmp_path):
    result = _dry_run(tmp_path, "bank:\n  problems: 560\n  heldout: 100\n")
    assert result.exit_code == 0, result.output
    assert "warning: bank.problems 560: pool heldout: 100 requested, at most 80 left" in result.stderr
    longer = _dry_run(tmp_path, "firehose:\n  problems_per_race: 200\n")
    assert longer.exit_code == 0 and "firehose.problems_per_race 200 > bank.public_size 150" in longer.stderr


def test_the_shipped_presets_meet_their_own_sizes():
    for name in ("default", "small", "paper"):
        assert size_warnings(load_pipeline_config(preset=name)) == [], name


def test_the_small_preset_runs_every_stage_at_a_few_minutes_size(tmp_path):
    result = CliRunner().invoke(
        app, ["pipeline", "run", "--preset", "small", "--dry-run", "--out", str(tmp_path / "small")]
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    cfg = payload["config"]
    assert [row["stage"] for row in payload["plan"]] == [s.name for s in topological(pipeline_stages())]
    default = load_pipeline_config()
    assert cfg["catalog"]["products"] < default.catalog.products / 4
    assert cfg["firehose"]["races"] * cfg["firehose"]["problems_per_race"] < 0.2 * (
        default.firehose.races * default.firehose.problems_per_race
    )
    assert cfg["model"]["base"] == default.model.base and cfg["sft"]["preset"] == default.sft.preset
    assert cfg["firehose"]["options"] == default.firehose.options.model_dump(mode="json")  # the same miners
    listed = CliRunner().invoke(app, ["pipeline", "presets"])
    assert listed.exit_code == 0 and "small: 1,000 products" in listed.stdout


def test_the_pipelines_corpus_defaults_are_corpus_builds():
    section, built = PipelineConfig().corpus, CorpusConfig(out="x")
    assert section.render_profile == built.render_profile == "compact"
    assert section.recover == built.recover
