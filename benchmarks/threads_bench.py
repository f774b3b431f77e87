"""Torch intra-op threads under contention: copy-pretraining steps of the ``student-word`` shape (the model
stage of ``make run``) with 1 and 2 threads, on an idle machine and beside busy processes (one per core, a
stand-in for other jobs sharing the laptop).

Usage: ``python benchmarks/threads_bench.py [--quick] [--no-write]`` (quick: 6 steps per cell, else 20).
Each cell reports wall seconds per step and the process's CPU seconds per step; the ratio that matters is the
loaded wall time of 2 threads over 1 thread (OpenMP threads that wait at barriers for a descheduled sibling
spin, so a contended second thread costs more than it gives). Writes its section of docs/benchmarks.md
between ``<!-- threads_bench:start -->`` and ``<!-- threads_bench:end -->``.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import platform
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from doc_sections import write_section

TEXTS = [
    "Some jeans (traideru jogger) size waist:38, with mint green as the color, costing at least 311 PHP",
    "Wita Trendy Cute Unisex Shirt V7 Plus Size 12Pcs/Set",
    "Bekoia Traideru 8 Jogger Pants D14 Pro Drawstring Basic",
    "Find me a single store that sells everything below.",
    "Fiko Ph Gavechal Doll Shoes / L41 / Korean Comfy in dark blue, size eu:39",
] * 20


def _burn(stop: Any) -> None:
    while not stop.is_set():
        sum(i * i for i in range(10_000))


def _cell(base: Path, out: Path, steps: int, threads: int, busy: int) -> tuple[float, float]:
    from shoparena.train.pretrain import copy_pretrain

    stop = multiprocessing.Event()
    burners = [multiprocessing.Process(target=_burn, args=(stop,)) for _ in range(busy)]
    for b in burners:
        b.start()
    try:
        wall, cpu = time.perf_counter(), time.process_time()
        copy_pretrain(base, [TEXTS], out, steps=steps, threads=threads, batch_size=12, seq_len=400)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    finally:
        stop.set()
        for b in burners:
            b.join()
    return wall / steps, cpu / steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    from shoparena.models.word_student import build_word_student

    steps = 6 if args.quick else 20
    cores = len(os.sched_getaffinity(0))
    load = os.getloadavg()[0]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        base = build_word_student(Path(tmp) / "base", TEXTS, layers=2, hidden=128)
        for busy in (0, cores):
            for threads in (1, 2):
                wall, cpu = _cell(base, Path(tmp) / "out", steps, threads, busy)
                rows.append((busy, threads, wall, cpu))
                print(f"busy {busy} threads {threads}: {wall:.3f} s/step wall, {cpu:.3f} s/step CPU")
    table = ["| other busy processes | torch threads | wall s/step | CPU s/step |", "|---|---|---|---|"]
    table += [f"| {b} | {t} | {w:.3f} | {c:.3f} |" for b, t, w, c in rows]
    by = {(b, t): w for b, t, w, _ in rows}
    ratio_idle = by[(0, 2)] / by[(0, 1)]
    ratio_busy = by[(cores, 2)] / by[(cores, 1)]
    text = (
        f"`python benchmarks/threads_bench.py{' --quick' if args.quick else ''}`, "
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {platform.machine()} with {cores} cores, load average "
        f"{load:.1f} at the start; {steps} copy-pretraining steps of the 2 × 128 `student-word` per cell "
        "(batch 12 × 400 tokens).\n\n"
        + "\n".join(table)
        + f"\n\nWall time of 2 threads over 1: idle {ratio_idle:.2f}, beside {cores} busy processes "
        f"{ratio_busy:.2f}."
    )
    print(text)
    if not args.no_write:
        write_section("threads_bench", text, heading="## Torch threads under contention")


if __name__ == "__main__":
    main()
