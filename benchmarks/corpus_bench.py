"""Corpus build throughput vs ``orjson`` parsing the same bytes, and peak RSS at 1x vs 10x input.

Input: ORO envelopes (copies of real firehose envelopes when ``--source`` names a firehose race directory,
else a built-in envelope with agent-side proxy calls), each copy under a fresh problem id. Each build runs in
its own process (``ru_maxrss``). Usage: ``python benchmarks/corpus_bench.py --quick`` (``--n`` trajectories).

``--races DIR...``: the build over real firehose race directories (envelopes, trusted proxy logs, verdicts,
scoring), against the orjson floor of every JSONL file in them (read and parse every line, best of 3).
CPU seconds are the build process's and its ingest processes' (``RUSAGE_CHILDREN``); ``--workers`` sets
``CorpusConfig.workers`` (default: the build's own, one per usable CPU).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "corpus"))


def _seed_envelopes(source: Path | None) -> list[dict]:
    if source is not None:
        lines = []
        for out in sorted(source.glob("agents/*/output.jsonl")):
            lines += [orjson.loads(x) for x in out.read_bytes().splitlines() if x.strip()]
        return lines
    from test_fuzz_filter import ENVELOPE

    return [ENVELOPE]


def write_input(path: Path, n: int, seeds: list[dict]) -> int:
    with open(path, "wb") as fh:
        for i in range(n):
            env = dict(seeds[i % len(seeds)])
            env["problem_id"] = f"bench-{i}"
            fh.write(orjson.dumps(env) + b"\n")
    return path.stat().st_size


def _anon_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("RssAnon:"):
            return int(line.split()[1]) / 1024
    return 0.0


def orjson_seconds(path: Path) -> tuple[float, float]:
    """Best of 3, wall and CPU seconds: read the file and parse every line with orjson (the baseline of the
    target ratio)."""
    best, best_cpu = float("inf"), float("inf")
    for _ in range(3):
        t0, c0 = time.perf_counter(), time.process_time()
        for line in path.read_bytes().splitlines():
            orjson.loads(line)
        best, best_cpu = min(best, time.perf_counter() - t0), min(best_cpu, time.process_time() - c0)
    return best, best_cpu


def _cpu_with_children() -> float:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def races_child(out: str, workers: str, *races: str) -> None:
    from shoparena.corpus import CorpusConfig, build_corpus

    wall, cpu = time.perf_counter(), _cpu_with_children()
    # No workers key unless given: the code before issue 35 has no such field (compared with --baseline).
    extra = {"workers": int(workers)} if workers != "-" else {}
    config = CorpusConfig(run_dirs=[Path(r) for r in races], out=Path(out), **extra)
    report = build_corpus(config)
    wall, cpu = time.perf_counter() - wall, _cpu_with_children() - cpu
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    # A CorpusReport model (a plain dict from code before it): the same funnel either way.
    funnel = report["funnel"] if isinstance(report, dict) else report.funnel.model_dump(mode="json")
    print(json.dumps({"build_s": wall, "build_cpu_s": cpu, "rss_mib": rss, "ingest_rss_mib": kids,
                      "input": funnel["input"], "records": funnel["records"]}))  # fmt: skip


def races_floor(races: list[Path]) -> tuple[float, float, int, int]:
    """Best of 3 (wall, CPU) to read and parse every line of every JSONL file of the races; files, bytes."""
    files = sorted(p for race in races for p in race.rglob("*.jsonl"))
    best, best_cpu = float("inf"), float("inf")
    for _ in range(3):
        t0, c0 = time.perf_counter(), time.process_time()
        for path in files:
            for line in path.read_bytes().splitlines():
                if line.strip():
                    orjson.loads(line)
        best, best_cpu = min(best, time.perf_counter() - t0), min(best_cpu, time.process_time() - c0)
    return best, best_cpu, len(files), sum(p.stat().st_size for p in files)


def races_main(races: list[Path], workers: int | None) -> None:
    load_at_start = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.run(
            [sys.executable, __file__, "--races-child", str(Path(tmp) / "c"), str(workers or "-"),
             *map(str, races)],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    wall, cpu, files, size = races_floor(races)
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
        f"date {time.strftime('%Y-%m-%d %H:%M')} UTC, load average {load_at_start[0]:.1f} at start, "
        f"{os.getloadavg()[0]:.1f} at end"
    )
    print(
        f"{len(races)} races, {result['input']} trajectories, {files} JSONL files, {size / 2**20:.1f} MiB; "
        f"build {result['build_s']:.2f} s wall, {result['build_cpu_s']:.2f} CPU s "
        f"(workers {workers or 'auto'}); "
        f"orjson floor {wall:.3f} s wall, {cpu:.3f} CPU s; CPU ratio {result['build_cpu_s'] / cpu:.1f}x, "
        f"wall ratio {result['build_s'] / wall:.1f}x; peak RSS build {result['rss_mib']:.0f} MiB, "
        f"largest ingest process {result['ingest_rss_mib']:.0f} MiB; records {result['records']}"
    )


def child(path: str, out: str) -> None:
    import threading

    from shoparena.corpus import CorpusConfig, build_corpus

    peak_anon = [0.0]
    running = True

    def sample() -> None:  # peak anonymous memory (heap), apart from file-backed pages the OS can drop
        while running:
            peak_anon[0] = max(peak_anon[0], _anon_mib())
            time.sleep(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    marks: dict[str, float] = {}

    def progress(message: str) -> None:  # stage ends (CPU time), from the build's own progress messages
        marks.setdefault(message.split()[0], time.process_time())

    started, cpu_started = time.perf_counter(), time.process_time()
    build_corpus(CorpusConfig(files=[Path(path)], out=Path(out)), progress=progress)
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    running = False
    sampler.join()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    ingest, pass2 = marks.get("filtering", cpu_started), marks.get("writing", cpu_started)
    stages = {
        "ingest": ingest - cpu_started,
        "pass 1 + split": pass2 - ingest,
        "records + views": cpu_started + cpu - pass2,
    }
    print(
        json.dumps(
            {
                "build_s": seconds,
                "build_cpu_s": cpu,
                "rss_mib": rss,
                "anon_mib": peak_anon[0],
                "stages": stages,
            }
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--n", type=int, default=None)
    parser.add_argument("--source", type=Path, default=None, help="A firehose race directory.")
    parser.add_argument("--child", nargs=2)
    parser.add_argument("--races", type=Path, nargs="+", help="Firehose race directories (real input).")
    parser.add_argument("--workers", type=int, default=None, help="With --races: CorpusConfig.workers.")
    parser.add_argument("--races-child", nargs="+")
    parser.add_argument("--parse", type=Path, help="Print the orjson baseline of one file (own process).")
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    if args.races_child:
        races_child(*args.races_child)
        return
    if args.races:
        races_main(args.races, args.workers)
        return
    if args.parse:
        wall, cpu = orjson_seconds(args.parse)
        print(json.dumps({"orjson_s": wall, "orjson_cpu_s": cpu}))
        return
    n = args.n or (200 if args.quick else 1804)
    load_at_start = os.getloadavg()[0]
    seeds = _seed_envelopes(args.source)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for scale in (1, 10):
            path = Path(tmp) / f"in-{scale}.jsonl"
            size = write_input(path, n * scale, seeds)
            proc = subprocess.run(
                [sys.executable, __file__, "--child", str(path), str(Path(tmp) / f"c{scale}")],
                capture_output=True,
                text=True,
                check=True,
            )
            result = json.loads(proc.stdout.strip().splitlines()[-1])
            # The baseline runs in its own process so its buffers never count in the build's memory.
            baseline = subprocess.run(
                [sys.executable, __file__, "--parse", str(path)], capture_output=True, text=True, check=True
            )
            result.update(json.loads(baseline.stdout.strip().splitlines()[-1]))
            result.update(scale=scale, trajectories=n * scale, mib=round(size / 2**20, 1))
            rows.append(result)
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
        f"date {time.strftime('%Y-%m-%d %H:%M')} UTC, load average {load_at_start:.1f} at start, "
        f"{os.getloadavg()[0]:.1f} at end"
    )
    # CPU seconds too: on a shared machine wall time measures the neighbours as much as the build.
    print(
        "| input | trajectories | MiB | build s | orjson s | ratio | build CPU s | orjson CPU s | CPU ratio "
        "| peak RSS MiB | peak anon MiB |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        ratio = r["build_s"] / r["orjson_s"] if r["orjson_s"] else float("inf")
        cpu_ratio = r["build_cpu_s"] / r["orjson_cpu_s"] if r["orjson_cpu_s"] else float("inf")
        cells = [
            f"{r['scale']}x",
            r["trajectories"],
            r["mib"],
            f"{r['build_s']:.2f}",
            f"{r['orjson_s']:.3f}",
            f"{ratio:.1f}x",
            f"{r['build_cpu_s']:.2f}",
            f"{r['orjson_cpu_s']:.3f}",
            f"{cpu_ratio:.1f}x",
            f"{r['rss_mib']:.0f}",
            f"{r['anon_mib']:.0f}",
        ]
        print("| " + " | ".join(str(c) for c in cells) + " |")
    for r in rows:
        shares = ", ".join(
            f"{k} {v:.1f} s ({100 * v / r['build_cpu_s']:.0f} %)" for k, v in r["stages"].items()
        )
        print(f"{r['scale']}x stages (CPU): {shares}")
    print(
        f"RSS 10x / 1x: {rows[1]['rss_mib'] / rows[0]['rss_mib']:.2f}; "
        f"anonymous 10x / 1x: {rows[1]['anon_mib'] / rows[0]['anon_mib']:.2f}"
    )


if __name__ == "__main__":
    main()
