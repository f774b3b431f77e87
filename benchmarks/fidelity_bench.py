"""The paper's effects on our substrate: one fixed held-out suite, one student, every arm with 95 % intervals.

Usage::

    .venv/bin/python benchmarks/fidelity_bench.py --quick   # a 64-wide student-word, small suite: plumbing
    .venv/bin/python benchmarks/fidelity_bench.py           # make run's student-word, 220 held-out problems

Everything runs through the pipeline's library functions (``shoparena.pipeline``): the shared stages
(catalog → index → bank → partitions → reference → firehose → judge → corpus → model) once, then per arm
``train_policy`` and ``evaluate_policy`` on the same held-out partition, and ``shoparena.eval.compare`` for
paired differences. Arms:

- ``base``: the untrained student;
- ``sft-filtered`` / ``sft-unfiltered`` / ``sft-recovered``: SFT on ``kept`` / ``unfiltered`` /
  ``kept+recovered`` rows at an equal budget: the same optimiser steps of the same batch size and
  ``max_length`` (so the same number of training sequences, each pool sampled by its own epochs);
- ``grpo``: per-step teacher-grounded Dr. GRPO on the ``steps`` view, starting from ``sft-filtered``;
- ``kto``: KTO on the ``kto`` view, starting from ``sft-filtered`` (the released checkpoint's recipe);
- ``sft-filtered@leaked``: the SFT student on the corpus's own TRAIN problems (``allow_leak``), beside the
  guarded held-out number.

The held-out suite is never used for any choice: every knob is fixed in this file before a run. Results go
to ``OUT/fidelity.json`` (rewritten after every arm, so a stopped run keeps what finished; ``--report-only``
renders it) and replace the section between the ``fidelity_bench`` markers of docs/fidelity.md.

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
from shoparena.pipeline import PipelineConfig, run_pipeline
from shoparena.pipeline.outputs import EvalOutput
from shoparena.pipeline.stages import base_model_path, evaluate_policy, pipeline_stages, train_policy

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "fidelity.md"
SHARED = ("catalog", "index", "bank", "partitions", "reference", "firehose", "judge", "corpus", "model")

QUICK: dict[str, Any] = {
    "name": "fidelity-quick",
    "catalog": {"products": 3000},
    "bank": {
        "problems": 200,
        "public_size": 30,
        "public_versions": 2,
        "reserve": 20,
        "heldout": 40,
        "hidden": 10,
    },
    "firehose": {"races": 2, "problems_per_race": 8},
    "model": {"base": "student-word", "hidden": 64, "pretrain_steps": 10},
    "sft": {"preset": "student-word", "trainer": {"max_steps": 6}},
    "eval": {
        "samples": 1,
        "temperature": 0.0,
        "max_tokens": 96,
        "max_steps": 4,
        "limit": 16,
        "options": {"threads": 1, "concurrency": 8, "max_batch": 16},
    },
}
FULL: dict[str, Any] = {
    # Fixed on 2026-12-02 before any held-out number of this design was seen (issue 24, item 5): the
    # embedded default's student (student-word, compact profile, request-item handles) on a 220-problem
    # held-out partition, with a firehose of the default population over 4 x 150 public problems.
    "name": "fidelity",
    "catalog": {"products": 20000},
    "bank": {
        "problems": 1600,
        "public_size": 150,
        "public_versions": 4,
        "reserve": 60,
        "heldout": 220,
        "hidden": 20,
    },
    "firehose": {"races": 4, "problems_per_race": 150},
    "model": {"base": "student-word", "layers": 2, "hidden": 128, "pretrain_steps": 400},
    # Equal budget for every SFT arm: 100 optimiser steps of 8 rows (about 3 epochs of the kept rows).
    "sft": {"preset": "student-word", "trainer": {"max_steps": 100}},
    # Greedy, at most 6 turns of 200 tokens (the make run settings).
    "eval": {
        "samples": 1,
        "temperature": 0.0,
        "max_tokens": 200,
        "max_steps": 6,
        "options": {"threads": 1, "concurrency": 16, "max_batch": 16},
    },
}
#: pass@k: ``samples`` sampled episodes on the first ``limit`` held-out problems (the greedy runs above cover
#: the whole suite; n = 8 on all 220 problems would cost more than the rest of the run together).
PASS_AT_K: dict[str, dict[str, Any]] = {
    "quick": {"samples": 2, "temperature": 0.7, "limit": 8},
    "full": {"samples": 8, "temperature": 0.7, "limit": 48},
}
#: Arms that also get the pass@k evaluation (the RL question: pass@1 vs pass@n before and after GRPO).
SAMPLED_ARMS = ("sft-filtered", "grpo")
#: Trainer settings of the follow-on methods per mode (fixed here, never chosen on held-out numbers).
FOLLOW_ON_TRAINER: dict[str, dict[str, dict[str, Any]]] = {
    "quick": {"grpo": {}, "kto": {}},
    "full": {
        "grpo": {"max_steps": 24, "learning_rate": 5.0e-5, "max_completion_length": 128},
        "kto": {"max_steps": 24},
    },
}
#: Paired comparisons (a, b): b − a, problem by problem (``shoparena.eval.compare``), on the greedy runs.
PAIRS = [
    ("base", "sft-filtered"),
    ("sft-unfiltered", "sft-filtered"),
    ("sft-filtered", "sft-recovered"),
    ("sft-filtered", "grpo"),
    ("sft-filtered", "kto"),
]
#: Follow-on methods from the filtered SFT student: (method, row selection). KTO needs its undesirable rows.
FOLLOW_ON = {"grpo": ("grpo", "kept"), "kto": ("kto", "unfiltered")}
ARM_ORDER = ("base", "sft-filtered", "sft-unfiltered", "sft-recovered", "grpo", "kto", "sft-filtered@leaked")


def _leaked_suite(corpus: Path, out: Path, size: int) -> Path:
    """The corpus's TRAIN problems (at most ``size``, as many as the held-out suite) as a suite file: what a
    leaky evaluation would measure."""
    problems = json.loads((corpus / "problems.json").read_text(encoding="utf-8"))
    train = [
        {k: v for k, v in p.items() if k not in {"split", "cluster_id"}}
        for p in problems
        if p.get("split") == "train"
    ]
    out.write_text(json.dumps(train[:size], indent=1), encoding="utf-8")
    return out


def _rows_per_selection(corpus: Path) -> dict[str, int]:
    """Rows of the ``sft`` train view under each training selection."""
    counts = {"kept": 0, "kept+recovered": 0, "unfiltered": 0}
    with (corpus / "views" / "sft-train.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            counts["unfiltered"] += 1
            if row.get("outcome") == "kept":
                counts["kept+recovered"] += 1
                counts["kept"] += row.get("origin") == "agentic"
    return counts


def _estimate(overall: dict[str, Any], key: str) -> dict[str, float] | None:
    if key.startswith("pass@") and key != "pass@1":
        return overall.get("pass@k", {}).get(key[5:])
    return overall.get(key)


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def run(
    quick: bool, out: Path, console: Console, threads: int, limit: int | None = None, workers: int = 2
) -> dict[str, Any]:
    from shoparena.eval.compare import compare_runs

    cfg = PipelineConfig.model_validate(QUICK if quick else FULL)
    if limit is not None:  # a plumbing check of the whole benchmark, not a result
        cfg.eval.limit = limit
    started = time.time()
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
        "config": cfg.model_dump(mode="json"),
        "arms": {},
        "seconds_per_arm": {},
        "comparisons": {},
    }

    def save() -> None:
        result["seconds"] = round(time.time() - started, 1)
        result["load_now"] = _load()
        (out / "fidelity.json").write_text(json.dumps(result, indent=1), encoding="utf-8")

    shared = [s for s in pipeline_stages() if s.name in SHARED]
    summary = run_pipeline(cfg, out / "shared", stages=shared, console=console, strict=True, report=False)
    outputs = {name: r["outputs"] for name, r in summary["stages"].items()}
    corpus = Path(outputs["corpus"]["path"])
    result["base_model"] = outputs["model"]["path"]
    heldout = outputs["partitions"]["pools"]["heldout"]["path"]
    index = outputs["index"]["path"]
    rows = _rows_per_selection(corpus)
    console.print(f"sft rows per selection {rows}; equal budget: {cfg.sft.trainer.get('max_steps')} steps")
    result.update(
        heldout={"path": heldout, "problems": outputs["partitions"]["pools"]["heldout"]["problems"]},
        corpus_path=str(corpus),
        corpus_funnel=outputs["corpus"].get("funnel"),
        rows_per_selection=rows,
        seconds_shared={name: r.get("seconds") for name, r in summary["stages"].items()},
    )
    save()

    mode = "quick" if quick else "full"
    result["pass_at_k"] = {**PASS_AT_K[mode], "arms": list(SAMPLED_ARMS)}
    common = {
        "config": cfg.model_dump(mode="json"),
        "passk": PASS_AT_K[mode],
        "out": str(out),
        "corpus": str(corpus),
        "index": str(index),
        "heldout": str(heldout),
        "threads": threads,
        "base_model": result["base_model"],
    }
    arms: dict[str, dict[str, Any]] = {}

    def compare(key: str, a: str, b: str) -> None:
        if key not in result["comparisons"]:
            comparison = compare_runs(a, b)
            result["comparisons"][key] = comparison.model_dump(mode="json")["profiles"]["strict"]

    def record(arm: dict[str, Any]) -> None:
        """Keep a finished arm and the paired comparisons it completes; save (a stopped run keeps them)."""
        name = arm["name"]
        arms[name] = arm
        entry = {k: arm[k] for k in ("label", "strict_overall", "sampled", "train") if arm.get(k) is not None}
        result["arms"][name] = entry
        result["seconds_per_arm"][name] = arm["seconds"]
        for x, y in PAIRS:
            if x in arms and y in arms:
                compare(f"{y} - {x}", arms[x]["path"], arms[y]["path"])
        first, second = SAMPLED_ARMS
        if first in arms and second in arms:
            compare(
                f"{second} - {first} (pass@k slice)",
                arms[first]["sampled_path"],
                arms[second]["sampled_path"],
            )
        result["arms"] = {k: result["arms"][k] for k in ARM_ORDER if k in result["arms"]}
        save()

    def job(name: str, **spec: Any) -> dict[str, Any]:
        return {**common, "name": name, **spec}

    sft_jobs = [
        job("sft-filtered", train={"method": "sft", "select": "kept"}),
        job("sft-unfiltered", train={"method": "sft", "select": "unfiltered"}),
        job("sft-recovered", train={"method": "sft", "select": "kept+recovered"}),
        job("base"),
    ]
    # Two arms at a time, one torch thread each: the 2 cores stay busy and no op waits on a second thread.
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
        pending = {pool.submit(run_arm, spec) for spec in sft_jobs}
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                arm = future.result()
                record(arm)
                console.print(f"arm {arm['name']} done in {arm['seconds']} s")
                if arm["name"] == "sft-filtered":  # the follow-on arms start from this student
                    final = arm["train"]["final"]
                    follow = [
                        job(name, train={"method": method, "select": select, "model": final})
                        for name, (method, select) in FOLLOW_ON.items()
                    ]
                    leaked = _leaked_suite(
                        corpus, out / "leaked_suite.json", size=result["heldout"]["problems"]
                    )
                    follow.append(job("sft-filtered@leaked", model=final, suite=str(leaked), leak=True))
                    pending |= {pool.submit(run_arm, spec) for spec in follow}

    result["complete"] = True
    save()
    teacher_forced(result, out, console)
    return result


#: Teacher-forced comparisons (a, b) on the corpus's eval rows (b − a, row by row).
TF_PAIRS = [("base", "sft-filtered"), ("sft-unfiltered", "sft-filtered"), ("sft-filtered", "sft-recovered")]


def _shared_output(out: Path, stage: str) -> str:
    """A shared stage's output path, from the shared run's summary (results written before it was kept)."""
    summary = json.loads((out / "shared" / "summary.json").read_text(encoding="utf-8"))
    return summary["stages"][stage]["outputs"]["path"]


def teacher_forced(result: dict[str, Any], out: Path, console: Console) -> None:
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
    for name, arm in result["arms"].items():
        if name.endswith("@leaked"):
            continue  # the same model as sft-filtered
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
    for a, b in TF_PAIRS:
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
    """One arm in a worker process: train (optional), evaluate greedy on the suite, and pass@k for the
    sampled arms. Every step is resumable in its own directory under ``spec['out']``."""
    import torch

    torch.set_num_threads(spec["threads"])
    since = time.time()
    cfg = PipelineConfig.model_validate(spec["config"])
    out, name = Path(spec["out"]), spec["name"]
    model = spec.get("model") or spec["base_model"]
    arm: dict[str, Any] = {"name": name}
    if spec.get("train"):
        t = spec["train"]
        sft = t["method"] == "sft"
        trained = train_policy(
            method=t["method"],
            preset=cfg.sft.preset,
            model=t.get("model") or spec["base_model"],
            corpus=spec["corpus"],
            select=t["select"],
            trainer=cfg.sft.trainer if sft else FOLLOW_ON_TRAINER[_mode(cfg)][name],
            out=out / "train" / name,
        )
        model = trained.final
        arm["train"] = trained.model_dump(mode="json", include={"final", "train_loss", "global_step", "rows"})

    def evaluate(run: str, section: Any, suite: str, leak: bool) -> EvalOutput:
        return evaluate_policy(
            section,
            model=model,
            suite=suite,
            index=spec["index"],
            out=out / "eval" / run,
            train_corpus=spec["corpus"],
            allow_leak=leak,
            render_profile=cfg.corpus.render_profile,
        )

    greedy = evaluate(
        name.replace("@", "-"), cfg.eval, spec.get("suite") or spec["heldout"], spec.get("leak", False)
    )
    arm.update(path=greedy.path, label=greedy.label, strict_overall=greedy.strict_overall)
    if name in SAMPLED_ARMS:
        section = cfg.eval.model_copy(update=spec["passk"])
        sampled = evaluate(f"{name}@pass{section.samples}", section, spec["heldout"], False)
        arm.update(sampled=sampled.strict_overall, sampled_path=sampled.path)
    arm["seconds"] = round(time.time() - since, 1)
    return arm


def _mode(cfg: PipelineConfig) -> str:
    return "quick" if cfg.name == QUICK["name"] else "full"


def _fmt(est: dict[str, float] | None) -> str:
    if not est:
        return "-"
    return f"{100 * est['value']:.1f} [{100 * est['ci_low']:.1f}, {100 * est['ci_high']:.1f}]"


def _greedy(overall: dict[str, Any]) -> dict[str, float] | None:
    return overall.get("greedy_asr") or overall.get("pass@1")


def markdown(result: dict[str, Any]) -> str:
    ev = result["config"]["eval"]
    pk = result.get("pass_at_k", {})
    n = pk.get("samples", 1)
    status = (
        "complete"
        if result.get("complete")
        else "INCOMPLETE: stopped, the arms below are those that finished"
    )
    lines = [
        f"Measured {result['date']} on {result['machine']} ({result['mode']}, {status};"
        f" {result.get('seconds')} s; nice {result.get('nice')}, torch threads {result.get('torch_threads')},"
        f" load average {result.get('load_start')} at start, {result.get('load_now')} at the end):",
        f"`{result['command']}`. Suite: the held-out partition, {result.get('heldout', {}).get('problems')}"
        f" problems (evaluated: {ev['limit'] or 'all'}); strict profile; 95 % intervals (Wilson for greedy"
        f" ASR, problem bootstrap otherwise). Decoding: greedy, max {ev['max_tokens']} new tokens per"
        f" turn, max {ev['max_steps']} steps; pass@k columns: {n} samples at T={pk.get('temperature')}"
        f" on the first {pk.get('limit')} held-out problems, for {', '.join(pk.get('arms', []))} only.",
        "",
        f"| arm | label | greedy ASR % | format score | mean steps | pass@1 % (slice) | pass@{n} % (slice) |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, arm in result["arms"].items():
        o, sampled = arm["strict_overall"], arm.get("sampled") or {}
        fmt = o.get("format_score") or {}
        lines.append(
            f"| {name} | {arm['label']} | {_fmt(_greedy(o))} | {fmt.get('value', 0):.3f}"
            f" | {o.get('mean_steps', 0):.1f} | {_fmt(sampled.get('pass@1'))}"
            f" | {_fmt(_estimate(sampled, f'pass@{n}') if sampled else None)} |"
        )
    lines += [
        "",
        "| paired difference (strict, b − a) | pass@1 diff % [95 % CI] | greedy ASR diff % [95 % CI]"
        " | McNemar (greedy) a-only/b-only, p | problems |",
        "|---|---|---|---|---|",
    ]
    for name, comp in result["comparisons"].items():
        d, g, m = comp["pass_at_1"], comp.get("greedy_asr"), comp.get("greedy")
        greedy = f"{100 * g['diff']:.1f} [{100 * g['ci_low']:.1f}, {100 * g['ci_high']:.1f}]" if g else "-"
        test = f"{m['a_only']}/{m['b_only']}, p={m['p_value']:.3g}" if m else "-"
        lines.append(
            f"| {name} | {100 * d['diff']:.1f} [{100 * d['ci_low']:.1f}, {100 * d['ci_high']:.1f}]"
            f" | {greedy} | {test} | {comp['problems']} |"
        )
    tf = result.get("teacher_forced")
    if tf:
        lines += [
            "",
            f"Teacher-forced, on the corpus's `{tf['split']}` split ({tf['select']} rows, never trained on;"
            " not the held-out suite): how well each model predicts the teacher's actions, over the"
            " trainable assistant tokens (rows truncated like SFT's). Paired differences: row bootstrap,"
            " 95 % intervals.",
            "",
            "| arm | rows | tokens | NLL nats/token | next-token accuracy |",
            "|---|---|---|---|---|",
        ]
        for name, arm in tf["arms"].items():
            lines.append(
                f"| {name} | {arm['rows']} | {arm['tokens']} | {arm['nll']:.3f} | {arm['accuracy']:.3f} |"
            )
        lines += ["", "| b − a | NLL diff [95 % CI] | accuracy diff [95 % CI] | rows |", "|---|---|---|---|"]
        for name, p in tf["pairs"].items():
            lo, hi = p["nll_ci"]
            alo, ahi = p["accuracy_ci"]
            lines.append(
                f"| {name} | {p['nll_diff']:.3f} [{lo:.3f}, {hi:.3f}]"
                f" | {p['accuracy_diff']:.3f} [{alo:.3f}, {ahi:.3f}] | {p['rows']} |"
            )
    trained = {k: v["train"] for k, v in result["arms"].items() if "train" in v}
    lines += [
        "",
        f"SFT rows per selection: {result.get('rows_per_selection')}; every SFT arm: the same optimiser steps"
        f" (trainer {result['config']['sft']['trainer']}). Corpus funnel: {result.get('corpus_funnel')}.",
        "Training (final loss / optimiser steps / rows used, dropped): "
        + "; ".join(
            f"{k} {v.get('train_loss'):.3g} / {v.get('global_step')} / {(v.get('rows') or {}).get('used')},"
            f" {(v.get('rows') or {}).get('dropped')}"
            for k, v in trained.items()
        )
        + ".",
        f"Seconds: shared stages {result.get('seconds_shared')}; per arm (training + evaluation)"
        f" {result.get('seconds_per_arm')}.",
    ]
    return "\n".join(lines)


def write_doc(text: str) -> None:
    write_section("fidelity_bench", text, doc=DOC)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
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
    out = args.out or ROOT / "runs" / ("fidelity-quick" if args.quick else "fidelity")
    out.mkdir(parents=True, exist_ok=True)
    if args.report_only or args.teacher_forced_only:
        result = json.loads((out / "fidelity.json").read_text(encoding="utf-8"))
        if args.teacher_forced_only:
            import torch

            torch.set_num_threads(args.threads)
            teacher_forced(result, out, Console())
    else:
        import torch

        torch.set_num_threads(args.threads)
        result = run(args.quick, out, Console(), args.threads, args.limit, args.workers)
    text = markdown(result)
    print(text)
    if not args.no_write:
        write_doc(text)


if __name__ == "__main__":
    main()
