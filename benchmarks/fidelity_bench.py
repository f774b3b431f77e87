"""The paper's effects on our substrate: one fixed held-out suite, one student, every arm with 95 % intervals.

Usage::

    .venv/bin/python benchmarks/fidelity_bench.py --quick   # tiny student, small suite: the plumbing
    .venv/bin/python benchmarks/fidelity_bench.py           # student-cpu, >= 200 held-out problems

Everything runs through the pipeline's library functions (``shoparena.pipeline``): the shared stages
(catalog → index → bank → partitions → reference → firehose → judge → corpus) once, then per arm
``train_policy`` and ``evaluate_policy`` on the same held-out partition, and ``shoparena.eval.compare`` for
paired differences. Arms:

- ``base``: the untrained student;
- ``sft-filtered`` / ``sft-unfiltered`` / ``sft-recovered``: SFT on ``kept`` / ``unfiltered`` /
  ``kept+recovered`` rows at an equal budget (the same number of rows, the smallest selection's, and the same
  optimiser steps);
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
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

from rich.console import Console

from shoparena.pipeline import PipelineConfig, run_pipeline
from shoparena.pipeline.stages import base_model_path, evaluate_policy, pipeline_stages, train_policy

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "fidelity.md"
SHARED = ("catalog", "index", "bank", "partitions", "reference", "firehose", "judge", "corpus")

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
    "model": {"base": "tiny"},
    "sft": {"preset": "tiny", "trainer": {"max_steps": 6}},
    "eval": {"samples": 2, "max_tokens": 96, "max_steps": 4, "limit": 16, "options": {"threads": 1}},
}
FULL: dict[str, Any] = {
    "name": "fidelity",
    "catalog": {"products": 20000},
    "bank": {
        "problems": 900,
        "public_size": 60,
        "public_versions": 4,
        "reserve": 60,
        "heldout": 220,
        "hidden": 20,
    },
    "firehose": {"races": 12, "problems_per_race": 30},
    "model": {"base": "student-cpu"},
    "sft": {"preset": "student-cpu", "trainer": {}},
    "eval": {"samples": 8, "max_tokens": 256, "max_steps": 12, "options": {"threads": 1}},
}
#: Paired comparisons (a, b): b − a, problem by problem (``shoparena.eval.compare``).
PAIRS = [
    ("base", "sft-filtered"),
    ("sft-unfiltered", "sft-filtered"),
    ("sft-filtered", "sft-recovered"),
    ("sft-filtered", "grpo"),
    ("sft-filtered", "kto"),
]
#: Follow-on methods from the filtered SFT student: (method, row selection). KTO needs its undesirable rows.
FOLLOW_ON = {"grpo": ("grpo", "kept"), "kto": ("kto", "unfiltered")}


def _leaked_suite(corpus: Path, out: Path) -> Path:
    """The corpus's TRAIN problems as a suite file: what a leaky evaluation would measure."""
    problems = json.loads((corpus / "problems.json").read_text(encoding="utf-8"))
    train = [
        {k: v for k, v in p.items() if k not in {"split", "cluster_id"}}
        for p in problems
        if p.get("split") == "train"
    ]
    out.write_text(json.dumps(train, indent=1), encoding="utf-8")
    return out


def _rows_per_selection(corpus: Path) -> dict[str, int]:
    """Rows of the ``sft`` train view under each training selection (equal-budget arms use the minimum)."""
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


def run(quick: bool, out: Path, console: Console, threads: int, limit: int | None = None) -> dict[str, Any]:
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
    heldout = outputs["partitions"]["pools"]["heldout"]["path"]
    index = outputs["index"]["path"]
    rows = _rows_per_selection(corpus)
    budget = max(1, min(rows.values()))
    console.print(f"sft rows per selection {rows}; equal budget {budget} rows")
    result.update(
        heldout={"path": heldout, "problems": outputs["partitions"]["pools"]["heldout"]["problems"]},
        corpus_funnel=outputs["corpus"].get("funnel"),
        rows_per_selection=rows,
        budget_rows=budget,
        seconds_shared={name: r.get("seconds") for name, r in summary["stages"].items()},
    )
    save()

    def evaluate(name: str, model: str, *, suite: str = heldout, leak: bool = False) -> dict[str, Any]:
        return evaluate_policy(
            cfg.eval,
            model=model,
            suite=suite,
            index=index,
            out=out / "eval" / name,
            train_corpus=corpus,
            allow_leak=leak,
            console=console,
        )

    arms: dict[str, dict[str, Any]] = {}

    def record(name: str, arm: dict[str, Any], since: float) -> None:
        """Keep a finished arm, the paired comparisons it completes, and save (a stopped run keeps them)."""
        arms[name] = arm
        result["arms"][name] = {"label": arm["label"], "strict_overall": arm["strict_overall"]}
        result["seconds_per_arm"][name] = round(time.time() - since, 1)
        for a, b in PAIRS:
            key = f"{b} - {a}"
            if a in arms and b in arms and key not in result["comparisons"]:
                comparison = compare_runs(arms[a]["path"], arms[b]["path"])
                result["comparisons"][key] = comparison.model_dump(mode="json")["profiles"]["strict"]
        save()

    since = time.time()
    record("base", evaluate("base", base_model_path(cfg.model.base, served=False)), since)
    finals: dict[str, str] = {}
    for name, select in (
        ("sft-filtered", "kept"),
        ("sft-unfiltered", "unfiltered"),
        ("sft-recovered", "kept+recovered"),
    ):
        since = time.time()
        trained = train_policy(
            method="sft",
            preset=cfg.sft.preset,
            model=cfg.model.base,
            corpus=corpus,
            select=select,
            trainer=cfg.sft.trainer,
            out=out / "train" / name,
            max_rows=budget,
        )
        finals[name] = trained["final"]
        record(name, {**evaluate(name, trained["final"]), "train": trained}, since)
    for name, (method, select) in FOLLOW_ON.items():
        since = time.time()
        trained = train_policy(
            method=method,
            preset=cfg.sft.preset,
            model=finals["sft-filtered"],
            corpus=corpus,
            select=select,
            trainer={},
            out=out / "train" / name,
        )
        record(name, {**evaluate(name, trained["final"]), "train": trained}, since)
    since = time.time()
    leaked = _leaked_suite(corpus, out / "leaked_suite.json")
    record(
        "sft-filtered@leaked",
        evaluate("sft-filtered-leaked", finals["sft-filtered"], suite=str(leaked), leak=True),
        since,
    )

    result["complete"] = True
    save()
    return result


def _fmt(est: dict[str, float] | None) -> str:
    if not est:
        return "-"
    return f"{100 * est['value']:.1f} [{100 * est['ci_low']:.1f}, {100 * est['ci_high']:.1f}]"


def markdown(result: dict[str, Any]) -> str:
    n = result["config"]["eval"]["samples"]
    ev = result["config"]["eval"]
    status = (
        "complete"
        if result.get("complete")
        else "INCOMPLETE: stopped, the arms below are those that finished"
    )
    lines = [
        f"Measured {result['date']} on {result['machine']} ({result['mode']}, {status};"
        f" {result.get('seconds')} s; nice {result.get('nice')}, torch threads {result.get('torch_threads')},"
        f" load average {result.get('load_start')} at start, {result.get('load_now')} at the end):",
        f"`{result['command']}`. Held-out partition: {result.get('heldout', {}).get('problems')} problems"
        f" (eval limit {ev['limit']}); strict profile; decoding: greedy episode + {n}"
        f" samples at T={ev['temperature']}, max {ev['max_tokens']} new tokens per turn,"
        f" max {ev['max_steps']} steps; 95 % intervals.",
        "",
        f"| arm | label | greedy ASR % | pass@1 % | pass@{n} % |",
        "|---|---|---|---|---|",
    ]
    for name, arm in result["arms"].items():
        o = arm["strict_overall"]
        lines.append(
            f"| {name} | {arm['label']} | {_fmt(o.get('greedy_asr'))} | {_fmt(o.get('pass@1'))}"
            f" | {_fmt(_estimate(o, f'pass@{n}'))} |"
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
    lines += [
        "",
        f"SFT rows per selection: {result.get('rows_per_selection')}; each SFT arm trained on "
        f"{result.get('budget_rows')} rows (equal budget). Corpus funnel: {result.get('corpus_funnel')}.",
        f"Seconds: shared stages {result.get('seconds_shared')}; per arm (training + evaluation)"
        f" {result.get('seconds_per_arm')}.",
    ]
    return "\n".join(lines)


def write_doc(text: str) -> None:
    begin, end = "<!-- fidelity_bench:begin -->", "<!-- fidelity_bench:end -->"
    doc = DOC.read_text(encoding="utf-8")
    head, _, rest = doc.partition(begin)
    _, _, tail = rest.partition(end)
    DOC.write_text(f"{head}{begin}\n{text}\n{end}{tail}", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument(
        "--out", type=Path, default=None, help="Work directory (default runs/fidelity[-quick])."
    )
    parser.add_argument("--no-write", action="store_true", help="Do not update docs/fidelity.md.")
    parser.add_argument("--threads", type=int, default=1, help="torch intra-op threads (default 1).")
    parser.add_argument(
        "--limit", type=int, default=None, help="Plumbing check: evaluate only N problems (not a result)."
    )
    parser.add_argument(
        "--report-only", action="store_true", help="Render OUT/fidelity.json (e.g. of a stopped run)."
    )
    args = parser.parse_args()
    out = args.out or ROOT / "runs" / ("fidelity-quick" if args.quick else "fidelity")
    out.mkdir(parents=True, exist_ok=True)
    if args.report_only:
        result = json.loads((out / "fidelity.json").read_text(encoding="utf-8"))
    else:
        import torch

        torch.set_num_threads(args.threads)
        result = run(args.quick, out, Console(), args.threads, args.limit)
    text = markdown(result)
    print(text)
    if not args.no_write:
        write_doc(text)


if __name__ == "__main__":
    main()
