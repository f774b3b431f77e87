"""Tokens per second of a local model served in process behind the arena proxy (``hf:DIR`` backend).

Runs the built-in ``agentic`` miner on synthetic product problems with ``arena run``'s library function and
reads the proxy's trusted logs: generated tokens / time inside inference calls (prefill, generation, proxy
overhead; the sandboxed agent's own time excluded), per-call latency, and the wall time per problem.

Usage: ``python benchmarks/arena_model_bench.py [--quick] [--model DIR] [--workers N]``. The default model
is SmolLM2-135M-Instruct (``shoparena models smollm2``). Writes its section of docs/benchmarks.md between
``<!-- arena_model_bench:start -->`` and ``<!-- arena_model_bench:end -->`` (other sections are kept).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from doc_sections import write_section


def build_world(root: Path, problems: int) -> tuple[Path, object]:
    from shoparena.catalog.synth import SynthConfig, synthesize_catalog
    from shoparena.records.problem import Intent
    from shoparena.search import SearchIndex
    from shoparena.search.index import build_index
    from shoparena.suites.loaders import write_oro_suite
    from shoparena.suites.synth import SynthOptions, synthesize_problems

    synthesize_catalog(SynthConfig(products=600, seed=7), root / "catalog.jsonl", progress=False)
    build_index(root / "catalog.jsonl", root / "index", progress=False)
    engine = SearchIndex.open(root / "index")
    bank = synthesize_problems(
        list(engine.iter_products()),
        SynthOptions(n=problems, seed=5, intents=(Intent.PRODUCT,)),
        engine=engine,
    ).problems
    write_oro_suite(bank, root / "suite.json")
    return root / "suite.json", engine


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 problems, 64 tokens per call.")
    parser.add_argument("--model", type=Path, default=None, help="Model folder (default: SmolLM2).")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--no-write", action="store_true", help="Do not update docs/benchmarks.md.")
    args = parser.parse_args()
    from shoparena.arena.inference import InferenceLimits
    from shoparena.arena.miners import miner_path
    from shoparena.arena.proxy import ProxyConfig
    from shoparena.arena.proxy_log import is_model_reply, read_trusted_log
    from shoparena.arena.run_directory import ArenaRunConfig, run_arena
    from shoparena.arena.sandbox import SandboxConfig
    from shoparena.jsonl import read_jsonl_dicts

    if args.model is None:
        from shoparena.models.smollm2 import convert_smollm2

        args.model = convert_smollm2()
    problems, max_tokens = (2, 64) if args.quick else (6, 256)
    with tempfile.TemporaryDirectory(prefix="arena-model-bench-") as tmp:
        root = Path(tmp)
        suite, engine = build_world(root, problems)
        config = ArenaRunConfig(
            agents=[miner_path("agentic")],
            suite=suite,
            out=root / "run",
            backend=f"hf:{args.model}",
            workers=args.workers,
            timeout_s=900,
            proxy=ProxyConfig(inference=InferenceLimits(max_tokens=max_tokens, call_timeout_s=600)),
            sandbox=SandboxConfig(memory_bytes=2 * 1024**3),
        )
        started = time.monotonic()
        summary = run_arena(config, search=engine)
        wall = time.monotonic() - started
        calls = [
            e
            for path in sorted((root / "run" / "proxy" / "agentic").glob("*.jsonl"))
            for e in read_trusted_log(path)
            if is_model_reply(e)
        ]
        envelopes = read_jsonl_dicts(root / "run" / "agents" / "agentic" / "output.jsonl")
    tokens = sum((e.usage or {}).get("completion_tokens", 0) for e in calls)
    prompt_tokens = [(e.usage or {}).get("prompt_tokens", 0) for e in calls]
    busy_s = sum(e.duration_ms or 0.0 for e in calls) / 1000
    result = {
        "model": summary.model,
        "problems": problems,
        "workers": args.workers,
        "max_tokens": max_tokens,
        "calls": len(calls),
        "completion_tokens": tokens,
        "prompt_tokens_mean": round(statistics.mean(prompt_tokens), 1) if calls else 0,
        "tokens_per_s_in_calls": round(tokens / busy_s, 2) if busy_s else None,
        "call_latency_p50_s": round(statistics.median(e.duration_ms or 0.0 for e in calls) / 1000, 2)
        if calls
        else None,
        "problem_wall_mean_s": round(statistics.mean(e["execution_time"] for e in envelopes), 1),
        "run_wall_s": round(wall, 1),
        "statuses": {s: sum(e["status"] == s for e in envelopes) for s in ("SUCCESS", "FAILED", "TIMED_OUT")},
    }
    print(json.dumps(result, indent=2))
    if args.no_write:
        return
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    section = (
        "## Local model in the arena (in-process `hf:` backend)\n\n"
        f"Command: `python benchmarks/arena_model_bench.py{' --quick' if args.quick else ''}` "
        f"({datetime.now(UTC):%Y-%m-%d}, {platform.machine()}, {os.cpu_count()} cores, load average "
        f"{load:.1f} at the end, Python {sys.version.split()[0]}).\n\n"
        "| model | problems x workers | max_tokens | calls | tokens/s in calls | call p50 | problem wall |\n"
        "|---|---|---|---|---|---|---|\n"
        f"| {result['model']} | {problems} x {args.workers} | {max_tokens} | {len(calls)} | "
        f"{result['tokens_per_s_in_calls']} | {result['call_latency_p50_s']} s | "
        f"{result['problem_wall_mean_s']} s |\n\n"
        "Tokens/s = completion tokens / summed duration of answered inference calls in the proxy's trusted "
        "log (prefill and generation; one model whose generations are serialised by a lock, so a call's "
        "duration includes time queued behind another worker's)."
    )
    write_section("arena_model_bench", section)


if __name__ == "__main__":
    main()
