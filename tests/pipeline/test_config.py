"""pipeline.yaml: presets, overlays, clear errors, and the paper preset's dry run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from shoparena.cli.main import app
from shoparena.pipeline import PipelineConfigError, dry_run, load_pipeline_config
from shoparena.pipeline.dag import topological
from shoparena.pipeline.stages import pipeline_stages

ROOT = Path(__file__).resolve().parents[2]


def test_yaml_overlays_the_preset(tmp_path):
    path = tmp_path / "pipeline.yaml"
    path.write_text("sft:\n  trainer:\n    learning_rate: 0.001\ncatalog:\n  products: 1000\n")
    cfg = load_pipeline_config(path, preset="paper")
    assert cfg.sft.trainer["learning_rate"] == 0.001
    assert cfg.sft.trainer["num_train_epochs"] == 2  # kept from the preset
    assert cfg.sft.preset == "qwen3-4b"
    assert cfg.catalog.products == 1000
    assert cfg.model.base == "Qwen/Qwen3-4B"


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("sft:\n  select: everything\n", "field sft.select"),
        ("catalog:\n  prodcts: 5\n", "field catalog.prodcts"),
        ("- a\n- b\n", "top level must be a mapping"),
        ("sft: [unclosed\n", "cannot read"),
    ],
)
def test_bad_config_names_file_and_field(tmp_path, text, needle):
    path = tmp_path / "pipeline.yaml"
    path.write_text(text)
    with pytest.raises(PipelineConfigError, match=r"pipeline\.yaml") as err:
        load_pipeline_config(path)
    assert needle in str(err.value)


def test_paper_preset_dry_run_plans_every_stage_at_full_scale(tmp_path):
    result = CliRunner().invoke(
        app, ["pipeline", "run", "--preset", "paper", "--dry-run", "--out", str(tmp_path / "paper")]
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    cfg = payload["config"]
    assert cfg["catalog"]["products"] == 2_500_000
    population = 9  # shoparena.arena.firehose's default miner population per race
    trajectories = cfg["firehose"]["races"] * cfg["firehose"]["problems_per_race"] * population
    assert 18_043 <= trajectories < 18_043 * 1.01
    assert cfg["model"]["base"] == "Qwen/Qwen3-4B"
    assert cfg["eval"]["server"].startswith("http") and cfg["executor"] == "ray"  # vLLM's OpenAI server
    assert cfg["eval"]["samples"] == 8
    assert [row["stage"] for row in payload["plan"]] == [s.name for s in topological(pipeline_stages())]
    assert not any(row["done"] for row in payload["plan"])
    assert not (tmp_path / "paper").exists()  # a dry run writes nothing
    # The paper plan differs from the default in every stage: nothing of a laptop run would be reused.
    default = {r["stage"]: r["hash"] for r in dry_run(load_pipeline_config())}
    assert all(default[r["stage"]] != r["hash"] for r in payload["plan"] if r["stage"] != "index")


def test_unknown_preset_and_executor_are_rejected(tmp_path):
    runner = CliRunner()
    bad = runner.invoke(app, ["pipeline", "run", "--preset", "huge", "--dry-run", "--out", str(tmp_path)])
    assert bad.exit_code == 2 and "unknown preset" in bad.output
    bad = runner.invoke(app, ["pipeline", "run", "--executor", "dask", "--dry-run", "--out", str(tmp_path)])
    assert bad.exit_code == 2 and "executor" in bad.output


def test_editing_the_sft_preset_file_changes_the_sft_hash(tmp_path):
    preset = tmp_path / "student.yaml"
    preset.write_text("extends: tiny\nsft: {learning_rate: 1.0e-3}\n", encoding="utf-8")
    cfg = load_pipeline_config()
    cfg = cfg.model_copy(update={"sft": cfg.sft.model_copy(update={"preset": str(preset)})})
    before = {r["stage"]: r["hash"] for r in dry_run(cfg)}
    preset.write_text("extends: tiny\nsft: {learning_rate: 5.0e-4}\n", encoding="utf-8")
    after = {r["stage"]: r["hash"] for r in dry_run(cfg)}
    assert before["sft"] != after["sft"] and before["eval_student"] != after["eval_student"]
    assert before["corpus"] == after["corpus"] and before["eval_base"] == after["eval_base"]


def test_firehose_never_races_the_held_out_or_hidden_pools() -> None:
    from shoparena.pipeline.config import PipelineConfig

    config = PipelineConfig.model_validate({"firehose": {"extra_pools": ["train"]}})
    assert config.firehose.extra_pools == ["train"]
    for closed in ("heldout", "hidden"):
        with pytest.raises(ValueError, match="never feed the corpus"):
            PipelineConfig.model_validate({"firehose": {"extra_pools": ["train", closed]}})


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("eval:\n  options:\n    max_steps: 10\n", "field eval.options"),  # once silently overridden by 6
        ("eval:\n  options:\n    policy: planner\n", "set these themselves"),
        ("eval:\n  max_steps: 0\n", "field eval.max_steps"),  # EvalConfig's own constraint
        ("judge:\n  judge: human\n", "field judge.judge"),
        ("judge:\n  judge: llm\n", "needs a backend"),
        ("reference:\n  agent: oracle\n", "unknown agent 'oracle'"),
        ("reference:\n  similarity: fuzzy\n", "field reference.similarity"),
    ],
)
def test_sections_are_checked_by_their_models(tmp_path, text, needle):
    path = tmp_path / "pipeline.yaml"
    path.write_text(text)
    with pytest.raises(PipelineConfigError, match=r"pipeline\.yaml") as err:
        load_pipeline_config(path)
    assert needle in str(err.value)


def test_the_eval_section_builds_the_eval_config_with_its_stated_defaults(tmp_path):
    from shoparena.eval.config import EvalConfig
    from shoparena.pipeline.config import EvalSection

    section = EvalSection.model_validate({"samples": 2, "options": {"concurrency": 3, "executor": "ray"}})
    paths = {"suite": tmp_path / "s.json", "index": tmp_path / "i", "out": tmp_path / "o"}
    config = section.eval_config(executor="process", ray_address=None, policy="planner", **paths)
    assert isinstance(config, EvalConfig)
    assert (config.samples, config.concurrency, config.executor) == (2, 3, "ray")  # options over defaults
    assert (config.max_steps, config.max_tokens) == (6, 200)  # the pipeline's documented defaults
    assert EvalConfig.model_fields["max_steps"].default == 30
    described = EvalConfig.model_fields["max_steps"].description
    assert EvalSection.model_fields["max_steps"].description == described


def _leaves(tree: dict, prefix: str = "") -> dict[str, object]:
    out: dict[str, object] = {}
    for key, value in tree.items():
        name = f"{prefix}{key}"
        out.update(_leaves(value, f"{name}.") if isinstance(value, dict) and value else {name: value})
    return out


def test_the_paper_preset_is_the_student_recipe_with_other_numbers_model_and_engine():
    from shoparena.pipeline.config import PAPER_DIFFERS_IN

    student = _leaves(load_pipeline_config(preset="student").model_dump(mode="json"))
    paper = _leaves(load_pipeline_config(preset="paper").model_dump(mode="json"))
    differ = sorted(k for k in student.keys() | paper.keys() if student.get(k) != paper.get(k))
    assert differ, "the presets are the same"
    outside = [k for k in differ if not any(k == p or k.startswith(f"{p}.") for p in PAPER_DIFFERS_IN)]
    assert outside == []
    assert paper["firehose.extra_pools"] == student["firehose.extra_pools"] == ["train"]


def test_student_preset_dry_run_plans_every_stage(tmp_path):
    result = CliRunner().invoke(
        app, ["pipeline", "run", "--preset", "student", "--dry-run", "--out", str(tmp_path / "student")]
    )
    assert result.exit_code == 0, result.output
    config = json.loads(result.output)["config"]
    assert config["name"] == "student" and config["bank"]["heldout"] == 48
    assert config["firehose"]["extra_pools"] == ["train"] and config["corpus"]["render_profile"] == "compact"


def test_the_gpu_paper_check_runs_the_paper_recipe_on_a_small_world(tmp_path):
    """scripts/gpu_paper_check.py's overlay keeps the paper preset's model path, SFT preset, render profile;
    only the world, the judge (no vLLM on the device machine), the executor and SFT's step count differ."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("gpu_paper_check", ROOT / "scripts" / "gpu_paper_check.py")
    check = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(check)
    overlay = check.write_overlay("/models/qwen3-4b", tmp_path / "pipeline.yaml")
    smoke = _leaves(load_pipeline_config(overlay, preset="paper").model_dump(mode="json"))
    paper = _leaves(load_pipeline_config(preset="paper").model_dump(mode="json"))
    differ = {k.split(".")[0] for k in smoke.keys() | paper.keys() if smoke.get(k) != paper.get(k)}
    assert differ == {"executor", "workers", "catalog", "bank", "firehose", "judge", "model", "sft"}
    assert smoke["model.base"] == "/models/qwen3-4b" and smoke["sft.preset"] == paper["sft.preset"]
    assert smoke["corpus.render_profile"] == paper["corpus.render_profile"] == "upstream"
    assert smoke["sft.trainer.max_steps"] == 4 and smoke["catalog.products"] < paper["catalog.products"]
    assert {r["stage"] for r in dry_run(load_pipeline_config(overlay, preset="paper"))} >= {"firehose", "sft"}
