"""The default training tests again on SmolLM2-135M (``-m slow``: minutes on a CPU)."""

from __future__ import annotations

import json

import pytest

from shoparena.train.config import load_config

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def smollm2_path() -> str:
    from shoparena.models.smollm2 import ModelSourceError
    from shoparena.train.models import resolve_model

    try:
        return resolve_model("smollm2")
    except ModelSourceError as exc:
        pytest.skip(f"SmolLM2 not available offline: {exc}")


def _changed(before_dir, after_dir) -> bool:
    import torch
    from safetensors.torch import load_file

    before, after = load_file(f"{before_dir}/model.safetensors"), load_file(f"{after_dir}/model.safetensors")
    return all(not torch.equal(before[k], after[k]) for k in before)


def test_smollm2_sft_loss_falls_and_every_parameter_changes(smollm2_path, corpus, tmp_path) -> None:
    from shoparena.train.runner import train

    cfg = load_config(
        "smollm2",
        "sft",
        [
            f"data.corpus={corpus}",
            "sft.max_steps=4",
            "sft.learning_rate=1e-4",
            "sft.lr_scheduler_type=constant",
            "sft.warmup_steps=0",
        ],
    )
    train(cfg, tmp_path / "run", progress=False)
    losses = [
        e["loss"]
        for e in map(json.loads, (tmp_path / "run" / "logs.jsonl").read_text().splitlines())
        if "loss" in e
    ]
    assert losses[-1] < losses[0]
    assert _changed(smollm2_path, tmp_path / "run" / "final")


@pytest.mark.parametrize("mode", ["offline", "online"])
def test_smollm2_grpo_step_logs_rewards(smollm2_path, corpus, hand, tmp_path, mode) -> None:
    from shoparena.train.runner import train

    sets = [
        f"data.corpus={corpus}",
        "grpo.max_steps=1",
        "grpo.max_completion_length=32",
        f"grpo.grpo_mode={mode}",
        f"env.index={hand.catalog.parent / 'index'}",
        "env.max_steps=2",
        "grpo.temperature=1.0",
    ]
    train(load_config("smollm2", "grpo", sets), tmp_path / "run", progress=False)
    assert any(
        "reward" in e for e in map(json.loads, (tmp_path / "run" / "logs.jsonl").read_text().splitlines())
    )


@pytest.mark.parametrize("granularity", ["trajectory", "step"])
def test_smollm2_kto(smollm2_path, corpus, tmp_path, granularity) -> None:
    from shoparena.train.runner import train

    sets = [
        f"data.corpus={corpus}",
        "kto.max_steps=1",
        f"kto.kto_granularity={granularity}",
        "data.select=kept+failed",
        "kto.per_device_train_batch_size=2",
    ]
    summary = train(load_config("smollm2", "kto", sets), tmp_path / "run", progress=False)
    assert summary["global_step"] == 1
