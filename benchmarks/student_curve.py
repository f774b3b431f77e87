"""A student's scaling curve on problems that are fair to tune on: the corpus's eval split and never-raced
problems of the train pool, at each saved training checkpoint (never the held-out partition).

Usage:
  python benchmarks/student_curve.py RUN_DIR [--out DIR] [--pool 80] [--checkpoints 3] [--quick]

RUN_DIR is a ``pipeline run --until sft`` directory (or a whole one: its held-out evaluations are not read).
For the SFT run's checkpoints (``--checkpoints N``: N of them spread over training, always the final model)
it evaluates the student strict and greedy with the pipeline's own ``eval`` settings on

* ``eval-split``: the corpus's ``eval`` split (whole leak clusters the student never trained on);
* ``pool``: ``--pool`` problems of the ``train`` partition that no firehose race drew (balanced by intent,
  seeded), so they reached neither corpus nor training;

and writes ``OUT/curve.json`` with, per checkpoint and suite: training seconds so far (the model stage's
plus the SFT run's up to that checkpoint, from file times), training tokens, success by intent and by basket
size (2 vs 3-4 items) with Wilson intervals, the shortcut floor on the same problems, and (final only) the
teacher-forced basket decisions on the eval split (``train.teacher_forcing.basket_decisions``). ``--quick``
evaluates only the final model on 8 problems of each suite. Every evaluation is a resumable ``eval run``
directory under OUT. Used for the student preset's pilots (docs/fidelity.md, "The student preset").
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

from rich.console import Console

from shoparena.env.knowledge import knowledge_path_for, place_pages
from shoparena.eval.policy_eval import evaluate_policy
from shoparena.pipeline.config import load_pipeline_config
from shoparena.pipeline.layout import PipelineRun
from shoparena.pipeline.outputs import (
    CorpusOutput,
    FirehoseOutput,
    IndexOutput,
    ModelOutput,
    PartitionsOutput,
    TrainOutput,
)

INTENTS = ("Product", "Shop", "Voucher", "Web")


def raced_ids(firehose: FirehoseOutput) -> set[str]:
    """Every problem any firehose race drew (its ``race_suite.json``)."""
    ids: set[str] = set()
    for race in firehose.race_dirs:
        ids |= {p["problem_id"] for p in json.loads((Path(race) / "race_suite.json").read_text())}
    return ids


def eval_split(corpus: CorpusOutput) -> list[dict]:
    """The corpus's ``eval`` split problems, as an ORO suite (full rewards, for the scorer)."""
    problems = json.loads((Path(corpus.path) / "problems.json").read_text())
    return [p for p in problems if p.get("split") == "eval"]


def never_raced_pool(partitions: PartitionsOutput, raced: set[str], per_intent: int, seed: int) -> list[dict]:
    """``per_intent`` problems of each intent from the train pool that no race drew (seeded, sorted by id)."""
    pool = json.loads(Path(partitions.pools["train"].path).read_text())
    rng = random.Random(seed)
    chosen: list[dict] = []
    for intent in INTENTS:
        free = sorted(
            (p for p in pool if p["category"] == intent and p["problem_id"] not in raced),
            key=lambda p: p["problem_id"],
        )
        chosen += rng.sample(free, min(per_intent, len(free)))
    return chosen


def checkpoints(train: TrainOutput, count: int, snapshots: Path | None = None) -> list[Path]:
    """``count`` checkpoints spread over the SFT run, the final model last. The presets keep only the last
    two checkpoints, so a curve reads ``snapshots`` (copies taken while it trained) when given."""
    where = snapshots or Path(train.path) / "checkpoints"
    saved = sorted(where.glob("checkpoint-*"), key=lambda p: int(p.name.split("-")[1]))
    if count <= 1 or not saved:
        return [Path(train.final)]
    number = {p: int(p.name.split("-")[1]) for p in saved}
    last = max(number.values())  # about the run's last step: targets at 1/count, 2/count, ... of it
    picks = [min(saved, key=lambda p: abs(number[p] - last * k / count)) for k in range(1, count)]
    return [*dict.fromkeys(picks), Path(train.final)]


def _logs(train: TrainOutput) -> list[dict]:
    path = Path(train.path) / "logs.jsonl"
    return (
        [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []
    )


def _step(train: TrainOutput, folder: Path) -> int | None:
    """The optimizer step of a checkpoint (its trainer_state), or the run's last step for ``final``."""
    state = folder / "trainer_state.json"
    if state.exists():
        return int(json.loads(state.read_text())["global_step"])
    steps = [e["step"] for e in _logs(train) if "step" in e]
    return max(steps) if steps else None


def sft_seconds(train: TrainOutput, folder: Path) -> float | None:
    """Seconds of SFT up to ``folder``: the run's ``train_runtime`` times its share of the steps."""
    logs = _logs(train)
    runtime = next((e["train_runtime"] for e in logs if "train_runtime" in e), None)
    total = max((e["step"] for e in logs if "step" in e), default=None)
    step = _step(train, folder)
    return round(runtime * step / total, 1) if runtime and step and total else None


def tokens_seen(train: TrainOutput, folder: Path) -> int | None:
    """Training tokens up to ``folder`` (the last logged ``num_tokens`` at or before its step)."""
    step = _step(train, folder)
    seen = [e["num_tokens"] for e in _logs(train) if "num_tokens" in e and step and e["step"] <= step]
    return int(seen[-1]) if seen else None


def score(eval_dir: Path) -> dict:
    """Success by intent and basket size of an eval run (strict, greedy), with the shortcut floor replayed on
    the same problems (``shoparena.eval.baskets``)."""
    from shoparena.eval.baskets import eval_run_table

    table = eval_run_table({"student": eval_dir})
    student, shortcut = table.rows
    return {
        group: {
            "n": student.groups[group].n,
            "student": student.groups[group].solved,
            "shortcut": shortcut.groups[group].solved,
            "ci": (student.groups[group].ci_low, student.groups[group].ci_high),
        }
        for group in table.groups
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--out", type=Path, default=None, help="Default: RUN_DIR/curve.")
    parser.add_argument("--pool", type=int, default=80, help="Never-raced train-pool problems (all intents).")
    parser.add_argument("--checkpoints", type=int, default=3)
    parser.add_argument("--snapshots", type=Path, default=None, help="Copies of the SFT checkpoints.")
    parser.add_argument(
        "--split-per-intent",
        type=int,
        default=None,
        help="At most N eval-split problems per intent (seeded).",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=2, help="Torch threads of each evaluation.")
    parser.add_argument("--no-decisions", action="store_true", help="Skip the teacher-forced columns.")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    console = Console()
    run = PipelineRun.open(args.run_dir)
    out = args.out or args.run_dir / "curve"
    out.mkdir(parents=True, exist_ok=True)
    pipeline = load_pipeline_config(args.run_dir / "config.yaml")
    section = pipeline.eval
    options = {**section.options.model_dump(), "threads": args.threads}
    section = section.model_validate({**section.model_dump(), "options": options})

    def output(model_type):
        recorded = run.stage_outputs(model_type.stage)
        if recorded is None:
            return None
        return model_type.model_validate(json.loads(json.dumps(run.resolve(recorded), default=str)))

    corpus, index = output(CorpusOutput), output(IndexOutput)
    partitions, firehose = output(PartitionsOutput), output(FirehoseOutput)
    train, model = output(TrainOutput), output(ModelOutput)
    if None in (corpus, index, partitions, firehose, train, model):
        raise SystemExit(
            f"{args.run_dir}: run `pipeline run --until sft` first (a stage's output is missing)"
        )
    split = eval_split(corpus)
    if args.split_per_intent is not None:
        rng = random.Random(args.seed)
        split = [
            p
            for intent in INTENTS
            for p in sorted(
                rng.sample(
                    [q for q in split if q["category"] == intent],
                    min(args.split_per_intent, sum(q["category"] == intent for q in split)),
                ),
                key=lambda q: q["problem_id"],
            )
        ]
    suites = {
        "eval-split": split,
        "pool": never_raced_pool(partitions, raced_ids(firehose), args.pool // len(INTENTS), args.seed),
    }
    if args.quick:
        suites = {name: problems[:: max(1, len(problems) // 8)][:8] for name, problems in suites.items()}
    model_seconds = run.manifest.stages["model"].seconds
    rows = []
    folders = [Path(train.final)] if args.quick else checkpoints(train, args.checkpoints, args.snapshots)
    for folder in folders:
        row = {
            "checkpoint": folder.name,
            "sft_seconds": sft_seconds(train, folder),
            "model_seconds": model_seconds,
            "tokens": tokens_seen(train, folder),
            "suites": {},
        }
        for name, problems in suites.items():
            suite_file = out / f"{name}.json"
            suite_file.write_text(json.dumps(problems, indent=1))
            # The web problems' pages go with the suite, as the pipeline's partitions carry them.
            place_pages(knowledge_path_for(partitions.pools["train"].path), suite_file)
            eval_dir = out / f"{folder.name}-{name}"
            evaluate_policy(
                section,
                model=str(folder),
                suite=suite_file,
                index=index.path,
                out=eval_dir,
                console=console,
                render_profile=pipeline.corpus.render_profile,  # a checkpoint carries no render stamp
            )
            row["suites"][name] = score(eval_dir)
            table = row["suites"][name]
            console.print(
                f"{folder.name} {name}: "
                + ", ".join(
                    f"{k} {v['student']}/{v['n']} (shortcut {v['shortcut']})" for k, v in table.items()
                )
            )
        rows.append(row)
        (out / "curve.json").write_text(json.dumps(rows, indent=1))
    if not args.no_decisions and not args.quick:
        from shoparena.train.teacher_forcing import basket_decisions, summarize_decisions

        decisions = summarize_decisions(basket_decisions(train.final, corpus.path))
        rows[-1]["teacher_forced"] = decisions
        console.print(f"teacher-forced basket decisions (eval split): {decisions}")
    (out / "curve.json").write_text(json.dumps(rows, indent=1))
    console.print(f"[green]{out / 'curve.json'}")


if __name__ == "__main__":
    main()
