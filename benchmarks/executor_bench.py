"""Local Ray vs the process pool on the same episode work (one task per problem).

Usage::

    .venv/bin/python benchmarks/executor_bench.py --quick        # 5k products, 60 problems
    .venv/bin/python benchmarks/executor_bench.py                # 20k products, 200 problems

Both executors run the rule-based planner over the same synthesised bank with 2 workers; Ray's start-up
(``ray.init``) is timed apart from the episodes. Also checks that both give the same per-problem outcomes.
Prints one JSON object (paste into docs/scale.md with the command, machine and date).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import tempfile
import time
from pathlib import Path

from shoparena.arena.executor import EpisodeTask, ProcessExecutor, RayExecutor, run_episode_tasks
from shoparena.catalog.synth import SynthConfig, synthesize_catalog
from shoparena.formats.io import read_trajectories
from shoparena.search import build_index
from shoparena.suites.loaders import load_suite
from shoparena.suites.synth import SynthOptions, synthesize_bank


def _outcomes(path: Path) -> dict[str, tuple]:
    return {
        t.problem_id: (t.status.value, len(t.steps), tuple(s.response for s in t.steps))
        for t in read_trajectories(path)
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    products, problems = (5000, 60) if args.quick else (20000, 200)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        synthesize_catalog(SynthConfig(products=products, seed=1), root / "cat.jsonl.gz", progress=False)
        build_index(root / "cat.jsonl.gz", root / "index", progress=False)
        synthesize_bank(root / "index", root / "bank.json", SynthOptions(n=problems, seed=1))
        suite, _ = load_suite(root / "bank.json")
        tasks = [
            EpisodeTask(p.model_dump_json(), str(root / "index"), suite_path=str(root / "bank.json"))
            for p in suite
        ]
        started = time.perf_counter()
        run_episode_tasks(ProcessExecutor(args.workers), tasks, root / "pool.jsonl")
        pool_s = time.perf_counter() - started
        started = time.perf_counter()
        ray_exec = RayExecutor(args.workers)
        init_s = time.perf_counter() - started
        started = time.perf_counter()
        run_episode_tasks(ray_exec, tasks, root / "ray.jsonl")
        ray_s = time.perf_counter() - started
        same = _outcomes(root / "pool.jsonl") == _outcomes(root / "ray.jsonl")
    result = {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()} {os.cpu_count()} CPUs, {platform.platform()}",
        "products": products,
        "problems": len(tasks),
        "workers": args.workers,
        "process_pool_s": round(pool_s, 2),
        "ray_init_s": round(init_s, 2),
        "ray_episodes_s": round(ray_s, 2),
        "per_problem_ms": {
            "pool": round(1000 * pool_s / len(tasks), 1),
            "ray": round(1000 * ray_s / len(tasks), 1),
        },
        "identical_outcomes": same,
    }
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
