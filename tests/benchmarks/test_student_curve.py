"""benchmarks/student_curve.py's pieces that choose what a pilot is scored on: never-raced train-pool problems
(never a raced or held-out one), checkpoints spread over training with the final model last, basket groups."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from shoparena.pipeline.outputs import FirehoseOutput, PartitionsOutput, PoolOutput, TrainOutput
from student_curve import checkpoints, never_raced_pool, raced_ids, tokens_seen


def _problem(pid: str, category: str, items: int = 1) -> dict:
    return {
        "problem_id": pid,
        "category": category,
        "reward": [{"product_id": f"{pid}{i}"} for i in range(items)],
    }


def test_the_pool_holds_only_problems_no_race_drew_balanced_by_intent(tmp_path) -> None:
    pool = [_problem(f"{c[0]}{i}", c) for c in ("Product", "Shop", "Voucher", "Web") for i in range(6)]
    (tmp_path / "train.full.json").write_text(json.dumps(pool))
    race = tmp_path / "race-000"
    race.mkdir()
    (race / "race_suite.json").write_text(json.dumps([pool[0], pool[1], pool[6]]))
    firehose = FirehoseOutput(path=str(tmp_path), race_dirs=[str(race)], races=[], trajectories=3)
    partitions = PartitionsOutput(
        path=str(tmp_path),
        pools={"train": PoolOutput(path=str(tmp_path / "train.full.json"), problems=24, kind="train")},
        public=[],
    )
    raced = raced_ids(firehose)
    assert raced == {"P0", "P1", "S0"}
    chosen = never_raced_pool(partitions, raced, per_intent=5, seed=0)
    assert not {p["problem_id"] for p in chosen} & raced
    assert [sum(p["category"] == c for p in chosen) for c in ("Product", "Shop", "Voucher", "Web")] == [
        4,
        5,
        5,
        5,
    ]
    assert chosen == never_raced_pool(partitions, raced, per_intent=5, seed=0)  # seeded


def test_checkpoints_are_spread_and_end_with_the_final_model(tmp_path) -> None:
    snaps = tmp_path / "snaps"
    for step in (40, 80, 120, 160, 200):
        (snaps / f"checkpoint-{step}").mkdir(parents=True)
    train = TrainOutput(
        path=str(tmp_path / "run"),
        final=str(tmp_path / "run" / "final"),
        train_loss=None,
        global_step=None,
        rows={},
    )
    picked = [p.name for p in checkpoints(train, 3, snaps)]
    assert picked == ["checkpoint-80", "checkpoint-120", "final"]  # a third and two thirds of the run
    assert [p.name for p in checkpoints(train, 1, snaps)] == ["final"]
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "logs.jsonl").write_text(
        "".join(json.dumps({"step": s, "num_tokens": s * 10.0}) + "\n" for s in (5, 10, 15))
    )
    (snaps / "checkpoint-40" / "trainer_state.json").write_text(json.dumps({"global_step": 12}))
    assert tokens_seen(train, snaps / "checkpoint-40") == 100
    assert tokens_seen(train, tmp_path / "run" / "final") == 150
