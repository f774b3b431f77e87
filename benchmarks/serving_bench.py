"""Serving engines side by side: CTranslate2 against the batched transformers backend, same prompts, greedy.

Each engine is loaded once and served by ``shoparena eval serve``'s app on loopback; the same episodes run
through the ``openai:`` policy at concurrency 1 and 8, the engines taking turns at each concurrency (so a
change of machine load hits both). Reported per engine: episodes/s at each concurrency, the concurrency-8
speed-up over concurrency 1, the ratio to the transformers backend at the same concurrency, and whether
every episode's model text and outcome equal the transformers backend's (greedy).

    python benchmarks/serving_bench.py --quick --model ~/.cache/shoparena/models/smollm2-135m-instruct

Prints one JSON object; results are recorded in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from eval_bench import build_world, vars_of
from shoparena.eval.config import EvalConfig
from shoparena.eval.policies import hf_backend
from shoparena.eval.run import run_eval
from shoparena.eval.server import LoopbackServer, create_app
from shoparena.formats.profiles import read_render_stamp
from shoparena.jsonl import read_jsonl_dicts

#: Per-episode fields that must not change with the engine (timings and the model name may).
OUTCOME_FIELDS = (
    "status",
    "termination_reason",
    "success_strict",
    "success_shoppingbench",
    "steps",
    "prompt_tokens",
    "completion_tokens",
    "calls",
    "finish_reasons",
)


def episodes_of(run: Path) -> dict[str, dict[str, Any]]:
    """problem id -> outcome fields and the model's text of every turn."""
    out: dict[str, dict[str, Any]] = {}
    for row in read_jsonl_dicts(run / "episodes.jsonl"):
        out[row["problem_id"]] = {k: row[k] for k in OUTCOME_FIELDS}
    for envelope in read_jsonl_dicts(run / "output.jsonl"):
        texts = [turn["completion"]["content"] for turn in envelope["dialogue"]]
        out[envelope["problem_id"]]["texts"] = texts
    return out


def differences(reference: dict[str, dict[str, Any]], other: dict[str, dict[str, Any]]) -> dict[str, Any]:
    same_outcome = sum(
        all(other[p][k] == reference[p][k] for k in OUTCOME_FIELDS) for p in reference if p in other
    )
    same_text = sum(other[p].get("texts") == reference[p].get("texts") for p in reference if p in other)
    return {"episodes": len(reference), "same_outcome": same_outcome, "same_model_text": same_text}


def run_at(
    server: LoopbackServer, name: str, root: Path, suite: Path, index: Path, concurrency: int, args: Any
) -> Path:
    out = root / f"{name}-c{concurrency}"
    config = EvalConfig(
        policy=f"openai:{server.base_url}#{args.model.name}",
        suite=suite,
        index=index,
        out=out,
        concurrency=concurrency,
        progress=False,
        max_steps=args.max_steps,
        max_tokens=args.max_tokens,
        limit=args.problems,
        render_profile=args.render_profile,
    )
    run_eval(config)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="Small sizes (8 problems, 2 steps, 32 tokens).")
    parser.add_argument(
        "--model",
        type=Path,
        default=Path("~/.cache/shoparena/models/smollm2-135m-instruct"),
        help="transformers folder (default: shoparena models smollm2's).",
    )
    parser.add_argument(
        "--engines", nargs="+", default=None, help="Default: transformers ctranslate2 (full: + int8)."
    )
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 8])
    parser.add_argument("--problems", type=int, default=None)
    parser.add_argument("--max-steps", type=int, default=2)
    parser.add_argument("--max-tokens", type=int, default=None)
    parser.add_argument("--threads", type=int, default=1, help="Intra-op threads of every engine.")
    args = parser.parse_args()
    args.model = args.model.expanduser()
    args.problems = args.problems or (8 if args.quick else 16)
    args.max_tokens = args.max_tokens or (32 if args.quick else 64)
    engines = args.engines or (
        ["transformers", "ctranslate2"] if args.quick else ["transformers", "ctranslate2", "ctranslate2-int8"]
    )
    stamp = read_render_stamp(args.model)
    args.render_profile = stamp.profile if stamp else None
    result: dict[str, Any] = {
        "machine": f"{platform.machine()} {os.cpu_count()} cpus, {platform.python_version()}",
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "load_average_at_start": round(os.getloadavg()[0], 1),
        "model": str(args.model),
        "problems": args.problems,
        "max_steps": args.max_steps,
        "max_tokens": args.max_tokens,
        "threads": args.threads,
    }
    backends: dict[str, Any] = {}
    servers: dict[str, LoopbackServer] = {}
    runs: dict[str, dict[int, Path]] = {e: {} for e in engines}
    table: dict[str, dict[str, Any]] = {e: {} for e in engines}
    with tempfile.TemporaryDirectory(prefix="serving-bench-") as tmp:
        root = Path(tmp)
        suite, index = build_world(root, 3000, 24)
        try:
            for engine in engines:
                started = time.perf_counter()
                backends[engine] = hf_backend(args.model, engine=engine, max_batch=8, threads=args.threads)
                table[engine]["load_s"] = round(time.perf_counter() - started, 1)
                servers[engine] = LoopbackServer(create_app(backends[engine], args.model.name)).start()
            for concurrency in args.concurrency:
                for engine in engines:  # engines take turns, so load changes hit each of them
                    stats = backends[engine].generator.stats
                    before = vars_of(stats)
                    started = time.perf_counter()
                    runs[engine][concurrency] = run_at(
                        servers[engine], engine, root, suite, index, concurrency, args
                    )
                    wall = time.perf_counter() - started
                    after = vars_of(stats)
                    summary = json.loads((runs[engine][concurrency] / "summary.json").read_text())
                    batches = max(1, after["batches"] - before["batches"])
                    table[engine][f"c{concurrency}"] = {
                        "episodes_per_s": summary["throughput"]["episodes_per_s"],
                        "episode_loop_s": summary["throughput"]["wall_s"],
                        "whole_call_s": round(wall, 1),
                        "completion_tokens_per_s": summary["throughput"]["completion_tokens_per_s"],
                        "mean_batch": round((after["sequences"] - before["sequences"]) / batches, 2),
                        "load_average": round(os.getloadavg()[0], 1),
                    }
                    print(f"{engine} c{concurrency}: {table[engine][f'c{concurrency}']}", file=sys.stderr)
            reference = {c: episodes_of(p) for c, p in runs[engines[0]].items()}
            for engine in engines:
                row = table[engine]
                lo, hi = min(args.concurrency), max(args.concurrency)
                if lo != hi:
                    rate = row[f"c{hi}"]["episodes_per_s"] / row[f"c{lo}"]["episodes_per_s"]
                    row[f"c{hi}_over_c{lo}"] = round(rate, 2)
                for c in args.concurrency:
                    base = table[engines[0]][f"c{c}"]["episodes_per_s"]
                    row[f"c{c}_vs_{engines[0]}"] = round(row[f"c{c}"]["episodes_per_s"] / base, 2)
                    same = differences(reference[c], episodes_of(runs[engine][c]))
                    row[f"c{c}_greedy_vs_{engines[0]}"] = same
        finally:
            for server in servers.values():
                server.stop()
            for backend in backends.values():
                backend.close()
    result["engines"] = table
    result["load_average_at_end"] = round(os.getloadavg()[0], 1)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
