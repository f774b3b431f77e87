"""The paper's effects on our substrate: one fixed held-out suite, one student, every arm with 95 % intervals.

Usage::

    .venv/bin/python benchmarks/fidelity_bench.py --quick   # the design's quick overlay: plumbing, minutes
    .venv/bin/python benchmarks/fidelity_bench.py           # the design at full size (hours)

The design (arms, pairs, sizes) is ``benchmarks/configs/fidelity.yaml`` (``--config``; typed and checked by
``fidelity_design.py``). Everything runs through the pipeline's library functions (``shoparena.pipeline``):
the shared stages (catalog → index → bank → partitions → reference → firehose → judge → corpus → model)
once, the synthetic-data corpus when an arm reads it (``shoparena.pipeline.synthetic``: the reference
planner on the corpus's train problems, rejection-sampled by the strict scorer, rendered like the corpus),
then per arm ``train_policy`` and ``evaluate_policy`` on the same held-out partition, the arm against the
shortcut floor on the same problems (``shoparena.eval.compare.compare_to_shortcut``) and the design's paired
differences (``compare_runs``). Arms (the shipped design):

- ``base``: the untrained student;
- ``sft-filtered`` / ``sft-raw`` / ``sft-kept+failed`` / ``sft-recovered``: SFT on the ``kept`` / ``raw``
  (every assistant turn of every envelope) / ``kept+failed`` / ``kept+recovered`` rows at an equal budget: as
  many rows as ``kept`` has (a seeded uniform sample of the bigger selections), the same optimiser steps;
- ``sft-synthetic``: SFT on the synthetic corpus's kept rows, same budget;
- ``grpo`` / ``kto``: per-step Dr. GRPO on ``steps`` / KTO on ``kto`` (class weights from the balance),
  starting from ``sft-filtered``;
- ``leaked``: the SFT student on the corpus's own TRAIN problems (``allow_leak``), beside the held-out number.

The held-out suite is never used for any choice: every knob is fixed in the design file before a run.
Results go to ``OUT/fidelity.json`` (rewritten after every arm, so a stopped run keeps what finished;
re-running the command resumes every step; ``--report-only`` renders it) and replace the section between the
``fidelity_bench`` markers of docs/fidelity.md.

Threads: the process runs torch with ``--threads`` intra-op threads (1 by default) and every evaluation
with ``EvalConfig.threads`` = 1: on the shared 2-core machine two OpenMP threads per op made the tiny
model's episodes 10-23x slower (docs/fidelity.md, "Why --quick was slow").
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import multiprocessing
import os
import platform
import sys
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from pathlib import Path
from typing import Any

from rich.console import Console

from doc_sections import write_section
from fidelity_design import DEFAULT_DESIGN, FidelityDesign, load_design, markdown
from shoparena.corpus.views import SELECTIONS, is_selected
from shoparena.eval.policy_eval import EvaluatedPolicy, evaluate_policy
from shoparena.pipeline import PipelineConfig, pipeline_stages, run_pipeline
from shoparena.pipeline.synthetic import corpus_train_suite, synthetic_corpus
from shoparena.train.policy import base_model_path, train_policy

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "fidelity.md"
SHARED = ("catalog", "index", "bank", "partitions", "reference", "firehose", "judge", "corpus", "model")


def rows_per_selection(corpus: str | Path) -> dict[str, int]:
    """Rows of the ``sft`` train view under each training selection."""
    from shoparena.corpus.layout import CorpusRun
    from shoparena.jsonl import iter_jsonl

    counts = dict.fromkeys(SELECTIONS, 0)
    for _, row in iter_jsonl(CorpusRun.at(corpus).view_file("sft", "train", "jsonl")):
        for select in SELECTIONS:
            counts[select] += is_selected(row, select)
    return counts


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def run(
    design: FidelityDesign,
    quick: bool,
    out: Path,
    console: Console,
    threads: int,
    limit: int | None = None,
    workers: int = 2,
) -> dict[str, Any]:
    from shoparena.eval.compare import compare_runs

    cfg = PipelineConfig.model_validate(design.pipeline_config(quick))
    if limit is not None:  # a plumbing check of the whole benchmark, not a result
        cfg.eval.limit = limit
    started = time.time()
    sampled = design.sampled(quick)
    arms = design.arms_for(quick)
    result: dict[str, Any] = {
        "mode": "quick" if quick else "full",
        "complete": False,
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, {platform.platform()}",
        "command": "python " + " ".join(sys.argv),
        "nice": os.nice(0),
        "torch_threads": threads,
        "workers": workers,
        "load_start": _load(),
        "design": design.model_dump(mode="json", by_alias=True),
        "config": cfg.model_dump(mode="json"),
        "pass_at_k": sampled.model_dump(),
        "arms": {},
        "seconds_per_arm": {},
        "comparisons": {},
    }

    def save() -> None:
        result["seconds"] = round(time.time() - started, 1)
        result["load_now"] = _load()
        (out / "fidelity.json").write_text(json.dumps(result, indent=1), encoding="utf-8")

    shared = [s for s in pipeline_stages() if s.name in SHARED]
    summary = run_pipeline(cfg, out / "shared", stages=shared, console=console, strict=True)
    outputs = {name: r["outputs"] for name, r in summary["stages"].items()}
    corpus = Path(outputs["corpus"]["path"])
    heldout = outputs["partitions"]["pools"]["heldout"]
    rows = rows_per_selection(corpus)
    budget = rows[design.equal_rows] if design.equal_rows else None
    console.print(f"sft rows per selection {rows}; equal budget: {budget} rows, {cfg.sft.trainer} ")
    result.update(
        base_model=outputs["model"]["path"],
        heldout={"path": heldout["path"], "problems": heldout["problems"]},
        corpus_path=str(corpus),
        corpus_funnel=outputs["corpus"].get("funnel"),
        rows_per_selection=rows,
        equal_rows=budget,
        seconds_shared={name: r.get("seconds") for name, r in summary["stages"].items()},
    )
    corpora = {"firehose": str(corpus)}
    if any(arm.corpus == "synthetic" for arm in arms.values()):
        since = time.time()
        made = synthetic_corpus(
            suite=corpus_train_suite(corpus, out / "synthetic" / "train_problems.json"),
            index=outputs["index"]["path"],
            out=out / "synthetic",
            render_profile=cfg.corpus.render_profile,
            agent=design.synthetic.agent,
            max_steps=design.synthetic.max_steps,
        )
        corpora["synthetic"] = made["path"]
        result["synthetic"] = {**made, "rows": rows_per_selection(made["path"])}
        result["seconds_shared"]["synthetic"] = round(time.time() - since, 1)
    save()

    leaked = corpus_train_suite(corpus, out / "leaked_suite.json", limit=heldout["problems"])
    common = {
        "config": cfg.model_dump(mode="json"),
        "out": str(out),
        "index": outputs["index"]["path"],
        "heldout": heldout["path"],
        "leaked": str(leaked),
        "firehose_corpus": str(corpus),
        "threads": threads,
        "sample_seed": design.sample_seed,
        "passk": sampled.model_dump(),
    }
    finished: dict[str, dict[str, Any]] = {}

    def compare(key: str, a: str, b: str) -> None:
        if key not in result["comparisons"]:
            comparison = compare_runs(a, b)
            result["comparisons"][key] = comparison.model_dump(mode="json")["profiles"]["strict"]

    def record(arm: dict[str, Any]) -> None:
        """Keep a finished arm and the paired comparisons it completes; save (a stopped run keeps them)."""
        finished[arm["name"]] = arm
        keys = ("label", "strict_overall", "vs_shortcut", "sampled", "train")
        result["arms"][arm["name"]] = {k: arm[k] for k in keys if arm.get(k) is not None}
        result["seconds_per_arm"][arm["name"]] = arm["seconds"]
        for x, y in design.pairs:
            if x in finished and y in finished:
                compare(f"{y} - {x}", finished[x]["path"], finished[y]["path"])
        first, *rest = sampled.arms or [None]
        for other in rest:
            if first in finished and other in finished:
                compare(
                    f"{other} - {first} (pass@k slice)",
                    finished[first]["sampled_path"],
                    finished[other]["sampled_path"],
                )
        result["arms"] = {k: result["arms"][k] for k in arms if k in result["arms"]}
        save()

    def job(name: str) -> dict[str, Any]:
        arm = arms[name]
        model = finished[arm.start]["train"]["final"] if arm.start else result["base_model"]
        spec: dict[str, Any] = {**common, "name": name, "model": model, "sampled": name in sampled.arms}
        spec["suite"], spec["leak"] = (
            (str(leaked), True) if arm.suite == "leaked" else (heldout["path"], False)
        )
        if arm.method is not None:
            trainer = arm.trainer if arm.trainer is not None else cfg.sft.trainer
            spec["train"] = {
                "method": arm.method,
                "select": arm.select,
                "corpus": corpora[arm.corpus],
                "trainer": trainer,
                "max_rows": budget if arm.method == "sft" else None,
            }
        return spec

    # Two arms at a time, one torch thread each: the 2 cores stay busy and no op waits on a second thread;
    # an arm that starts from another's model is submitted when that one has finished.
    ctx = multiprocessing.get_context("spawn")
    waiting = list(arms)
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
        pending: set[Any] = set()

        def submit_ready() -> None:
            for name in [n for n in waiting if arms[n].start in (None, *finished)]:
                waiting.remove(name)
                pending.add(pool.submit(run_arm, job(name)))

        submit_ready()
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                arm = future.result()
                record(arm)
                console.print(f"arm {arm['name']} done in {arm['seconds']} s")
            submit_ready()

    result["complete"] = True
    save()
    teacher_forced(result, out, console, design)
    return result


def _shared_output(out: Path, stage: str) -> str:
    """A shared stage's output path, from the shared run's summary (results written before it was kept)."""
    summary = json.loads((out / "shared" / "summary.json").read_text(encoding="utf-8"))
    return summary["stages"][stage]["outputs"]["path"]


def teacher_forced(result: dict[str, Any], out: Path, console: Console, design: FidelityDesign) -> None:
    """How well each arm's model predicts the teacher's actions on the corpus's EVAL split (kept agentic
    rows, never trained on; not the held-out suite): token-weighted NLL and next-token accuracy over the
    trainable assistant tokens, and paired row-by-row differences. Each model's rows are cached in
    ``OUT/teacher_forced/ARM.json``, so a re-run only scores what is missing."""
    import numpy as np

    from shoparena.eval.compare import paired_bootstrap
    from shoparena.train.teacher_forcing import RowLoss, row_losses, summarize

    since = time.time()
    cfg = PipelineConfig.model_validate(result["config"])
    corpus = Path(result.get("corpus_path") or _shared_output(out, "corpus"))
    cache = out / "teacher_forced"
    cache.mkdir(exist_ok=True)
    rows: dict[str, list[RowLoss]] = {}
    # The firehose corpus's eval split, whatever corpus an arm trained on: the teacher the paper's student
    # should imitate.
    for name, arm in result["arms"].items():
        if design.arms[name].suite == "leaked":
            continue  # the model of the arm it starts from
        model = (
            (arm.get("train") or {}).get("final")
            or result.get("base_model")
            or base_model_path(cfg.model.base, served=False)
        )
        path = cache / f"{name}.json"
        if path.is_file():
            rows[name] = [RowLoss(**r) for r in json.loads(path.read_text(encoding="utf-8"))]
        else:
            console.print(f"teacher-forced loss of {name} on the corpus eval split")
            rows[name] = row_losses(model, corpus, split="eval", select="kept")
            path.write_text(json.dumps(summarize(rows[name])["per_row"]), encoding="utf-8")
    summary = {name: {k: v for k, v in summarize(r).items() if k != "per_row"} for name, r in rows.items()}
    pairs = {}
    for a, b in design.pairs:  # every pair of models (a leaked arm's model is another arm's)
        if a in rows and b in rows:
            assert [r.record_id for r in rows[a]] == [r.record_id for r in rows[b]]
            nll_a, nll_b = (np.array([r.nll for r in rows[x]]) for x in (a, b))
            acc_a, acc_b = (np.array([r.accuracy for r in rows[x]]) for x in (a, b))
            pairs[f"{b} - {a}"] = {
                "rows": len(nll_a),
                "nll_diff": float((nll_b - nll_a).mean()),
                "nll_ci": paired_bootstrap(nll_a, nll_b),
                "accuracy_diff": float((acc_b - acc_a).mean()),
                "accuracy_ci": paired_bootstrap(acc_a, acc_b),
            }
    result["teacher_forced"] = {
        "split": "eval",
        "select": "kept",
        "max_length": 4096,
        "arms": summary,
        "pairs": pairs,
        "seconds": round(time.time() - since, 1),
    }
    (out / "fidelity.json").write_text(json.dumps(result, indent=1), encoding="utf-8")


def run_arm(spec: dict[str, Any]) -> dict[str, Any]:
    """One arm in a worker process: train (optional), evaluate greedy on the suite, pair it with the shortcut
    floor on the same problems, and pass@k for the sampled arms. Every step is resumable in its own
    directory under ``spec['out']``."""
    import torch

    from shoparena.eval.compare import compare_to_shortcut

    torch.set_num_threads(spec["threads"])
    since = time.time()
    cfg = PipelineConfig.model_validate(spec["config"])
    out, name = Path(spec["out"]), spec["name"]
    model = spec["model"]
    arm: dict[str, Any] = {"name": name}
    if spec.get("train"):
        t = spec["train"]
        trained = train_policy(
            method=t["method"],
            preset=cfg.sft.preset,
            model=model,
            corpus=t["corpus"],
            select=t["select"],
            trainer=t["trainer"],
            out=out / "train" / name,
            max_rows=t["max_rows"],
            sample_seed=spec["sample_seed"] if t["max_rows"] else None,
        )
        model = trained.final
        arm["train"] = trained.model_dump(mode="json", include={"final", "train_loss", "global_step", "rows"})

    def evaluate(run: str, section: Any, suite: str, leak: bool) -> EvaluatedPolicy:
        return evaluate_policy(
            section,
            model=model,
            suite=suite,
            index=spec["index"],
            out=out / "eval" / run,
            train_corpus=spec["firehose_corpus"],
            allow_leak=leak,
            render_profile=cfg.corpus.render_profile,
        )

    greedy = evaluate(name.replace("@", "-"), cfg.eval, spec["suite"], spec["leak"])
    arm.update(path=greedy.path, label=greedy.label, strict_overall=greedy.strict_overall)
    floor = compare_to_shortcut(greedy.path).model_dump(mode="json")["profiles"]["strict"]
    arm["vs_shortcut"] = floor
    if spec["sampled"]:
        section = cfg.eval.model_copy(update={k: v for k, v in spec["passk"].items() if k != "arms"})
        sampled = evaluate(f"{name}@pass{section.samples}", section, spec["heldout"], False)
        arm.update(sampled=sampled.strict_overall, sampled_path=sampled.path)
    arm["seconds"] = round(time.time() - since, 1)
    return arm


def write_doc(text: str) -> None:
    write_section("fidelity_bench", text, doc=DOC)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="The design's quick overlay (plumbing).")
    parser.add_argument("--config", type=Path, default=DEFAULT_DESIGN, help="The design file.")
    parser.add_argument(
        "--out", type=Path, default=None, help="Work directory (default runs/fidelity[-quick])."
    )
    parser.add_argument("--no-write", action="store_true", help="Do not update docs/fidelity.md.")
    parser.add_argument("--threads", type=int, default=1, help="torch intra-op threads per arm (default 1).")
    parser.add_argument("--workers", type=int, default=2, help="Arms at once (processes).")
    parser.add_argument(
        "--limit", type=int, default=None, help="Plumbing check: evaluate only N problems (not a result)."
    )
    parser.add_argument(
        "--report-only", action="store_true", help="Render OUT/fidelity.json (e.g. of a stopped run)."
    )
    parser.add_argument(
        "--teacher-forced-only",
        action="store_true",
        help="Add the teacher-forced losses to a finished OUT/fidelity.json, then render it.",
    )
    args = parser.parse_args()
    try:
        design = load_design(args.config)
    except ValueError as exc:
        raise SystemExit(f"fidelity_bench: {exc}") from None
    out = args.out or ROOT / "runs" / ("fidelity-quick" if args.quick else "fidelity")
    out.mkdir(parents=True, exist_ok=True)
    if args.report_only or args.teacher_forced_only:
        result = json.loads((out / "fidelity.json").read_text(encoding="utf-8"))
        if args.teacher_forced_only:
            import torch

            torch.set_num_threads(args.threads)
            teacher_forced(result, out, Console(), design)
    else:
        import torch

        torch.set_num_threads(args.threads)
        result = run(design, args.quick, out, Console(), args.threads, args.limit, args.workers)
    text = markdown(result)
    print(text)
    if not args.no_write:
        write_doc(text)


if __name__ == "__main__":
    main()
