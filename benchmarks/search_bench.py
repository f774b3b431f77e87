"""Benchmark the BM25 search engine: build time, index size, server RSS, latency, QPS, recall.

Usage::

    .venv/bin/python benchmarks/search_bench.py --quick          # 20k and 200k products
    .venv/bin/python benchmarks/search_bench.py                  # 100k and 2.5M products
    .venv/bin/python benchmarks/search_bench.py --sizes 50000 --workdir /tmp/sb --no-write

Catalogs come from ``shoparena.catalog.synth`` (an existing ``catalog_N.jsonl`` in the work directory is
reused; indexes are always rebuilt). Queries are 3-6 words of a random product's title (sometimes with its
brand); 40 % carry a price filter, 20 % a service filter, 10 % a sort. Recall is the share of queries whose
source product is inside the 50-survivor window; "feasible" counts only queries whose filters the source
passes. The smallest size also runs the same queries through rank_bm25's BM25Okapi (same analyzer) for a
latency ratio. Results replace the section between the ``search_bench`` markers of ``docs/benchmarks.md``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import random
import socket
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from doc_sections import write_section
from shoparena.catalog.synth import SynthConfig, synthesize_catalog
from shoparena.search.analysis import LuceneEnglishAnalyzer
from shoparena.search.engine import SearchIndex, parse_price, parse_service
from shoparena.search.index import SERVICE_BITS, build_index

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "benchmarks.md"
SERVICES = ("official", "freeShipping", "COD", "flashsale")

# --- catalogs ---------------------------------------------------------------------------------------------


CATALOG_SEED = 7
CATALOG_SOURCE = f"`shoparena.catalog.synth.synthesize_catalog` (seed {CATALOG_SEED})"


def make_catalog(path: Path, n: int) -> str:
    """Generate a catalog with the project's generator; returns a description of it for the report."""
    workers = min(2, os.cpu_count() or 1)
    synthesize_catalog(SynthConfig(products=n, seed=CATALOG_SEED, workers=workers), path, progress=False)
    return CATALOG_SOURCE


# --- queries ---------------------------------------------------------------------------------------------


@dataclass
class Query:
    q: str
    source: int
    price: str | None = None
    service: str | None = None
    sort: str | None = None
    feasible: bool = True
    params: dict[str, str] = field(default_factory=dict)


def make_queries(index: SearchIndex, n: int, seed: int = 11) -> list[Query]:
    """Realistic queries: 3-6 title words of a random product, sometimes with its brand, some filters."""
    rng = random.Random(seed)
    out: list[Query] = []
    while len(out) < n:
        src = rng.randrange(len(index))
        doc = index.product_dict(src)
        words = [w for w in doc["title"].split() if any(c.isalnum() for c in w)]
        if len(words) < 2:
            continue
        k = min(len(words), rng.randint(3, 6))
        start = rng.randrange(0, len(words) - k + 1)
        picked = words[start : start + k]
        if doc["brand"] and rng.random() < 0.3 and doc["brand"].lower() not in " ".join(picked).lower():
            picked = [doc["brand"], *picked]
        query = Query(" ".join(picked), src)
        price = float(doc["price"])
        if rng.random() < 0.4:
            r = rng.random()
            if r < 0.6:
                query.price = f"{int(price * rng.uniform(0.5, 1.0))}-{int(price * rng.uniform(1.0, 2.0)) + 1}"
            elif r < 0.8:
                query.price = f"{int(price * rng.uniform(0.3, 1.0))}-"
            else:
                query.price = f"-{int(price * rng.uniform(0.2, 3.0)) + 1}"
        if rng.random() < 0.2:
            own = list(doc["service"])
            query.service = rng.choice(own) if own and rng.random() < 0.8 else rng.choice(SERVICES)
        if rng.random() < 0.1:
            query.sort = rng.choice(("order", "priceasc", "pricedesc"))
        bounds = parse_price(query.price)
        if bounds is not None:
            lo, hi = bounds
            query.feasible &= not ((lo is not None and price < lo) or (hi is not None and price > hi))
        need = parse_service(query.service)
        mask = sum(SERVICE_BITS[s] for s in doc["service"])
        query.feasible &= (mask & need) == need
        query.params = {"q": query.q, "page": "1"}
        for key in ("price", "service", "sort"):
            if getattr(query, key):
                query.params[key] = getattr(query, key)
        out.append(query)
    return out


# --- measurements ----------------------------------------------------------------------------------------


def pct(values: list[float], p: float) -> float:
    return float(np.percentile(np.asarray(values), p)) if values else float("nan")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def vm_rss_mb(pid: int, field: str = "VmRSS") -> float:
    """A memory figure of /proc/PID/status in MB (VmRSS counts touched pages of the mapped index too)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def dir_mb(path: Path) -> float:
    return sum(p.stat().st_size for p in path.iterdir() if p.is_file()) / 1e6


def measure_inprocess(index: SearchIndex, queries: list[Query]) -> dict[str, float]:
    for q in queries[:50]:  # warm the page cache and the analyzer cache
        index.find_product_dicts(q.q, 1, None, q.price, q.sort, q.service)
    lat = []
    hits = feasible_hits = feasible = 0
    for q in queries:
        t0 = time.perf_counter()
        index.find_product_dicts(q.q, 1, None, q.price, q.sort, q.service)
        lat.append((time.perf_counter() - t0) * 1e3)
        window = index.find_window(q.q, None, q.price, q.sort, q.service)
        found = bool(np.any(window == q.source))
        hits += found
        if q.feasible:
            feasible += 1
            feasible_hits += found
    return {
        "p50": pct(lat, 50),
        "p95": pct(lat, 95),
        "p99": pct(lat, 99),
        "mean": statistics.fmean(lat),
        "recall": hits / len(queries),
        "recall_feasible": feasible_hits / max(feasible, 1),
        "feasible": feasible / len(queries),
    }


def measure_http(index_dir: Path, queries: list[Query]) -> dict[str, float]:
    import httpx

    port = free_port()
    cmd = [sys.executable, "-m", "shoparena.cli.main", "search", "serve", "--index", str(index_dir)]
    cmd += ["--host", "127.0.0.1", "--port", str(port)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 120
        while True:
            try:
                if httpx.get(f"{base}/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if proc.poll() is not None or time.time() > deadline:
                raise RuntimeError(f"server did not start: {proc.stderr.read().decode()[-2000:]}")
            time.sleep(0.2)
        rss_idle = vm_rss_mb(proc.pid)
        lat = []
        with httpx.Client(base_url=base, timeout=30) as client:
            for q in queries[:50]:
                client.get("/find_product", params=q.params)
            for q in queries:
                t0 = time.perf_counter()
                r = client.get("/find_product", params=q.params)
                lat.append((time.perf_counter() - t0) * 1e3)
                r.raise_for_status()
        rss_loaded = vm_rss_mb(proc.pid)
        anon_loaded = vm_rss_mb(proc.pid, "RssAnon")

        def qps(threads: int) -> float:
            per = [queries[i::threads] for i in range(threads)]

            def worker(items: list[Query]) -> None:
                with httpx.Client(base_url=base, timeout=30) as client:
                    for q in items:
                        client.get("/find_product", params=q.params).raise_for_status()

            ts = [threading.Thread(target=worker, args=(p,)) for p in per]
            t0 = time.perf_counter()
            for t in ts:
                t.start()
            for t in ts:
                t.join()
            return len(queries) / (time.perf_counter() - t0)

        return {
            "p50": pct(lat, 50),
            "p95": pct(lat, 95),
            "p99": pct(lat, 99),
            "rss_idle": rss_idle,
            "rss_loaded": rss_loaded,
            "anon_loaded": anon_loaded,
            "qps1": qps(1),
            "qps2": qps(2),
        }
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()


def measure_rank_bm25(catalog_index: SearchIndex, queries: list[Query], limit: int) -> dict[str, float]:
    """rank_bm25's BM25Okapi over the same documents and analyzer: unfiltered top-50 latency."""
    from rank_bm25 import BM25Okapi

    analyzer = LuceneEnglishAnalyzer()
    corpus = []
    for i in range(len(catalog_index)):
        doc = catalog_index.product_dict(i)
        sku = " ".join(dict.fromkeys(v for o in doc["sku_options"].values() for v in o.values()))
        attrs = " ".join(dict.fromkeys(v for vs in doc["attributes"].values() for v in vs))
        corpus.append(analyzer.analyze("\n".join([doc["title"], sku, attrs])) or [""])
    t0 = time.perf_counter()
    okapi = BM25Okapi(corpus, k1=0.9, b=0.4)
    build = time.perf_counter() - t0
    sample = queries[:limit]
    ours, theirs = [], []
    for q in sample:
        t0 = time.perf_counter()
        catalog_index.search(q.q, 50)
        ours.append((time.perf_counter() - t0) * 1e3)
        t0 = time.perf_counter()
        scores = okapi.get_scores(analyzer.analyze(q.q))
        np.argpartition(-scores, min(50, len(scores) - 1))[:50]
        theirs.append((time.perf_counter() - t0) * 1e3)
    return {
        "queries": len(sample),
        "build_s": build,
        "ours_p50": pct(ours, 50),
        "theirs_p50": pct(theirs, 50),
        "theirs_p95": pct(theirs, 95),
        "ratio_p50": pct(theirs, 50) / max(pct(ours, 50), 1e-9),
        "ratio_mean": statistics.fmean(theirs) / max(statistics.fmean(ours), 1e-9),
    }


# --- report ----------------------------------------------------------------------------------------------


def machine() -> str:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
        mem_kb = int(Path("/proc/meminfo").read_text().split()[1])
        mem = f"{mem_kb / 1024 / 1024:.0f} GiB RAM"
    except OSError:
        mem = "unknown RAM"
    return f"{os.cpu_count()} CPUs (`nproc`), {cpu}, {mem}, Python {platform.python_version()}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="20k and 200k products instead of 100k and 2.5M")
    ap.add_argument("--sizes", type=int, nargs="+", help="catalog sizes (overrides --quick)")
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/shoparena-search-bench"))
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--rank-bm25-queries", type=int, default=200, help="queries timed through rank_bm25")
    ap.add_argument("--no-write", action="store_true", help="do not update docs/benchmarks.md")
    args = ap.parse_args(argv)
    sizes = args.sizes or ([20_000, 200_000] if args.quick else [100_000, 2_500_000])
    args.workdir.mkdir(parents=True, exist_ok=True)

    rows = []
    generator = ""
    rank = None
    for n in sizes:
        catalog = args.workdir / f"catalog_{n}.jsonl"
        if not catalog.exists():
            t0 = time.perf_counter()
            generator = make_catalog(catalog, n)
            print(f"[{n}] catalog generated in {time.perf_counter() - t0:.1f}s by {generator}", flush=True)
        else:
            # Reused only when an earlier run of this script wrote it, i.e. with the same generator and seed.
            generator = generator or f"{CATALOG_SOURCE}, reused from the workdir"
        index_dir = args.workdir / f"index_{n}"
        stats = build_index(catalog, index_dir, progress=False)
        print(f"[{n}] index built in {stats.build_seconds:.1f}s, {dir_mb(index_dir):.0f} MB", flush=True)
        index = SearchIndex.open(index_dir)
        queries = make_queries(index, args.queries)
        inproc = measure_inprocess(index, queries)
        print(f"[{n}] in-process {inproc}", flush=True)
        http = measure_http(index_dir, queries)
        print(f"[{n}] http {http}", flush=True)
        if n == min(sizes):
            rank = measure_rank_bm25(index, queries, args.rank_bm25_queries)
            print(f"[{n}] rank_bm25 {rank}", flush=True)
        rows.append((n, stats, dir_mb(index_dir), inproc, http))

    cmd = "python benchmarks/search_bench.py " + " ".join(argv if argv is not None else sys.argv[1:])
    lines = [
        "## Search engine (`benchmarks/search_bench.py`)",
        "",
        f"- Command: `{cmd.strip()}`",
        f"- Date: {dt.date.today().isoformat()}; machine: {machine()}; load average at the end"
        f" {os.getloadavg()[0]:.1f} (other jobs running make tail latencies noisy: 5 ms scheduler stalls)",
        f"- Catalogs: {generator}; {args.queries} queries per size (3-6 title words, 30% with brand;"
        " 40% price filter, 20% service filter, 10% sort); retrieve_k 10 000 (ORO).",
        "",
        "| products | build s | index MB | postings | server RSS idle / loaded (anon) MB"
        " | in-proc p50 / p95 / p99 ms | HTTP p50 / p95 / p99 ms | QPS 1 / 2 threads"
        " | recall@50 | recall@50 feasible |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for n, stats, mb, ip, ht in rows:
        lines.append(
            f"| {n:,} | {stats.build_seconds:.1f} | {mb:.0f} | {stats.postings:,} "
            f"| {ht['rss_idle']:.0f} / {ht['rss_loaded']:.0f} ({ht['anon_loaded']:.0f}) "
            f"| {ip['p50']:.2f} / {ip['p95']:.2f} / {ip['p99']:.2f} "
            f"| {ht['p50']:.2f} / {ht['p95']:.2f} / {ht['p99']:.2f} "
            f"| {ht['qps1']:.0f} / {ht['qps2']:.0f} | {ip['recall']:.3f} "
            f"| {ip['recall_feasible']:.3f} ({ip['feasible']:.0%} feasible) |"
        )
    if rank is not None:
        lines += [
            "",
            f"rank_bm25 `BM25Okapi` on the {min(sizes):,}-product catalog (same analyzer, unfiltered top 50,"
            f" {rank['queries']} queries): p50 {rank['theirs_p50']:.1f} ms vs ours {rank['ours_p50']:.2f} ms"
            f" — **{rank['ratio_p50']:.0f}× slower** at p50 ({rank['ratio_mean']:.0f}× by mean);"
            f" its in-memory build took {rank['build_s']:.1f} s.",
        ]
    text = "\n".join(lines)
    print(text)
    if not args.no_write:
        write_section("search_bench", text)
        print(f"wrote {DOC}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
