"""A killed run resumes from its last checkpoint; a finished run is not redone."""

from __future__ import annotations

import json

import pytest

from shoparena.train.config import load_config


class Killed(RuntimeError):
    pass


def test_killed_run_resumes_from_its_checkpoint(tiny_path, corpus, tmp_path, monkeypatch) -> None:
    from transformers import TrainerCallback

    import shoparena.train.runner as runner

    cfg = load_config("tiny", "sft", [f"data.corpus={corpus}", "sft.max_steps=4", "sft.save_steps=2"])
    real_callbacks = runner._callbacks

    class KillAfterFirstCheckpoint(TrainerCallback):
        def on_save(self, args, state, control, **kwargs):
            if state.global_step == 2:
                raise Killed("simulated kill after checkpoint-2")

    monkeypatch.setattr(
        runner,
        "_callbacks",
        lambda run, progress: [*real_callbacks(run, progress), KillAfterFirstCheckpoint()],
    )
    run = tmp_path / "run"
    with pytest.raises(Killed):
        runner.train(cfg, run, progress=False)
    assert (run / "checkpoints" / "checkpoint-2").is_dir() and not (run / "final").exists()

    monkeypatch.setattr(runner, "_callbacks", real_callbacks)
    summary = runner.train(cfg, run, progress=False)
    assert summary["resumed_from"].endswith("checkpoint-2") and summary["global_step"] == 4
    steps = [json.loads(line)["step"] for line in (run / "logs.jsonl").read_text().splitlines()]
    assert [s for s in steps if s > 2] and steps.count(1) == 1  # steps 1-2 were not trained twice

    again = runner.train(cfg, run, progress=False)  # finished: returned, not retrained
    assert again == summary
