"""A pipeline run directory holding every section's data in the shapes of the corpus/eval contract."""

from __future__ import annotations

import json
import time
from pathlib import Path

from shoparena.pipeline import PipelineConfig
from shoparena.pipeline.outputs import (
    CorpusOutput,
    EvalOutput,
    FirehoseOutput,
    PairedVerdicts,
    RaceSummary,
    StageOutput,
    StudentEvalOutput,
)
from shoparena.records.corpus import CorpusFunnel
from shoparena.runs import RunDir


def full_run_dir(root: Path, samples: int = 4) -> Path:
    """A run whose every section has data: funnel 1234 → 321 kept; on 24 held-out problems (12 per intent) the
    base solves 3 and the student 13 (strict, greedy), so the report has a paired headline."""
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

    def stage(output: StageOutput) -> None:  # what the stage function returns, recorded as the DAG does
        run.complete(output.stage, {"n": output.stage}, started, output.record(), invalidate_later=False)

    races = [
        RaceSummary(
            race_id="race-1",
            status="RACE_COMPLETE",
            suite="public_v1",
            winner="miner-a",
            trajectories=600,
            weights={"miner-a": 0.7, "miner-b": 0.3},
        ),
        RaceSummary(
            race_id="race-2",
            status="RACE_COMPLETE",
            suite="public_v2",
            winner="miner-b",
            trajectories=634,
            weights={"miner-a": 0.4, "miner-b": 0.6},
        ),
    ]
    firehose = root / "run" / "firehose"
    stage(FirehoseOutput(path=str(firehose), race_dirs=[], races=races, trajectories=1234))
    funnel = json.loads((corpus / "report.json").read_text())["funnel"]
    stage(CorpusOutput(path=str(corpus), funnel=CorpusFunnel.model_validate(funnel)))
    suite = held_out_suite(root / "run" / "heldout.json")
    for model, solved in ((EvalOutput, BASE_SOLVES), (StudentEvalOutput, STUDENT_SOLVES)):
        d = eval_run_dir(root / "run" / model.stage, suite, solved, samples=samples)
        summary = json.loads((d / "summary.json").read_text())
        output = model(
            path=str(d),
            policy="planner",
            label=summary["label"],
            strict_overall=summary["profiles"]["strict"]["overall"],
        )
        if isinstance(output, StudentEvalOutput):
            output.vs_shortcut = PairedVerdicts.model_validate(VS_SHORTCUT)
        stage(output)
    add_shortcut_floor(root / "run" / "eval_student")
    return root / "run"


#: What the no-LLM shortcut solves on the same problems, and the student's pairing with it (eval_student's
#: ``vs_shortcut``): 13 vs 7 on 24 problems, 8 problems only the student solves, 2 only the shortcut.
SHORTCUT_SOLVES = {"Product": 7, "Shop": 0}
VS_SHORTCUT = {
    "greedy": {"a_only": 2, "b_only": 8, "both": 5, "neither": 9, "p_value": 0.109},
    "greedy_asr": {"a": 0.292, "b": 0.542, "diff": 0.25, "ci_low": 0.042, "ci_high": 0.458},
}


def add_shortcut_floor(eval_dir: Path) -> None:
    """Write the shortcut floor (``eval run``'s ``shortcut_floor``) into an eval summary."""
    from shoparena.eval.metrics import proportion

    path = eval_dir / "summary.json"
    summary = json.loads(path.read_text())
    per = {c: proportion(n, PER_INTENT).model_dump() for c, n in SHORTCUT_SOLVES.items()}
    total = proportion(sum(SHORTCUT_SOLVES.values()), PER_INTENT * len(SHORTCUT_SOLVES)).model_dump()
    summary["shortcut_floor"] = {p: {"overall": total, **per} for p in ("strict", "shoppingbench")}
    path.write_text(json.dumps(summary))


#: Held-out problems per intent, and how many of each the base and the student solve (greedy).
PER_INTENT = 12
BASE_SOLVES = {"Product": 2, "Shop": 1}
STUDENT_SOLVES = {"Product": 9, "Shop": 4}


def held_out_suite(path: Path) -> Path:
    from shoparena.records.problem import Intent, Problem, RewardItem
    from shoparena.suites.loaders import write_oro_suite

    problems = [
        Problem(
            problem_id=f"{intent.lower()}-{i}",
            query=f"{intent} request {i}",
            intent=Intent.PRODUCT,
            category=intent,
            reward=[RewardItem(product_id=str(i), title=[f"Thing {i}"])],
        )
        for intent in BASE_SOLVES
        for i in range(PER_INTENT)
    ]
    write_oro_suite(problems, path)
    return path


def eval_run_dir(out: Path, suite: Path, solved: dict[str, int], *, samples: int) -> Path:
    """A finished ``eval run`` directory (config, episodes, summary by ``shoparena.eval``'s own summarise):
    the first ``solved[intent]`` problems of each intent succeed in every sample."""
    import yaml

    from shoparena.env.episodes import suite_hash
    from shoparena.eval.config import EvalConfig
    from shoparena.eval.leak import LeakCheck, SuiteIdentity
    from shoparena.eval.run import EpisodeRecord, summarise
    from shoparena.suites.loaders import load_suite

    problems, _ = load_suite(suite)
    config = EvalConfig(policy="planner", suite=suite, index=out.parent, out=out, samples=samples)
    wins = {p.problem_id: int(p.query.rsplit(" ", 1)[1]) < solved[p.category] for p in problems}
    records = [
        EpisodeRecord(
            problem_id=p.problem_id,
            sample_idx=i,
            decoding=decoding,
            category=p.category,
            status="SUCCESS",
            success_strict=wins[p.problem_id],
            success_shoppingbench=wins[p.problem_id],
        )
        for p in problems
        for i, decoding in config.episode_plan()
    ]
    out.mkdir(parents=True)
    (out / "config.yaml").write_text(yaml.safe_dump(config.model_dump(mode="json")))
    (out / "episodes.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in records))
    identity = SuiteIdentity(
        path=str(suite), sha256="0" * 64, content_hash=suite_hash(problems), problems=len(problems),
        partition="heldout",
    )  # fmt: skip
    summary = summarise(config, problems, records, identity, LeakCheck(status="unchecked"), {}, out.name)
    (out / "summary.json").write_text(json.dumps(summary.dump()))
    return out


def empty_run_dir(root: Path) -> Path:
    RunDir(root / "empty", kind="pipeline", config=PipelineConfig())
    return root / "empty"
