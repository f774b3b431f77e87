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
to ``OUT/fidelity.json`` and replace the section between the ``fidelity_bench`` markers of docs/fidelity.md.
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
    "eval": {"samples": 2, "max_tokens": 96, "max_steps": 4, "limit": 16},
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
    "eval": {"samples": 8, "max_tokens": 256, "max_steps": 12},
}
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


def run(quick: bool, out: Path, console: Console) -> dict[str, Any]:
    from shoparena.eval.compare import compare_runs

    cfg = PipelineConfig.model_validate(QUICK if quick else FULL)
    started = time.time()
    shared = [s for s in pipeline_stages() if s.name in SHARED]
    summary = run_pipeline(cfg, out / "shared", stages=shared, console=console, strict=True, report=False)
    outputs = {name: r["outputs"] for name, r in summary["stages"].items()}
    corpus = Path(outputs["corpus"]["path"])
    heldout = outputs["partitions"]["pools"]["heldout"]["path"]
    index = outputs["index"]["path"]
    rows = _rows_per_selection(corpus)
    budget = max(1, min(rows.values()))
    console.print(f"sft rows per selection {rows}; equal budget {budget} rows")

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
    arms["base"] = evaluate("base", base_model_path(cfg.model.base, served=False))
    finals: dict[str, str] = {}
    for name, select in (
        ("sft-filtered", "kept"),
        ("sft-unfiltered", "unfiltered"),
        ("sft-recovered", "kept+recovered"),
    ):
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
        arms[name] = {**evaluate(name, trained["final"]), "train": trained}
    for name, (method, select) in FOLLOW_ON.items():
        trained = train_policy(
            method=method,
            preset=cfg.sft.preset,
            model=finals["sft-filtered"],
            corpus=corpus,
            select=select,
            trainer={},
            out=out / "train" / name,
        )
        arms[name] = {**evaluate(name, trained["final"]), "train": trained}
    leaked = _leaked_suite(corpus, out / "leaked_suite.json")
    arms["sft-filtered@leaked"] = evaluate(
        "sft-filtered-leaked", finals["sft-filtered"], suite=str(leaked), leak=True
    )

    pairs = [
        ("base", "sft-filtered"),
        ("sft-unfiltered", "sft-filtered"),
        ("sft-filtered", "sft-recovered"),
        ("sft-filtered", "grpo"),
        ("sft-filtered", "kto"),
    ]
    comparisons = {}
    for a, b in pairs:
        comparison = compare_runs(arms[a]["path"], arms[b]["path"])
        comparisons[f"{b} - {a}"] = comparison.model_dump(mode="json")["profiles"]["strict"]
    return {
        "mode": "quick" if quick else "full",
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, {platform.platform()}",
        "command": "python " + " ".join(sys.argv),
        "seconds": round(time.time() - started, 1),
        "config": cfg.model_dump(mode="json"),
        "heldout": {"path": heldout, "problems": outputs["partitions"]["pools"]["heldout"]["problems"]},
        "corpus_funnel": outputs["corpus"].get("funnel"),
        "rows_per_selection": rows,
        "budget_rows": budget,
        "arms": {
            name: {"label": arm["label"], "strict_overall": arm["strict_overall"]}
            for name, arm in arms.items()
        },
        "comparisons": comparisons,
    }


def _fmt(est: dict[str, float] | None) -> str:
    if not est:
        return "-"
    return f"{100 * est['value']:.1f} [{100 * est['ci_low']:.1f}, {100 * est['ci_high']:.1f}]"


def markdown(result: dict[str, Any]) -> str:
    n = result["config"]["eval"]["samples"]
    lines = [
        f"Measured {result['date']} on {result['machine']} ({result['mode']}, {result['seconds']} s):",
        f"`{result['command']}`. Held-out partition: {result['heldout']['problems']} problems"
        f" (eval limit {result['config']['eval']['limit']}); strict profile; decoding: greedy episode + {n}"
        f" samples at T={result['config']['eval']['temperature']}; 95 % intervals.",
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
    lines += ["", "| paired difference (strict pass@1, b − a) | diff % | 95 % CI |", "|---|---|---|"]
    for name, comp in result["comparisons"].items():
        d = comp["pass_at_1"]
        lines.append(
            f"| {name} | {100 * d['diff']:.1f} | [{100 * d['ci_low']:.1f}, {100 * d['ci_high']:.1f}] |"
        )
    lines += [
        "",
        f"SFT rows per selection: {result['rows_per_selection']}; each SFT arm trained on "
        f"{result['budget_rows']} rows (equal budget).",
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
    args = parser.parse_args()
    out = args.out or ROOT / "runs" / ("fidelity-quick" if args.quick else "fidelity")
    out.mkdir(parents=True, exist_ok=True)
    result = run(args.quick, out, Console())
    (out / "fidelity.json").write_text(json.dumps(result, indent=1), encoding="utf-8")
    text = markdown(result)
    print(text)
    if not args.no_write:
        write_doc(text)


if __name__ == "__main__":
    main()
