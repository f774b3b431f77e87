"""A pipeline run directory holding every section's data in the shapes of the corpus/eval contract."""

from __future__ import annotations

import json
import time
from pathlib import Path

from shoparena.pipeline import PipelineConfig
from shoparena.runs import RunDir

CATEGORIES = ("product", "shop", "voucher", "web")


def _estimate(value: float) -> dict:
    return {
        "value": value,
        "ci_low": max(0, value - 0.1),
        "ci_high": min(1, value + 0.1),
        "method": "wilson",
        "n": 60,
    }


def _eval_summary(base: float, samples: int) -> dict:
    """The shape of shoparena.eval's summary.json (EvalSummary.dump())."""

    def block(asr: float) -> dict:
        return {
            "problems": 60,
            "samples": samples,
            "greedy_asr": _estimate(asr),
            "pass@1": _estimate(asr),
            "pass@k": {str(k): _estimate(min(1.0, asr + 0.05 * (k - 1))) for k in range(1, samples + 1)},
            "pass^k": {str(k): _estimate(max(0.0, asr - 0.05 * (k - 1))) for k in range(1, samples + 1)},
            "format_score": _estimate(1.0),
        }

    per = {c: block(base + 0.02 * i) for i, c in enumerate(CATEGORIES)}
    return {
        "label": "held_out",
        "profiles": {
            "strict": {"overall": block(base), **per},
            "shoppingbench": {"overall": block(base + 0.05), **per},
        },
        "decoding": {"mode": "sampled", "temperature": 0.7, "n": samples, "greedy_episode": True},
    }


def full_run_dir(root: Path) -> Path:
    """A run whose every section has data: funnel 1234 → 321 kept, base 0.123 vs student 0.456 strict."""
    run = RunDir(root / "run", kind="pipeline", config=PipelineConfig())
    corpus = root / "run" / "corpus"
    (corpus / "views").mkdir(parents=True)
    (corpus / "report.json").write_text(
        json.dumps(
            {
                "funnel": {
                    "input": 1234,
                    "quarantined": 34,
                    "records": 1200,
                    "rejected": {"subtask": 600, "judge_below_bar": 279, "forged": 0},
                    "kept": 321,
                    "recovered": 500,
                    "recovered_kept": 410,
                    "views": {"sft": {"train": 280, "eval": 41}},
                    "adds_up": True,
                },
                "richness_histogram": {
                    "agentic": {"0.0": 1, "1.0": 80},
                    "subtask": {"0.0": 70, "0.5": 3},
                },
                "judge_bins": {"0-0.25": 10, "0.25-0.5": 20, "0.5-0.75": 30, "0.75-1": 40},
            }
        )
    )
    row = {
        "record_id": "r1:p1:0",
        "outcome": "kept",
        "category": "product",
        "messages": [
            {"role": "system", "content": "You are a shopping agent.", "trainable": False},
            {"role": "user", "content": "red <shoes> under 50", "trainable": False},
            {
                "role": "assistant",
                "content": "",
                "trainable": True,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "find_product", "arguments": '{"q": "red shoes"}'},
                    }
                ],
            },
            {
                "role": "tool",
                "name": "find_product",
                "content": '[{"product_id": "P77"}]',
                "trainable": False,
            },
            {"role": "assistant", "content": "Answer: P77", "trainable": True},
        ],
    }
    (corpus / "views" / "sft-train.jsonl").write_text(json.dumps(row) + "\n")
    started = time.time()
    stage = lambda name, outputs: run.complete(name, {"n": name}, started, outputs, invalidate_later=False)  # noqa: E731
    stage(
        "firehose",
        {
            "races": [
                {
                    "race_id": "race-1",
                    "suite": "public_v1",
                    "winner": "miner-a",
                    "trajectories": 600,
                    "weights": {"miner-a": 0.7, "miner-b": 0.3},
                },
                {
                    "race_id": "race-2",
                    "suite": "public_v2",
                    "winner": "miner-b",
                    "trajectories": 634,
                    "weights": {"miner-a": 0.4, "miner-b": 0.6},
                },
            ]
        },
    )
    stage("corpus", {"path": str(corpus)})
    for name, asr in (("eval_base", 0.123), ("eval_student", 0.456)):
        d = root / "run" / name
        d.mkdir()
        (d / "summary.json").write_text(json.dumps(_eval_summary(asr, 4)))
        stage(name, {"path": str(d)})
    return root / "run"


def empty_run_dir(root: Path) -> Path:
    RunDir(root / "empty", kind="pipeline", config=PipelineConfig())
    return root / "empty"
