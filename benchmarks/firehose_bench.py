"""Firehose throughput against bare planner episodes on the same problems, measured side by side.

Usage::

    nice -n 19 python benchmarks/firehose_bench.py --quick     # 5k products, 1 race x 4 problems x 9 miners
    nice -n 19 python benchmarks/firehose_bench.py --problems 10 --races 2

Both sides run the same problems on the same index; without flags the firehose picks its sandboxes and
parallel races as ``arena firehose`` does (from the machine), and the bare side gets the episode
executor's default processes (``bare_workers``, one per usable CPU). The bare side is
``run_episode_tasks`` (the planner in a process pool, one envelope per problem), the firehose side is
``run_firehose`` with the default 9-miner population (each miner in its sandbox behind the proxy, then
judging, ranking and weights). Prints each side's wall and CPU time (this process and its children, from
``getrusage``), trajectories per second, and the firehose's cost per trajectory as a multiple of a bare
planner episode's, and extrapolates the firehose's rate to the paper's 18,043 trajectories. To see where
a race spends its time, run it under a sampling profiler, e.g. ``py-spy record --subprocesses -f raw -o
race.txt -- python benchmarks/firehose_bench.py --quick --only firehose``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from shoparena.arena.executor import EpisodeTask, ProcessExecutor, get_executor, run_episode_tasks
from shoparena.arena.firehose import FirehoseConfig, machine_defaults, run_firehose
from shoparena.catalog.synth import SynthConfig, synthesize_catalog
from shoparena.search import build_index
from shoparena.suites.loaders import load_suite
from shoparena.suites.synth import SynthOptions, synthesize_bank

PAPER_TRAJECTORIES = 18_043


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _machine_cpu() -> float | None:
    """Busy CPU seconds of the whole machine so far (``/proc/stat``: every state but idle and iowait)."""
    try:
        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    except OSError:
        return None
    ticks = [int(v) for v in fields]
    busy = sum(ticks) - ticks[3] - (ticks[4] if len(ticks) > 4 else 0)
    return busy / os.sysconf("SC_CLK_TCK")


def _measure(fn: Callable[[], Any]) -> dict[str, float]:
    """Wall, the process tree's CPU (rusage of this process and its reaped children) and the machine's busy
    CPU. Why both: the sandboxes' CPU does not reach this process's rusage (a perf profile by command shows
    them at ~45 % of a firehose's samples while ``cpu_s`` stays at the race processes' share), so on a quiet
    machine ``machine_cpu_s`` is the firehose's whole cost; under other load it includes the neighbours'."""
    cpu0, wall0, machine0 = _cpu(), time.perf_counter(), _machine_cpu()
    fn()
    out = {"wall_s": round(time.perf_counter() - wall0, 2), "cpu_s": round(_cpu() - cpu0, 2)}
    machine1 = _machine_cpu()
    if machine0 is not None and machine1 is not None:
        out["machine_cpu_s"] = round(machine1 - machine0, 2)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="5k products, 1 race of 4 problems")
    ap.add_argument("--products", type=int, default=20_000)
    ap.add_argument("--problems", type=int, default=10, help="problems per race")
    ap.add_argument("--races", type=int, default=1)
    ap.add_argument(
        "--workers", type=int, default=None, help="sandboxes at once in a race (default: the command's)"
    )
    ap.add_argument(
        "--parallel-races", type=int, default=None, help="races at once, each in its own process (default: "
        "the command's, from the machine)"
    )
    ap.add_argument("--bank", type=int, default=None, help="problems in the bank (default problems x races)")
    ap.add_argument("--keep", type=Path, default=None, help="run in this directory and keep it (resumes)")
    ap.add_argument("--only", choices=("bare", "firehose"), help="run one side (e.g. under a profiler)")
    args = ap.parse_args(argv)
    if args.quick:
        args.products, args.problems, args.races = 5000, 4, 1
    result: dict[str, Any] = {"products": args.products, "load_before": os.getloadavg()}
    with tempfile.TemporaryDirectory() as tmp:
        root = args.keep or Path(tmp)
        root.mkdir(parents=True, exist_ok=True)
        if not (root / "bank.json").exists():
            catalog = SynthConfig(products=args.products, seed=1)
            synthesize_catalog(catalog, root / "cat.jsonl", progress=False)
            build_index(root / "cat.jsonl", root / "index", progress=False)
            n_problems = args.bank or args.problems * args.races
            synthesize_bank(root / "index", root / "bank.json", SynthOptions(n=n_problems, seed=1))
        config = FirehoseConfig(
            suites=[root / "bank.json"],
            index=root / "index",
            out=root / "firehose",
            races=args.races,
            problems_per_race=args.problems,
            workers=args.workers,
            parallel_races=args.parallel_races,
        )
        # What the command resolves unset counts to (it does the same inside run_firehose).
        resolved = machine_defaults(config)
        result["workers"], result["parallel_races"] = resolved.workers, resolved.parallel_races
        result["flags"] = {"workers": args.workers, "parallel_races": args.parallel_races}
        bare_workers = get_executor("process").workers  # the reference stage's default: one per CPU
        result["bare_workers"] = bare_workers
        population = len(config.population)
        if args.only != "firehose":
            suite, _ = load_suite(root / "bank.json")
            tasks = [
                EpisodeTask(p.model_dump_json(), str(root / "index"), suite_path=str(root / "bank.json"))
                for p in suite
            ]
            bare = _measure(
                lambda: run_episode_tasks(ProcessExecutor(bare_workers), tasks, root / "bare.jsonl")
            )
            bare["trajectories"] = len(tasks)
            result["bare_planner"] = bare
        if args.only != "bare":
            fire = _measure(lambda: run_firehose(config))
            fire["trajectories"] = sum(
                len(p.read_bytes().splitlines())
                for p in (root / "firehose").glob("race-*/agents/*/output.jsonl")
            )
            fire["expected"] = args.races * args.problems * population
            result["firehose"] = fire
    for side in ("bare_planner", "firehose"):
        if side in result:
            r = result[side]
            r["trajectories_per_s"] = round(r["trajectories"] / r["wall_s"], 2)
            r["cpu_s_per_trajectory"] = round(r["cpu_s"] / max(r["trajectories"], 1), 3)
            if "machine_cpu_s" in r:
                r["machine_cpu_s_per_trajectory"] = round(r["machine_cpu_s"] / max(r["trajectories"], 1), 3)
    if "bare_planner" in result and "firehose" in result:
        b, f = result["bare_planner"], result["firehose"]
        result["ratio_wall_per_trajectory"] = round(
            (f["wall_s"] / max(f["trajectories"], 1)) / (b["wall_s"] / max(b["trajectories"], 1)), 2
        )
        result["ratio_cpu_per_trajectory"] = round(f["cpu_s_per_trajectory"] / b["cpu_s_per_trajectory"], 2)
    if "firehose" in result:
        f = result["firehose"]
        result["paper_extrapolation_min"] = round(PAPER_TRAJECTORIES / f["trajectories_per_s"] / 60, 1)
    result["load_after"] = os.getloadavg()
    print(json.dumps(result, indent=1))
    if "ratio_wall_per_trajectory" in result:
        print(f"RATIO firehose/bare planner wall per trajectory: {result['ratio_wall_per_trajectory']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
