"""Training configs: presets, extends, --set overrides, TRL validation, clear errors; no torch for the CLI."""

from __future__ import annotations

import subprocess
import sys

import pytest

from shoparena.train.config import ConfigError, load_config, preset_names


def test_presets_ship_and_resolve_for_every_method() -> None:
    assert set(preset_names()) >= {"tiny", "smollm2", "student-cpu", "qwen3-4b"}
    for name in preset_names():
        for method in ("sft", "grpo", "kto"):
            cfg = load_config(name, method)
            assert cfg.method == method and cfg.model


def test_qwen3_4b_has_the_shoppingbench_hyper_parameters() -> None:
    sft = load_config("qwen3-4b", "sft").trainer
    assert (sft["learning_rate"], sft["num_train_epochs"], sft["max_length"]) == (5e-5, 5, 20480)
    assert sft["bf16"] is True and sft["per_device_train_batch_size"] == 1
    assert sft["lr_scheduler_type"] == "cosine" and sft["warmup_steps"] == 0.1 and sft["packing"] is True
    grpo = load_config("qwen3-4b", "grpo").trainer
    assert (grpo["num_generations"], grpo["max_completion_length"], grpo["learning_rate"]) == (4, 1024, 1e-6)
    assert (grpo["temperature"], grpo["top_p"], grpo["seed"]) == (0.2, 0.8, 31415)
    lora = load_config("qwen3-4b", "sft", ["lora.r=16"]).lora
    assert lora is not None and lora.target_modules == ["q_proj", "k_proj", "v_proj", "o_proj"]


def test_extends_and_overrides(tmp_path) -> None:
    path = tmp_path / "mine.yaml"
    path.write_text("extends: smollm2\ndata: {select: kept+failed}\nsft: {max_steps: 3}\n")
    cfg = load_config(path, "sft", ["sft.learning_rate=1e-4", "data.corpus=/c"])
    assert cfg.model == "smollm2" and cfg.data.select == "kept+failed" and cfg.data.corpus == "/c"
    assert cfg.trainer["max_steps"] == 3 and cfg.trainer["learning_rate"] == 1e-4
    assert cfg.trainer["use_cpu"] is True  # inherited from tiny through smollm2
    assert cfg.view == "sft" and load_config(path, "grpo").view == "steps"


def test_unfiltered_is_a_deprecated_name_of_kept_failed() -> None:
    """The old name still loads, as what it always was, and says so (it never was the raw firehose)."""
    from shoparena.pipeline.config import SFTSection

    with pytest.warns(FutureWarning, match="'unfiltered' is deprecated: it is 'kept\\+failed'"):
        cfg = load_config("tiny", "sft", ["data.select=unfiltered"])
    assert cfg.data.select == "kept+failed"
    with pytest.warns(FutureWarning, match="deprecated"):
        assert SFTSection(select="unfiltered").select == "kept+failed"
    assert load_config("tiny", "sft", ["data.select=raw"]).data.select == "raw"


@pytest.mark.parametrize(
    "sets,needle",
    [(["data.select=everything"], "data.select"), (["lora.rank=3"], "lora.rank"), (["oops"], "key=value")],
)
def test_bad_config_names_the_field(sets, needle) -> None:
    with pytest.raises(ConfigError, match=needle.replace(".", r"\.")):
        load_config("tiny", "sft", sets)


def test_every_preset_builds_its_trl_configs(tmp_path) -> None:
    pytest.importorskip("trl")
    from shoparena.train.trl_configs import build_trl_config

    for name in preset_names():
        for method in ("sft", "grpo", "kto"):
            cfg = load_config(name, method)
            if cfg.trainer.get("bf16"):  # GPU presets: validated without a GPU
                cfg.trainer.update(bf16=False, activation_checkpointing=False)
            build_trl_config(cfg, str(tmp_path / f"{name}-{method}"))


def test_trl_config_is_extended_and_validated(tmp_path) -> None:
    pytest.importorskip("trl")
    from trl import GRPOConfig, KTOConfig, SFTConfig

    from shoparena.train.trl_configs import build_trl_config

    sft = build_trl_config(load_config("tiny", "sft"), str(tmp_path))
    grpo = build_trl_config(load_config("tiny", "grpo"), str(tmp_path))
    kto = build_trl_config(load_config("tiny", "kto"), str(tmp_path))
    assert isinstance(sft, SFTConfig) and isinstance(grpo, GRPOConfig) and isinstance(kto, KTOConfig)
    assert sft.activation_checkpointing is False and kto.kto_granularity == "trajectory"
    with pytest.raises(ConfigError, match="lerning_rate"):
        build_trl_config(load_config("tiny", "sft", ["sft.lerning_rate=1"]), str(tmp_path))
    with pytest.raises(ConfigError, match="grpo_mode"):
        build_trl_config(load_config("tiny", "grpo", ["grpo.grpo_mode=sideways"]), str(tmp_path))


def test_cli_help_does_not_import_torch() -> None:
    code = (
        "import sys\nfrom typer.testing import CliRunner\nfrom shoparena.cli.main import app\n"
        "r = CliRunner().invoke(app, ['train', 'sft', '--help'])\nassert r.exit_code == 0, r.output\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('torch', 'trl', 'transformers')]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize(
    "trainer,expected",
    [
        ({}, "float32"),
        ({"bf16": True}, "bfloat16"),  # the GPU recipe: bf16 weights
        ({"bf16": True, "weights_dtype": "float32"}, "float32"),  # mixed precision, fp32 master weights
    ],
)
def test_weights_dtype_follows_bf16_unless_set(corpus, tmp_path, trainer, expected) -> None:
    import json

    from shoparena.train.runner import train

    sets = [f"data.corpus={corpus}", "trainer.max_steps=1", "trainer.save_steps=1"]
    sets += [f"trainer.{k}={json.dumps(v)}" for k, v in trainer.items()]
    train(load_config("tiny", "sft", sets), tmp_path / "run", progress=False)
    saved = json.loads((tmp_path / "run" / "final" / "config.json").read_text())
    assert saved["dtype"] == expected


def test_bad_weights_dtype_is_refused() -> None:
    from types import SimpleNamespace

    from shoparena.train.trl_configs import weights_dtype

    with pytest.raises(ValueError, match="weights_dtype"):
        weights_dtype(SimpleNamespace(weights_dtype="float16", bf16=False))
