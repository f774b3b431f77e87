"""Dr. GRPO (offline per-step and online in ShopEnv) and KTO (both granularities) on the tiny model."""

from __future__ import annotations

import json

import pytest

from shoparena.train.config import load_config


def _weights_changed(before_dir, after_dir) -> bool:
    import torch
    from safetensors.torch import load_file

    before = load_file(f"{before_dir}/model.safetensors")
    after = load_file(f"{after_dir}/model.safetensors")
    return any(not torch.equal(before[k], after[k]) for k in before)


def _logs(run):
    return [json.loads(line) for line in (run / "logs.jsonl").read_text().splitlines()]


GROUP = 4
FAST = [
    "grpo.max_steps=1",
    "grpo.max_completion_length=64",
    f"grpo.num_generations={GROUP}",
    f"grpo.per_device_train_batch_size={2 * GROUP}",
]


def _recorded(real, calls: list):
    """``real`` unchanged, each call's rewards appended to ``calls`` (to compare with what was logged)."""

    def reward(*args, **kwargs):
        values = real(*args, **kwargs)
        calls.append(list(values))
        return values

    reward.__name__ = real.__name__
    return reward


def _varies_within_a_group(values: list[float]) -> bool:
    groups = [values[i : i + GROUP] for i in range(0, len(values), GROUP)]
    return any(max(g) > min(g) for g in groups)


def test_grpo_offline_is_dr_grpo_and_changes_weights(primed_tiny_path, corpus, tmp_path, monkeypatch) -> None:
    import shoparena.train.reward as reward_module
    from shoparena.train.runner import train
    from shoparena.train.trl_configs import build_trl_config

    calls: list[list[float]] = []
    monkeypatch.setattr(reward_module, "toolrl_reward", _recorded(reward_module.toolrl_reward, calls))
    cfg = load_config("tiny", "grpo", [f"model={primed_tiny_path}", f"data.corpus={corpus}", *FAST])
    args = build_trl_config(cfg, str(tmp_path / "x"))
    assert (args.loss_type, args.scale_rewards, args.beta) == ("dr_grpo", "none", 0.0)
    run = tmp_path / "run"
    train(cfg, run, progress=False)
    (rewards,) = calls  # one generation batch: 2 prompts x GROUP completions, real ToolRL totals
    assert len(rewards) == 2 * GROUP and all(-3.0 <= r <= 4.0 for r in rewards)
    assert _varies_within_a_group(rewards)  # the primed policy sometimes matches the teacher, sometimes not
    logged = [e for e in _logs(run) if "reward" in e]
    assert logged[0]["rewards/toolrl_reward/mean"] == pytest.approx(sum(rewards) / len(rewards), abs=1e-4)
    assert _weights_changed(primed_tiny_path, run / "final")


def test_grpo_online_plays_shopenv_and_changes_weights(
    primed_tiny_path, corpus, hand, tmp_path, monkeypatch
) -> None:
    import shoparena.train.online as online
    from shoparena.train.runner import train

    calls: list[list[float]] = []
    monkeypatch.setattr(online, "teacher_agreement", _recorded(online.teacher_agreement, calls))
    index = hand.catalog.parent / "index"
    overrides = [f"model={primed_tiny_path}", f"data.corpus={corpus}", *FAST]
    overrides += ["grpo.grpo_mode=online", f"env.index={index}", "env.max_steps=2"]
    cfg = load_config("tiny", "grpo", overrides)
    run = tmp_path / "run"
    summary = train(cfg, run, progress=False)
    assert summary["data"]["used"] == 4  # one opening state per kept agentic trajectory
    (agreement,) = calls
    assert len(agreement) == 2 * GROUP and all(-1.0 <= a <= 1.0 for a in agreement)
    assert _varies_within_a_group(agreement)  # some rollouts call the teacher's tool in ShopEnv, some do not
    logged = [e for e in _logs(run) if "reward" in e]
    assert "rewards/strict_outcome/mean" in logged[0]
    assert logged[0]["rewards/teacher_agreement/mean"] == pytest.approx(
        sum(agreement) / len(agreement), abs=1e-4
    )
    assert _weights_changed(primed_tiny_path, run / "final")


def test_online_tools_match_the_env_schemas(hand) -> None:
    from transformers.utils import get_json_schema

    from shoparena.env.environment import ShopEnv
    from shoparena.train.online import ShopRolloutEnv

    for schema in ShopEnv(hand.index).tool_schemas():
        rendered = get_json_schema(getattr(ShopRolloutEnv, schema.name))["function"]
        assert rendered["name"] == schema.name
        assert set(rendered["parameters"]["properties"]) == set(schema.parameters["properties"])
        assert rendered["description"].split()[:4] == schema.description.split()[:4]


def test_teacher_agreement() -> None:
    from shoparena.train.online import teacher_agreement

    teacher = json.dumps(
        [
            [{"name": "find_product", "arguments": {"q": "x", "page": 1}}],
            [{"name": "terminate", "arguments": {"status": "success"}}],
        ]
    )
    good = [
        {
            "role": "assistant",
            "tool_calls": [{"function": {"name": "find_product", "arguments": {"q": "x", "page": 1}}}],
        },
        {"role": "tool", "content": "[]"},
        {
            "role": "assistant",
            "tool_calls": [{"function": {"name": "terminate", "arguments": {"status": "success"}}}],
        },
    ]
    assert teacher_agreement(None, [good, good[:1], []], [teacher] * 3) == [1.0, 0.0, -1.0]


@pytest.mark.parametrize("granularity,rows", [("trajectory", 4), ("step", 12)])
def test_kto_on_both_granularities(tiny_path, corpus, tmp_path, granularity, rows) -> None:
    from shoparena.train.runner import train

    cfg = load_config(
        "tiny",
        "kto",
        [
            f"data.corpus={corpus}",
            "kto.max_steps=1",
            "kto.per_device_train_batch_size=2",
            f"kto.kto_granularity={granularity}",
            "data.select=kept+failed",
        ],
    )
    summary = train(cfg, tmp_path / "run", progress=False)
    assert summary["data"]["used"] == rows * 2  # 8 trajectories: 6 kept (desirable), 2 judged low
    # The class weights come from the rows' balance (6 desirable : 2 undesirable per trajectory), recorded.
    balance = summary["data"]["derived"]["kto"]
    assert balance["source"] == "balance" and balance["in_trl_range"]
    assert balance["desirable"] == 3 * balance["undesirable"] and balance["desirable_weight"] < 1.0
    assert any("loss" in e for e in _logs(tmp_path / "run"))
    assert _weights_changed(tiny_path, tmp_path / "run" / "final")


def test_kto_steps_are_split_from_trajectory_rows(corpus) -> None:
    """A corpus with trajectory rows only (the corpus builder's default) still trains per step."""
    from shoparena.train.data import prepare_kto, select_rows

    rows, report = select_rows(
        load_config("tiny", "kto", [f"data.corpus={corpus}", "data.select=kept+failed"])
    )
    only_trajectories = rows.filter(lambda r: r["granularity"] == "trajectory")
    steps = prepare_kto(only_trajectories, report, granularity="step")
    assert len(steps) == 8 * 3  # three assistant turns per trajectory
    assert all(s["completion"][0]["role"] == "assistant" for s in steps)
    assert sum(s["label"] for s in steps) == 6 * 3  # kept (both origins) are desirable


def test_grpo_offline_drops_step_prompts_longer_than_the_limit(tiny_path, corpus, tmp_path) -> None:
    from transformers import AutoTokenizer

    from shoparena.train.config import ConfigError
    from shoparena.train.data import DataReport, prepare_grpo_offline, select_rows, step_prompts
    from shoparena.train.methods import grpo_prompt_limit
    from shoparena.train.trl_configs import build_trl_config

    cfg = load_config("tiny", "grpo", [f"data.corpus={corpus}", *FAST])
    tokenizer = AutoTokenizer.from_pretrained(tiny_path)
    rows, _ = select_rows(cfg)
    prompts = list(step_prompts(cfg.data, rows))  # the steps view keeps each prompt in the sft view
    everything = prepare_grpo_offline(rows, tokenizer, DataReport("steps", "train", "kept"), prompts=prompts)
    lengths = sorted(len(tokenizer(p, add_special_tokens=False)["input_ids"]) for p in everything["prompt"])
    assert lengths[0] < lengths[-1]  # the fixture's steps grow: a limit between them splits the rows
    limit = lengths[len(lengths) // 2]
    report = DataReport("steps", "train", "kept")
    kept = prepare_grpo_offline(rows, tokenizer, report, max_prompt_tokens=limit, prompts=prompts)
    longer = sum(n > limit for n in lengths)
    assert report.dropped == {"prompt_too_long": longer} and len(kept) == report.used == len(lengths) - longer
    with pytest.raises(ConfigError, match="max_prompt_tokens"):
        prepare_grpo_offline(
            rows, tokenizer, DataReport("steps", "train", "kept"), max_prompt_tokens=1, prompts=prompts
        )
    # The default limit is the model's context minus the completion budget; an explicit one wins.
    args = build_trl_config(cfg, str(tmp_path / "x"))
    assert grpo_prompt_limit(args, tokenizer) == tokenizer.model_max_length - 64  # FAST budget
    explicit = build_trl_config(
        load_config("tiny", "grpo", ["grpo.max_prompt_tokens=99"]), str(tmp_path / "y")
    )
    assert grpo_prompt_limit(explicit, tokenizer) == 99


@pytest.mark.parametrize("desirable", [1, 3, 50, 317, 1016, 5000])
@pytest.mark.parametrize("undesirable", [1, 7, 120, 699, 4000])
def test_kto_weights_fall_in_trls_recommended_range(desirable, undesirable) -> None:
    """TRL's KTOConfig guidance: desirable_weight * n_desirable / (undesirable_weight * n_undesirable) in
    [1, 4/3]; and TRL's own check (kto_trainer: EITHER weight inside its rounded bounds) stays silent."""
    from shoparena.train.data import kto_class_weights

    dw, uw = kto_class_weights(desirable, undesirable)
    assert 1.0 <= dw * desirable / (uw * undesirable) <= 4 / 3
    assert max(dw, uw) == 1.0 and min(dw, uw) > 0  # the majority weighed down, no loss scaled up
    des_low, des_high = (round(undesirable * uw / desirable * f, 2) for f in (1, 1.33))
    und_low, und_high = (round(desirable * dw / undesirable / f, 2) for f in (1.33, 1))
    assert des_low <= dw <= des_high or und_low <= uw <= und_high


def test_kto_weights_given_in_the_config_win(corpus, tmp_path) -> None:
    from shoparena.train.data import DataReport, kto_balance
    from shoparena.train.trl_configs import build_trl_config

    cfg = load_config("tiny", "kto", [f"data.corpus={corpus}", "kto.undesirable_weight=0.5"])
    args = build_trl_config(cfg, str(tmp_path / "x"))
    report = DataReport("kto", "train", "kept+failed")
    used = kto_balance([True] * 6 + [False] * 2, args, cfg.trainer, report)
    assert used["source"] == "config" and (args.desirable_weight, args.undesirable_weight) == (1.0, 0.5)
    assert used["weighted_ratio"] == 6.0 and not used["in_trl_range"]  # recorded as is, out of range
