"""Loopback load test of the search HTTP server: N concurrent keep-alive clients for a fixed time.

Usage::

    python benchmarks/search_load.py --quick                  # 50 and 200 clients, 8 s each, 20k products
    python benchmarks/search_load.py                          # 50 and 200 clients, 30 s each
    python benchmarks/search_load.py --clients 200 --workers 2 --seconds 30 --no-write

Each client holds one HTTP/1.1 keep-alive connection and sends its next request as soon as the previous
one is answered (closed loop, no think time): 70 % ``find_product`` (3 title words of a random product,
page 1-2, 30 % with a price filter), 30 % ``view_product_information`` of 1-3 ids. Every request has a
10 s timeout; the run is bounded by ``--seconds`` plus that timeout. An error is any non-200 answer, a
timeout or a dropped connection. The server is ``shoparena search serve`` in its own process; the client
is one asyncio process with a minimal HTTP/1.1 reader (so the client costs little CPU). Results replace
the section between the ``search_load`` markers of ``docs/benchmarks.md``.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
import platform
import random
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode

import numpy as np

from doc_sections import write_section
from shoparena.catalog.synth import SynthConfig, synthesize_catalog
from shoparena.search.engine import SearchIndex
from shoparena.search.index import build_index

ROOT = Path(__file__).resolve().parents[1]
REQUEST_TIMEOUT_S = 10.0


@dataclass
class LoadResult:
    clients: int
    seconds: float
    requests: int = 0
    errors: int = 0
    error_kinds: dict[str, int] = field(default_factory=dict)
    latencies_ms: list[float] = field(default_factory=list)

    def row(self) -> dict[str, float]:
        lat = np.asarray(self.latencies_ms or [0.0])
        return {
            "clients": self.clients,
            "seconds": round(self.seconds, 1),
            "requests": self.requests,
            "errors": self.errors,
            "req_per_s": round(self.requests / self.seconds, 1),
            "p50_ms": round(float(np.percentile(lat, 50)), 1),
            "p95_ms": round(float(np.percentile(lat, 95)), 1),
            "p99_ms": round(float(np.percentile(lat, 99)), 1),
            "max_ms": round(float(lat.max()), 1),
        }


def prepare_index(workdir: Path, products: int) -> tuple[Path, list[dict]]:
    """A synthetic catalog and its index (reused when present), plus sample products for queries."""
    workdir.mkdir(parents=True, exist_ok=True)
    catalog = workdir / f"catalog_{products}.jsonl"
    index = workdir / f"index_{products}"
    if not catalog.exists():
        synthesize_catalog(SynthConfig(products=products, seed=7), catalog, progress=False)
    try:
        SearchIndex.open(index)
    except (OSError, ValueError):  # missing, or written by another format version
        build_index(catalog, index, progress=False)
    rng = random.Random(5)
    with open(catalog, "rb") as fh:
        lines = [line for i, line in enumerate(fh) if i < 20_000]
    sample = [json.loads(line)["product"] for line in rng.sample(lines, min(500, len(lines)))]
    return index, sample


def make_paths(sample: list[dict], n: int, seed: int) -> list[bytes]:
    rng = random.Random(seed)
    paths = []
    for _ in range(n):
        product = rng.choice(sample)
        if rng.random() < 0.7:
            words = product["title"].split()
            params = {"q": " ".join(rng.sample(words, min(3, len(words)))), "page": str(rng.randint(1, 2))}
            if rng.random() < 0.3:
                params["price"] = f"0-{int(product['price'] * 2) + 1}"
            paths.append(f"/find_product?{urlencode(params)}".encode())
        else:
            ids = ",".join(rng.choice(sample)["product_id"] for _ in range(rng.randint(1, 3)))
            paths.append(f"/view_product_information?{urlencode({'product_ids': ids})}".encode())
    return paths


async def _read_response(reader: asyncio.StreamReader) -> int:
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    length = 0
    for line in head.split(b"\r\n")[1:]:
        if line[:15].lower() == b"content-length:":
            length = int(line[15:])
    await reader.readexactly(length)
    return status


async def _client(port: int, paths: list[bytes], stop_at: float, result: LoadResult) -> None:
    reader = writer = None
    i = 0
    while time.monotonic() < stop_at:
        path = paths[i % len(paths)]
        i += 1
        started = time.perf_counter()
        try:
            if writer is None:
                reader, writer = await asyncio.wait_for(
                    asyncio.open_connection("127.0.0.1", port), REQUEST_TIMEOUT_S
                )
            writer.write(b"GET " + path + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            status = await asyncio.wait_for(_read_response(reader), REQUEST_TIMEOUT_S)
            kind = None if status == 200 else f"HTTP {status}"
        except (TimeoutError, OSError, asyncio.IncompleteReadError, ValueError) as exc:
            kind = type(exc).__name__
            if writer is not None:
                writer.close()
            reader = writer = None
        result.requests += 1
        result.latencies_ms.append((time.perf_counter() - started) * 1000)
        if kind is not None:
            result.errors += 1
            result.error_kinds[kind] = result.error_kinds.get(kind, 0) + 1
    if writer is not None:
        writer.close()


async def run_load(port: int, clients: int, seconds: float, paths: list[bytes]) -> LoadResult:
    result = LoadResult(clients=clients, seconds=seconds)
    started = time.monotonic()
    stop_at = started + seconds
    shards = [paths[i::clients] or paths for i in range(clients)]
    await asyncio.gather(*(_client(port, shards[i], stop_at, result) for i in range(clients)))
    result.seconds = time.monotonic() - started
    return result


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(index: Path, port: int, workers: int) -> subprocess.Popen[bytes]:
    cmd = [sys.executable, "-m", "shoparena.cli.main", "search", "serve", "--index", str(index)]
    cmd += ["--port", str(port), "--workers", str(workers)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                s.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                if b" 200 " in s.recv(100):
                    return proc
        except OSError:
            time.sleep(0.2)
        if proc.poll() is not None:
            raise RuntimeError(f"server exited: {proc.stderr.read().decode()[-2000:] if proc.stderr else ''}")
    proc.kill()
    raise RuntimeError("server did not start")


def write_doc(rows: list[dict], args: argparse.Namespace) -> None:
    cpu = platform.processor() or platform.machine()
    load = os.getloadavg()[0]
    lines = [
        f"- Command: `python benchmarks/search_load.py {' '.join(sys.argv[1:])}`",
        f"- Date: {dt.date.today().isoformat()}; machine: {os.cpu_count()} CPUs (`nproc`), {cpu}, "
        f"Python {platform.python_version()}; load average at the end {load:.1f} (shared machine)",
        f"- Server: `shoparena search serve --workers {args.workers}` on a {args.products:,}-product "
        "synthetic index (seed 7), loopback; clients closed-loop keep-alive, 10 s request timeout.",
        "",
        "| clients | seconds | requests | errors | req/s | p50 ms | p95 ms | p99 ms | max ms |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['clients']} | {r['seconds']} | {r['requests']:,} | {r['errors']} | {r['req_per_s']} | "
            f"{r['p50_ms']} | {r['p95_ms']} | {r['p99_ms']} | {r['max_ms']} |"
        )
    title = "## Search server under load (`benchmarks/search_load.py`)"
    write_section("search_load", "\n".join(lines), heading=title)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="8 s per client count")
    parser.add_argument("--clients", type=int, nargs="+", default=[50, 200])
    parser.add_argument("--seconds", type=float, default=None)
    parser.add_argument("--products", type=int, default=20_000)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/shoparena-search-load"))
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    seconds = args.seconds or (8.0 if args.quick else 30.0)
    index, sample = prepare_index(args.workdir, args.products)
    paths = make_paths(sample, 20_000, seed=11)
    port = _free_port()
    server = start_server(index, port, args.workers)
    rows = []
    try:
        asyncio.run(run_load(port, 10, 2.0, paths))  # warm-up: page cache, analyzer caches
        for clients in args.clients:
            result = asyncio.run(run_load(port, clients, seconds, paths))
            row = result.row()
            rows.append(row)
            print(json.dumps({**row, "error_kinds": result.error_kinds}), flush=True)
    finally:
        server.terminate()
        server.wait(timeout=30)
    if not args.no_write:
        write_doc(rows, args)


if __name__ == "__main__":
    main()
