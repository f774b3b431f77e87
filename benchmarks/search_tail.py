"""Tail latency and exactness of ``find_product`` on one index, with the side-by-side query set.

Usage::

    python benchmarks/search_tail.py queries --index IDX --out Q.jsonl [--n 350]
    python benchmarks/search_tail.py latency --index IDX --queries Q.jsonl [--slowest SLOW.jsonl]
    python benchmarks/search_tail.py exact   --index IDX --queries Q.jsonl
    python benchmarks/search_tail.py --quick  # 20k-product catalog in a temporary directory, all three

``queries`` draws the anchor's query set (``anchor_lucene/bench_find_product.make_queries``, seed 7: 3-6
title words, 40 % price, 20 % service, 10 % sort filters) from a shoparena index instead of a Lucene one:
a duplicate-free catalog indexed with one thread holds its products in the same document order in both, so
the queries are the ones ``side_by_side.py lucene --make`` writes. ``latency`` replays them as
``side_by_side.py shoparena`` does (50 warm-up queries, then ``find_product_dicts`` in one process) and
reports wall (``perf_counter``) and CPU (``time.thread_time``) p50 / p95 / p99 in ms, the load average and
the process's resident memory. ``exact`` checks that the pruned window equals ``exact=True``'s for
retrieve_k 10 000 (all queries) and 100 000 (the first 60). Results print as JSON.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from shoparena.search import SearchIndex, build_index

ANCHOR = Path("/work/shared/tools/anchor_lucene")
WARMUP = 50
SERVICES = ("official", "freeShipping", "COD", "flashsale")
SORTS = ("order", "priceasc", "pricedesc")


def pct(values: list[float], p: float) -> float:
    xs = sorted(values)
    k = (len(xs) - 1) * p / 100
    lo, hi = math.floor(k), math.ceil(k)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def _passes(product: dict[str, Any], price: str | None, service: str | None) -> bool:
    if price:
        lo, hi = (float(x) if x else None for x in price.split("-"))
        if (lo is not None and product["price"] < lo) or (hi is not None and product["price"] > hi):
            return False
    return not service or all(s in product["service"] for s in service.split(","))


def make_queries(index: SearchIndex, n: int, seed: int = 7) -> list[dict[str, Any]]:
    """The anchor's query generator, reading products by document number from ``index``."""
    if (ANCHOR / "bench_find_product.py").exists():
        sys.path.insert(0, str(ANCHOR))
        import bench_find_product  # the anchor's own code: same random draws, same queries

        class _Doc:
            def __init__(self, product: dict[str, Any]) -> None:
                self._product = product

            def raw(self) -> str:
                return json.dumps({"product": self._product})

        class _Searcher:
            num_docs = len(index)

            def doc(self, i: int) -> _Doc:
                return _Doc(index.product_dict(i))

        return bench_find_product.make_queries(_Searcher(), n, seed=seed)
    # Without the anchor checkout: the same recipe (not the same draws).
    rng = random.Random(seed)
    out: list[dict[str, Any]] = []
    while len(out) < n:
        product = index.product_dict(rng.randrange(len(index)))
        words = product["title"].split()
        if len(words) < 3:
            continue
        size = min(len(words), rng.randint(3, 6))
        start = rng.randrange(len(words) - size + 1)
        price = None
        if rng.random() < 0.4:
            price = f"{math.floor(product['price'] * 0.7)}-{math.ceil(product['price'] * 1.5)}"
        service = rng.choice(SERVICES) if rng.random() < 0.2 else None
        query = {
            "qid": len(out),
            "q": " ".join(words[start : start + size]),
            "page": "1",
            "source_id": product["product_id"],
            "shop_id": None,
            "price": price,
            "sort": rng.choice(SORTS) if rng.random() < 0.1 else None,
            "service": service,
        }
        query["feasible"] = _passes(product, price, service)
        out.append(query)
    return out


def _status_mb() -> dict[str, int]:
    fields = {}
    with open("/proc/self/status") as fh:
        for line in fh:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "RssAnon"):
                fields[key] = int(value.split()[0]) // 1024
    return fields


def latency(index_dir: Path, queries: list[dict[str, Any]], slowest: Path | None = None) -> dict[str, Any]:
    index = SearchIndex.open(index_dir, retrieve_k=10_000)
    args = ("q", "page", "shop_id", "price", "sort", "service")
    for q in queries[:WARMUP]:
        index.find_product_dicts(*(q[a] for a in args))
    wall, cpu, rows = [], [], []
    load_start = os.getloadavg()
    for q in queries[WARMUP:]:
        t, c = time.perf_counter(), time.thread_time()
        index.find_product_dicts(*(q[a] for a in args))
        cpu.append((time.thread_time() - c) * 1000)
        wall.append((time.perf_counter() - t) * 1000)
        rows.append({"cpu_ms": round(cpu[-1], 2), "wall_ms": round(wall[-1], 2), **q})
    if slowest is not None:
        rows.sort(key=lambda r: -r["cpu_ms"])
        slowest.write_text("".join(json.dumps(r) + "\n" for r in rows[:30]))
    return {
        "queries": len(wall),
        "wall_p50_p95_p99_ms": [round(pct(wall, p), 2) for p in (50, 95, 99)],
        "cpu_p50_p95_p99_ms": [round(pct(cpu, p), 2) for p in (50, 95, 99)],
        "load_average_start_end": [round(load_start[0], 2), round(os.getloadavg()[0], 2)],
        "memory_mb": _status_mb(),
    }


def exactness(index_dir: Path, queries: list[dict[str, Any]]) -> dict[str, Any]:
    out = {}
    for retrieve_k, n in ((10_000, len(queries)), (100_000, 60)):
        fast = SearchIndex.open(index_dir, retrieve_k=retrieve_k)
        exact = SearchIndex.open(index_dir, retrieve_k=retrieve_k, exact=True)
        same = 0
        for q in queries[WARMUP : WARMUP + n]:
            a = (q["q"], q["shop_id"], q["price"], q["sort"], q["service"])
            same += fast.find_window(*a).tolist() == exact.find_window(*a).tolist()
        out[str(retrieve_k)] = {"queries": min(n, len(queries) - WARMUP), "pruned_equals_exhaustive": same}
    return out


def _read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def quick() -> dict[str, Any]:
    from shoparena.catalog.synth import SynthConfig, synthesize_catalog

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        synthesize_catalog(SynthConfig(products=20_000, seed=7), root / "documents.jsonl", progress=False)
        build_index(root / "documents.jsonl", root / "index", progress=False)
        queries = make_queries(SearchIndex.open(root / "index"), 250)
        return {
            "products": 20_000,
            "latency": latency(root / "index", queries),
            "exact": exactness(root / "index", queries),
        }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("command", nargs="?", choices=["queries", "latency", "exact"])
    ap.add_argument("--quick", action="store_true", help="a 20k-product catalog, all steps")
    ap.add_argument("--index", type=Path)
    ap.add_argument("--queries", type=Path)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--n", type=int, default=350, help="queries to draw (the first 50 warm up)")
    ap.add_argument("--slowest", type=Path, help="write the 30 slowest queries (CPU) here")
    a = ap.parse_args(argv)
    if a.quick:
        print(json.dumps(quick()))
        return 0
    if a.command is None or a.index is None:
        ap.error("give a command and --index (or --quick)")
    if a.command == "queries":
        if a.out is None:
            ap.error("queries needs --out")
        rows = make_queries(SearchIndex.open(a.index), a.n)
        a.out.write_text("".join(json.dumps(q) + "\n" for q in rows))
        print(json.dumps({"queries": len(rows), "out": str(a.out)}))
        return 0
    if a.queries is None:
        ap.error(f"{a.command} needs --queries")
    queries = _read(a.queries)
    result = latency(a.index, queries, a.slowest) if a.command == "latency" else exactness(a.index, queries)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
