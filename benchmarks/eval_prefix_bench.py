"""Prefix-cache benchmark: ``eval run`` of an ``hf:`` policy with and without ``--prefix-cache``, paired.

For each model and render profile the same problems are evaluated twice in one process, cache on then off
(``--order off-on`` swaps them), greedy, one torch thread, after a one-turn warm-up run that neither side
pays: wall and CPU time of each run, prompt tokens and the prompt tokens the engine computed
(``prefilled_tokens``), prefix misses, the load average around each run, and the greedy steps of every
episode compared one by one (a divergence is reported with its problem and step; it is a bug unless it is
a logit tie).

    OMP_NUM_THREADS=1 nice -n 19 python benchmarks/eval_prefix_bench.py --quick \\
        --model ~/.cache/shoparena/models/smollm2-135m-instruct

``--quick``: 4 problems, 4 steps, 32 new tokens. The default is the issue's 48 problems, 4 steps, 64 tokens.
``--student DIR`` adds a second ``hf:`` folder (the ``make run`` student). ``--only on`` (or ``off``) times
one side alone (no comparison), e.g. the README's SmolLM2 timing: ``--only on --problems 16 --steps 3
--concurrency 8 --profiles upstream``. Prints one JSON object; results are recorded in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from pathlib import Path
from typing import Any

from eval_bench import build_world  # the same world as eval_bench (benchmarks/ is on sys.path when run)
from shoparena.eval.config import EvalConfig
from shoparena.eval.run import run_eval


def steps_of(run_dir: Path) -> dict[str, list[str]]:
    """Each episode's completions (what the policy wrote at every step), by problem."""
    out: dict[str, list[str]] = {}
    for line in (run_dir / "output.jsonl").read_text(encoding="utf-8").splitlines():
        envelope = json.loads(line)
        dialogue = envelope.get("dialogue") or []  # an episode that failed before a step has none
        out[envelope["problem_id"]] = [json.dumps(d["completion"], sort_keys=True) for d in dialogue]
    return out


def one_run(model: Path, profile: str, cache: bool, suite: Path, index: Path, out: Path, args: Any) -> dict:
    """One ``run_eval``: its timings, token totals and load."""
    config = EvalConfig(
        policy=f"hf:{model}",
        suite=suite,
        index=index,
        out=out,
        limit=args.problems,
        max_steps=args.steps,
        max_tokens=args.max_tokens,
        concurrency=args.concurrency,
        max_batch=args.concurrency,
        threads=1,
        render_profile=profile,
        allow_profile_mismatch=True,
        prefix_cache=cache,
        progress=False,
        # A starved process (nice 19 on a busy host) must not turn slowness into failed episodes.
        request_timeout_s=args.timeout,
        episode_timeout_s=args.timeout,
    )
    load_before = os.getloadavg()
    wall, cpu = time.perf_counter(), time.process_time()
    summary = run_eval(config).dump()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    rows = [json.loads(x) for x in (out / "episodes.jsonl").read_text().splitlines() if x.strip()]
    return {
        "prefix_cache": cache,
        "episodes": len(rows),
        "calls": sum(r["calls"] for r in rows),
        "steps": sum(r["steps"] for r in rows),
        "wall_s": round(wall, 1),
        "episode_loop_s": summary["throughput"]["wall_s"],
        "cpu_s": round(cpu, 1),
        "prompt_tokens": summary["prefix_cache"]["prompt_tokens"],
        "prefilled_tokens": summary["prefix_cache"]["prefilled_tokens"],
        "misses": summary["prefix_cache"]["misses"],
        "completion_tokens": sum(r["completion_tokens"] for r in rows),
        "strict_successes": sum(r["success_strict"] for r in rows),
        "load_before": [round(x, 2) for x in load_before],
        "load_after": [round(x, 2) for x in os.getloadavg()],
    }


def compare(model: Path, profile: str, suite: Path, index: Path, root: Path, args: Any) -> dict[str, Any]:
    """Cache on and off for one model and profile, and their greedy steps compared."""
    order = (True, False) if args.order == "on-off" else (False, True)
    runs = {}
    for cache in order:
        out = root / f"{model.name}-{profile}-{'on' if cache else 'off'}"
        runs[cache] = one_run(model, profile, cache, suite, index, out, args)
        runs[cache]["steps_by_problem"] = steps_of(out)
    on, off = runs[True], runs[False]
    same, divergences = 0, []
    a, b = on.pop("steps_by_problem"), off.pop("steps_by_problem")
    for problem in sorted(set(a) | set(b)):
        x, y = a.get(problem, []), b.get(problem, [])
        for i in range(max(len(x), len(y))):
            if i < len(x) and i < len(y) and x[i] == y[i]:
                same += 1
                continue
            divergences.append({"problem": problem, "step": i + 1})
            break
    prefilled = on["prefilled_tokens"] or 0
    return {
        "model": model.name,
        "profile": profile,
        "on": on,
        "off": off,
        "prefilled_reduction": round(off["prefilled_tokens"] / prefilled, 2) if prefilled else None,
        "wall_speedup": round(off["wall_s"] / on["wall_s"], 2) if on["wall_s"] else None,
        "cpu_speedup": round(off["cpu_s"] / on["cpu_s"], 2) if on["cpu_s"] else None,
        "identical_steps": same,
        "divergent_episodes": divergences,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="4 problems, 4 steps, 32 new tokens.")
    parser.add_argument("--model", type=Path, required=True, help="hf: folder (SmolLM2-135M-Instruct).")
    parser.add_argument("--student", type=Path, default=None, help="A second hf: folder.")
    parser.add_argument("--problems", type=int, default=None)
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--max-tokens", type=int, default=None)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--profiles", nargs="+", default=["upstream", "compact"])
    parser.add_argument("--order", choices=["on-off", "off-on"], default="on-off")
    parser.add_argument("--timeout", type=float, default=7200.0, help="Request and episode limit, s.")
    parser.add_argument("--only", choices=["on", "off"], default=None, help="Time one side alone.")
    args = parser.parse_args()
    args.problems = args.problems or (4 if args.quick else 48)
    args.max_tokens = args.max_tokens or (32 if args.quick else 64)
    result: dict[str, Any] = {
        "machine": f"{platform.machine()} {os.cpu_count()} cpus, {platform.python_version()}",
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "settings": {k: v for k, v in vars(args).items() if k not in ("model", "student")},
        "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
        "niceness": os.nice(0),
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
        "pairs": [],
    }
    models = [args.model.expanduser()] + ([args.student.expanduser()] if args.student else [])
    with tempfile.TemporaryDirectory(prefix="eval-prefix-bench-") as tmp:
        root = Path(tmp)
        suite, index = build_world(root, 3000, max(args.problems, 8))
        for model in models:
            # Imports, weights in the page cache, torch's first-call costs: paid here, by neither side.
            warm = argparse.Namespace(**{**vars(args), "problems": 1, "steps": 1, "max_tokens": 1})
            one_run(model, args.profiles[0], False, suite, index, root / f"{model.name}-warm-up", warm)
            for profile in args.profiles:
                if args.only:
                    out = root / f"{model.name}-{profile}-{args.only}"
                    run = one_run(model, profile, args.only == "on", suite, index, out, args)
                    result["pairs"].append({"model": model.name, "profile": profile, args.only: run})
                else:
                    result["pairs"].append(compare(model, profile, suite, index, root, args))
                print(json.dumps(result["pairs"][-1]), flush=True)
    result["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
