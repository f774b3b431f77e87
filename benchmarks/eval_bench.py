"""Evaluation harness benchmark: harness overhead with a fixed-latency model, and serving throughput.

1. **Overhead**: ``run_eval`` with a chat backend that sleeps a fixed time per call and then recommends and
   terminates (two calls per episode). Ideal wall time = episodes × calls × latency / concurrency; the
   overhead is what the harness (environment, search, scoring, records, summary, shortcut floor) adds.
2. **Serving**: the OpenAI-compatible path against one local server (``shoparena eval serve``'s app over the
   batched transformers backend) with a small model, at concurrency 1 and 8: episodes/s and generated
   tokens/s both ways, and the batch sizes the server actually formed.

    python benchmarks/eval_bench.py --quick --model ~/.cache/shoparena/models/smollm2-135m-instruct

Prints one JSON object; results are recorded in docs/benchmarks.md.
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

from shoparena.catalog.synth import SynthConfig, synthesize_catalog
from shoparena.eval.config import EvalConfig
from shoparena.eval.run import run_eval
from shoparena.llm.types import ChatRequest, ChatResponse, Usage
from shoparena.records.problem import Intent
from shoparena.search import build_index
from shoparena.suites.options import SynthOptions
from shoparena.suites.synth import synthesize_bank


class FixedLatencyBackend:
    """Sleeps ``latency_s`` per call; first call searches the query, second recommends its first hit."""

    def __init__(self, latency_s: float) -> None:
        self.latency_s = latency_s

    def complete(self, request: ChatRequest) -> ChatResponse:
        time.sleep(self.latency_s)
        tool_turns = [m for m in request.messages if m.get("role") == "tool"]
        query = next(m["content"] for m in request.messages if m.get("role") == "user")
        if not tool_turns:
            calls = [("find_product", {"q": query})]
        else:
            hits = json.loads(tool_turns[-1]["content"] or "[]")
            first = hits[0]["product_id"] if isinstance(hits, list) and hits else ""
            calls = [("recommend_product", {"product_ids": first}), ("terminate", {"status": "success"})]
        tool_calls = [
            {"id": f"c{i}", "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
            for i, (n, a) in enumerate(calls)
        ]
        return ChatResponse(
            tool_calls=tool_calls,
            usage=Usage(prompt_tokens=100, completion_tokens=20),
            model="fixed-latency",
            finish_reason="tool_calls",
        )


def build_world(root: Path, products: int, problems: int) -> tuple[Path, Path]:
    catalog = root / "documents.jsonl"
    synthesize_catalog(SynthConfig(products=products, seed=5), catalog, progress=False)
    build_index(catalog, root / "index", progress=False)
    suite = root / "bank.json"
    intents = (Intent.PRODUCT, Intent.SHOP, Intent.VOUCHER)
    synthesize_bank(root / "index", suite, SynthOptions(n=problems, seed=7, intents=intents))
    return suite, root / "index"


def overhead(root: Path, suite: Path, index: Path, latency: float, concurrency: int) -> dict[str, Any]:
    config = EvalConfig(
        policy="openai:http://fixed.invalid/v1#fixed",
        suite=suite,
        index=index,
        out=root / f"overhead-{concurrency}",
        concurrency=concurrency,
        progress=False,
        max_steps=4,
    )
    started = time.perf_counter()
    summary = run_eval(config, backend=FixedLatencyBackend(latency)).dump()
    total = time.perf_counter() - started
    calls = sum(json.loads(x)["calls"] for x in (config.out / "episodes.jsonl").read_text().splitlines())
    episodes = summary["episodes"]["finished"]
    ideal = calls * latency / concurrency
    loop = summary["throughput"]["wall_s"]
    return {
        "episodes": episodes,
        "model_calls": calls,
        "latency_s": latency,
        "concurrency": concurrency,
        "ideal_model_s": round(ideal, 3),
        "episode_loop_s": loop,
        "whole_call_s": round(total, 3),
        "loop_overhead_pct": round(100 * (loop - ideal) / loop, 2),
        "whole_call_overhead_pct": round(100 * (total - ideal) / total, 2),
    }


def serving(root: Path, suite: Path, index: Path, model: Path, args: argparse.Namespace) -> dict[str, Any]:
    from shoparena.eval.batching import BatchedTransformersBackend
    from shoparena.eval.server import LoopbackServer, create_app

    backend = BatchedTransformersBackend(model, max_batch=8, threads=args.threads)
    out: dict[str, Any] = {"model": str(model), "max_tokens": args.max_tokens, "max_steps": args.max_steps}
    try:
        with LoopbackServer(create_app(backend, model.name)) as server:
            for concurrency in args.serve_concurrency:
                before = dict(vars_of(backend.generator.stats))
                config = EvalConfig(
                    policy=f"openai:{server.base_url}#{model.name}",
                    suite=suite,
                    index=index,
                    out=root / f"serve-{concurrency}",
                    concurrency=concurrency,
                    progress=False,
                    max_steps=args.max_steps,
                    max_tokens=args.max_tokens,
                    limit=args.serve_problems if concurrency > 1 else args.serial_problems,
                )
                summary = run_eval(config).dump()
                after = vars_of(backend.generator.stats)
                rows = [json.loads(x) for x in (config.out / "episodes.jsonl").read_text().splitlines()]
                batches = after["batches"] - before["batches"]
                out[f"c{concurrency}"] = {
                    "episodes": len(rows),
                    "wall_s": summary["throughput"]["wall_s"],
                    "episodes_per_s": summary["throughput"]["episodes_per_s"],
                    "completion_tokens_per_s": summary["throughput"]["completion_tokens_per_s"],
                    "prompt_tokens_mean": round(
                        sum(r["prompt_tokens"] for r in rows) / max(1, sum(r["calls"] for r in rows)), 1
                    ),
                    "mean_batch": round((after["sequences"] - before["sequences"]) / max(1, batches), 2),
                    "max_batch": after["max_batch_seen"],
                }
    finally:
        backend.close()
    if "c1" in out and "c8" in out:
        out["speedup_episodes_per_s"] = round(out["c8"]["episodes_per_s"] / out["c1"]["episodes_per_s"], 2)
    return out


def vars_of(stats: Any) -> dict[str, Any]:
    return {k: getattr(stats, k) for k in stats.__slots__}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="Small sizes (a few minutes on 2 cores).")
    parser.add_argument("--model", type=Path, default=None, help="Model folder for the serving benchmark.")
    parser.add_argument("--max-tokens", type=int, default=None)
    parser.add_argument("--max-steps", type=int, default=2)
    parser.add_argument("--serve-problems", type=int, default=None)
    parser.add_argument("--latency", type=float, default=None)
    parser.add_argument("--threads", type=int, default=1, help="torch threads of the served model.")
    parser.add_argument("--serve-concurrency", type=int, nargs="+", default=[1, 8])
    parser.add_argument("--serial-problems", type=int, default=None, help="Problems at concurrency 1.")
    parser.add_argument("--skip-overhead", action="store_true")
    args = parser.parse_args()
    problems = 24 if args.quick else 60
    args.max_tokens = args.max_tokens or (32 if args.quick else 64)
    args.serve_problems = args.serve_problems or (8 if args.quick else 16)
    args.serial_problems = args.serial_problems or args.serve_problems
    latency = args.latency or 1.0
    result: dict[str, Any] = {
        "machine": f"{platform.machine()} {os.cpu_count()} cpus, {platform.python_version()}",
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
        "quick": args.quick,
        "load_average_at_start": round(os.getloadavg()[0], 1),
    }
    with tempfile.TemporaryDirectory(prefix="eval-bench-") as tmp:
        root = Path(tmp)
        suite, index = build_world(root, 3000, problems)
        result["suite_problems"] = len(json.loads(suite.read_text()))
        if not args.skip_overhead:
            result["overhead"] = [overhead(root, suite, index, latency, c) for c in (1, 8)]
        if args.model is not None:
            result["serving"] = serving(root, suite, index, args.model.expanduser(), args)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
