"""KTO pilot: choose β and the learning rate so that KTO keeps what SFT gave (issue 33).

Usage::

    nice -n 10 .venv/bin/python benchmarks/kto_pilot.py --corpus CORPUS --student SFT_FINAL \
        --out runs/kto-pilot

For each (β, learning rate) of :data:`GRID`: KTO from the SFT student on the corpus's ``kto`` view
(train split, ``kept+failed``: kept = desirable, agentic failures = undesirable), class weights from the
balance (the train default, recorded), ``--steps`` steps; then the teacher-forced NLL and accuracy of the
result on the corpus's own ``eval`` split (kept rows, never trained on; never the held-out partition) next
to the SFT student's. Chosen: among the settings whose NLL stays within ``--tolerance`` nats/token of the
SFT student's (KTO that does not undo SFT), the lowest KTO training loss (the one that learnt most from the
preference), then the larger learning rate; reported with CPU time and load. Results: ``OUT/pilot.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import time
from pathlib import Path
from typing import Any

#: (β, learning rate): the setting the 2026-12-02 run used (TRL's β, the tiny preset's 1e-3), then smaller
#: steps at TRL's β and at a β that keeps the policy closer to the SFT reference.
GRID = ((0.1, 1.0e-3), (0.1, 1.0e-4), (0.5, 1.0e-4), (0.1, 1.0e-5), (0.5, 1.0e-5))


def _cpu_seconds() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return round(own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime, 1)


def score(model: str, corpus: str, rows: int) -> dict[str, Any]:
    from shoparena.train.teacher_forcing import row_losses, summarize

    s = summarize(row_losses(model, corpus, split="eval", select="kept", max_length=2048, limit=rows))
    return {k: v for k, v in s.items() if k != "per_row"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--student", required=True, help="The SFT student's final folder.")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--preset", default="student-word")
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--rows", type=int, default=24, help="Eval-split rows scored teacher-forced.")
    parser.add_argument("--tolerance", type=float, default=0.05, help="Allowed NLL rise, nats/token.")
    args = parser.parse_args()

    import torch

    from shoparena.train.policy import train_policy

    torch.set_num_threads(1)
    args.out.mkdir(parents=True, exist_ok=True)
    result: dict[str, Any] = {
        "corpus": args.corpus,
        "student": args.student,
        "steps": args.steps,
        "load_start": [round(x, 2) for x in os.getloadavg()],
        "nice": os.nice(0),
        "sft": score(args.student, args.corpus, args.rows),
        "grid": [],
    }
    started = time.time()
    for beta, lr in GRID:
        name = f"beta{beta}-lr{lr:g}"
        trained = train_policy(
            method="kto",
            preset=args.preset,
            model=args.student,
            corpus=args.corpus,
            select="kept+failed",
            trainer={"max_steps": args.steps, "beta": beta, "learning_rate": lr, "save_steps": 1000},
            out=args.out / name,
            threads=1,
        )
        summary = json.loads((args.out / name / "summary.json").read_text(encoding="utf-8"))
        entry = {
            "beta": beta,
            "learning_rate": lr,
            "train_loss": trained.train_loss,
            "weights": summary["data"]["derived"].get("kto"),
            **score(trained.final, args.corpus, args.rows),
        }
        result["grid"].append(entry)
        print(json.dumps(entry), flush=True)
        (args.out / "pilot.json").write_text(json.dumps(result, indent=1), encoding="utf-8")
    limit = result["sft"]["nll"] + args.tolerance
    keeping = [e for e in result["grid"] if e["nll"] <= limit]
    # Among the settings that keep SFT's predictions, the one that moved most on the preference (lowest KTO
    # loss; a saturated loss, every example at its weight, means the gradient vanished), then the larger step.
    best = min(keeping, key=lambda e: (e["train_loss"], -e["learning_rate"])) if keeping else None
    result.update(
        chosen=best and {"beta": best["beta"], "learning_rate": best["learning_rate"]},
        wall_s=round(time.time() - started, 1),
        cpu_s=_cpu_seconds(),
        load_end=[round(x, 2) for x in os.getloadavg()],
    )
    (args.out / "pilot.json").write_text(json.dumps(result, indent=1), encoding="utf-8")
    print(json.dumps({k: result[k] for k in ("sft", "chosen", "wall_s", "cpu_s", "load_start", "load_end")}))


if __name__ == "__main__":
    main()
