"""Local Ray vs the default executors on the same work: planner episodes, firehose races, eval episodes.

Usage::

    nice -n 10 .venv/bin/python benchmarks/executor_bench.py --quick   # 5k products, 60 problems, 2 races
    nice -n 10 .venv/bin/python benchmarks/executor_bench.py           # 20k products, 200 problems, 4 races
    ... --only firehose                                                # one section

Sections (each checks that both executors give the same per-problem outcomes):

- ``episodes``: ``run_episode_tasks`` (the pipeline's reference stage), a 2-process pool vs 2 Ray tasks at a
  time, one task per problem;
- ``firehose``: ``arena firehose`` with the default 9-miner population, races one after another in this
  process (2 sandboxes each) vs one Ray task per race (1 sandbox each, 2 races at a time);
- ``eval``: ``eval run --policy planner --samples 2``, 2 in-process threads vs one Ray task per problem.

Ray's start-up (``ray.init(num_cpus=workers)``) is timed apart. Prints one JSON object (docs/scale.md and
docs/benchmarks.md quote it with the command, machine, load average and date).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from shoparena.arena.executor import EpisodeTask, ProcessExecutor, RayExecutor, run_episode_tasks
from shoparena.catalog.synth import SynthConfig, synthesize_catalog
from shoparena.formats.io import read_trajectories
from shoparena.jsonl import read_jsonl_dicts
from shoparena.search import build_index
from shoparena.suites.loaders import load_suite
from shoparena.suites.synth import SynthOptions, synthesize_bank

SECTIONS = ("episodes", "firehose", "eval")


def _timed(fn: Callable[[], Any]) -> float:
    started = time.perf_counter()
    fn()
    return round(time.perf_counter() - started, 2)


def _episode_outcomes(path: Path) -> dict[str, tuple]:
    return {
        t.problem_id: (t.status.value, len(t.steps), tuple(s.response for s in t.steps))
        for t in read_trajectories(path)
    }


def bench_episodes(root: Path, workers: int, ray_exec: RayExecutor) -> dict[str, Any]:
    suite, _ = load_suite(root / "bank.json")
    tasks = [
        EpisodeTask(p.model_dump_json(), str(root / "index"), suite_path=str(root / "bank.json"))
        for p in suite
    ]
    pool_s = _timed(lambda: run_episode_tasks(ProcessExecutor(workers), tasks, root / "pool.jsonl"))
    ray_s = _timed(lambda: run_episode_tasks(ray_exec, tasks, root / "ray.jsonl"))
    return {
        "problems": len(tasks),
        "process_pool_s": pool_s,
        "ray_s": ray_s,
        "identical_outcomes": _episode_outcomes(root / "pool.jsonl") == _episode_outcomes(root / "ray.jsonl"),
    }


def _step_text(step: Any) -> str:
    """A step's completion text: what the agent said, without per-run tool-call ids or timings."""
    completion = step.get("completion") if isinstance(step, dict) else step
    return str(completion.get("content")) if isinstance(completion, dict) else repr(completion)


def _firehose_outcomes(out: Path) -> dict[tuple, tuple]:
    found = {}
    for path in sorted(out.glob("race-*/agents/*/output.jsonl")):
        for env in read_jsonl_dicts(path):
            # Steps as the agent wrote them, minus per-run ids and timings (a malformed miner's may be text).
            steps = [_step_text(step) for step in env.get("dialogue") or []]
            found[(path.parts[-4], path.parts[-2], env["problem_id"])] = (env["status"], tuple(steps))
    return found


def bench_firehose(root: Path, workers: int, races: int, per_race: int) -> dict[str, Any]:
    from shoparena.arena.firehose import FirehoseConfig, run_firehose

    def config(name: str, executor: str, race_workers: int) -> FirehoseConfig:
        return FirehoseConfig(
            suites=[root / "bank.json"],
            index=root / "index",
            out=root / name,
            races=races,
            problems_per_race=per_race,
            timeout_s=30,
            workers=race_workers,
            executor=executor,
        )

    process_s = _timed(lambda: run_firehose(config("fh-process", "process", workers)))
    ray_s = _timed(lambda: run_firehose(config("fh-ray", "ray", 1)))
    expected = _firehose_outcomes(root / "fh-process")
    return {
        "races": races,
        "problems_per_race": per_race,
        "trajectories": len(expected),
        "process_s": process_s,
        "ray_s": ray_s,
        "identical_outcomes": expected == _firehose_outcomes(root / "fh-ray"),
    }


def _eval_outcomes(out: Path) -> dict[tuple, tuple]:
    keys = ("status", "termination_reason", "success_strict", "success_shoppingbench", "steps")
    return {(r["problem_id"], r["sample_idx"]): tuple(r[k] for k in keys) for r in read_jsonl_dicts(out)}


def bench_eval(root: Path, workers: int) -> dict[str, Any]:
    from shoparena.eval.config import EvalConfig
    from shoparena.eval.run import run_eval

    def config(name: str, executor: str) -> EvalConfig:
        return EvalConfig(
            policy="planner",
            suite=root / "bank.json",
            index=root / "index",
            out=root / name,
            samples=2,
            concurrency=workers,
            executor=executor,
            progress=False,
            bootstrap=200,
        )

    process_s = _timed(lambda: run_eval(config("eval-process", "process")))
    ray_s = _timed(lambda: run_eval(config("eval-ray", "ray")))
    expected = _eval_outcomes(root / "eval-process" / "episodes.jsonl")
    return {
        "episodes": len(expected),
        "process_threads_s": process_s,
        "ray_s": ray_s,
        "identical_outcomes": expected == _eval_outcomes(root / "eval-ray" / "episodes.jsonl"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--only", choices=SECTIONS, action="append", help="Run only these sections.")
    args = parser.parse_args()
    sections = args.only or list(SECTIONS)
    products, problems, races, per_race = (5000, 60, 2, 3) if args.quick else (20000, 200, 4, 5)
    load_before = os.getloadavg()
    result: dict[str, Any] = {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()} {os.cpu_count()} CPUs, {platform.platform()}",
        "products": products,
        "workers": args.workers,
    }
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        synthesize_catalog(SynthConfig(products=products, seed=1), root / "cat.jsonl.gz", progress=False)
        build_index(root / "cat.jsonl.gz", root / "index", progress=False)
        synthesize_bank(root / "index", root / "bank.json", SynthOptions(n=problems, seed=1))
        started = time.perf_counter()
        ray_exec = RayExecutor(args.workers)  # a local ray.init(num_cpus=workers), reused by every section
        result["ray_init_s"] = round(time.perf_counter() - started, 2)
        if "episodes" in sections:
            result["episodes"] = bench_episodes(root, args.workers, ray_exec)
        if "firehose" in sections:
            result["firehose"] = bench_firehose(root, args.workers, races, per_race)
        if "eval" in sections:
            result["eval"] = bench_eval(root, args.workers)
    result["load_average_1m"] = {"before": round(load_before[0], 2), "after": round(os.getloadavg()[0], 2)}
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
