"""Index build CPU time against upstream's Lucene (Anserini), side by side on the same catalog.

Usage::

    python benchmarks/index_bench.py --quick --anserini-jar JAR          # 100k products, one round
    python benchmarks/index_bench.py --anserini-jar JAR --sizes 2500000 --rounds 1 --reference
    python benchmarks/index_bench.py --quick --lucene-python VENV/bin/python

Lucene is indexed as ``../shared/tools/anchor_lucene/README.md`` does it (JsonCollection,
DefaultLuceneDocumentGenerator, one thread, ``--storePositions --storeDocvectors --storeRaw``):
``--lucene-python`` runs ``python -m pyserini.index.lucene`` with a Python that has ``pyserini==0.22.1``;
``--anserini-jar`` runs the class that module calls (``io.anserini.index.IndexCollection``) from
pyserini's Anserini fat jar (``pyserini/resources/jars/anserini-0.22.1-fatjar.jar`` in its wheel) with
``java``. shoparena runs ``build_index`` in a fresh Python. Each build is its own child process; its CPU
time (user + system, all threads) and peak RSS come from ``wait4``. The engines alternate within each
round, so both see the same machine. ``--reference`` also builds with the fast paths switched off
(``IndexLine`` validation and the Unicode tokenizer for every line, the code before issue 21) and checks
that both shoparena builds wrote byte-identical files.

Catalogs come from ``shoparena.catalog.synth`` (seed 7), reused from the work directory when present.
``--write`` replaces the section between the ``index_bench`` markers of ``docs/benchmarks.md``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from doc_sections import write_section

ROOT = Path(__file__).resolve().parents[1]
SEED = 7

_SHOPARENA = """
import sys
from shoparena.search import build_index
if sys.argv[3] == "reference":
    from shoparena.catalog import io
    from shoparena.search import analysis, index

    def parse(raw):
        line = io.parse_index_line(raw)
        return io.IndexedLine(line, line.product.model_dump_json().encode())

    def tokens(text):
        if text.isascii():
            return analysis.raw_tokens(text)
        return analysis._finish(analysis._unicode_tokens(text), text)

    io.parse_index_line_fast = parse
    index.raw_tokens = tokens
build_index(sys.argv[1], sys.argv[2], progress=False)
"""


def run_child(cmd: list[str], env: dict[str, str] | None = None) -> dict[str, float]:
    """Run ``cmd``; its wall time, CPU seconds (user + system of it and its threads) and peak RSS."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if proc.stderr:
        proc.stderr.close()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise RuntimeError(f"{cmd[0]} failed ({proc.returncode}): {err[-2000:]}")
    return {
        "cpu": usage.ru_utime + usage.ru_stime,
        "user": usage.ru_utime,
        "sys": usage.ru_stime,
        "wall": wall,
        "rss_mb": usage.ru_maxrss / 1024,
    }


def lucene_cmd(args: argparse.Namespace, coll: Path, out: Path) -> list[str]:
    opts = ["-collection", "JsonCollection", "-input", str(coll), "-index", str(out)]
    opts += ["-generator", "DefaultLuceneDocumentGenerator", "-threads", "1"]
    opts += ["-storePositions", "-storeDocvectors", "-storeRaw"]
    if args.lucene_python:
        return [
            args.lucene_python,
            "-m",
            "pyserini.index.lucene",
            *(f"-{o}" if o[0] == "-" else o for o in opts),
        ]
    return ["java", "-cp", str(args.anserini_jar), "io.anserini.index.IndexCollection", *opts]


def shoparena_cmd(catalog: Path, out: Path, mode: str) -> list[str]:
    return [sys.executable, "-c", _SHOPARENA, str(catalog), str(out), mode]


def file_hashes(index_dir: Path) -> dict[str, str]:
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(index_dir.iterdir())
        if p.is_file() and p.name != "manifest.json"
    }


def machine() -> str:
    cpu = "unknown CPU"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    mem_kb = int(Path("/proc/meminfo").read_text().split()[1])
    java = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.splitlines()
    return (
        f"{os.cpu_count()} CPUs (`nproc`), {cpu}, {mem_kb / 1024 / 1024:.0f} GiB RAM, "
        f"Python {platform.python_version()}, {java[0] if java else 'no java'}"
    )


def load() -> str:
    return " / ".join(f"{x:.1f}" for x in os.getloadavg())


def make_catalog(workdir: Path, n: int) -> Path:
    coll = workdir / f"coll_{n}"
    catalog = coll / "documents.jsonl"
    if not catalog.exists():
        from shoparena.catalog.synth import SynthConfig, synthesize_catalog

        coll.mkdir(parents=True, exist_ok=True)
        t0 = time.perf_counter()
        synthesize_catalog(SynthConfig(products=n, seed=SEED, workers=min(2, os.cpu_count() or 1)), catalog)
        print(f"[{n}] catalog generated in {time.perf_counter() - t0:.0f} s", flush=True)
    return catalog


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="100k products, one round")
    ap.add_argument("--sizes", type=int, nargs="+", help="catalog sizes (default 2.5M; --quick 100k)")
    ap.add_argument("--rounds", type=int, help="builds per engine (default 2; --quick 1)")
    ap.add_argument("--reference", action="store_true", help="also build with the fast paths off")
    lucene = ap.add_mutually_exclusive_group(required=True)
    lucene.add_argument("--anserini-jar", type=Path, help="pyserini's anserini-*-fatjar.jar")
    lucene.add_argument("--lucene-python", help="a Python with pyserini==0.22.1")
    ap.add_argument(
        "--baseline-src", type=Path, help="also build with this src/ (e.g. a worktree of the code before)"
    )
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/shoparena-index-bench"))
    ap.add_argument("--write", action="store_true", help="update docs/benchmarks.md")
    args = ap.parse_args(argv)
    sizes = args.sizes or ([100_000] if args.quick else [2_500_000])
    rounds = args.rounds or (1 if args.quick else 2)
    args.workdir.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}

    started = dt.datetime.now(dt.UTC)
    rows = []
    for n in sizes:
        catalog = make_catalog(args.workdir, n)
        runs: dict[str, list[dict[str, float]]] = {
            "lucene": [], "shoparena": [], "reference": [], "baseline": []
        }  # fmt: skip
        identical = None
        for r in range(rounds):
            order = ["lucene", "shoparena"] + (["reference"] if args.reference else [])
            order += ["baseline"] if args.baseline_src else []
            for engine in order if r % 2 == 0 else order[::-1]:
                out = args.workdir / f"{engine}_{n}"
                shutil.rmtree(out, ignore_errors=True)
                if engine == "lucene":
                    cmd = lucene_cmd(args, catalog.parent, out)
                else:
                    mode = {"shoparena": "fast", "baseline": "fast"}.get(engine, engine)
                    cmd = shoparena_cmd(catalog, out, mode)
                base_env = {**env, "PYTHONPATH": str(args.baseline_src)} if engine == "baseline" else env
                res = run_child(cmd, base_env)
                res["load"] = os.getloadavg()[0]
                runs[engine].append(res)
                print(f"[{n}] round {r + 1} {engine}: {res}", flush=True)
            if args.reference:
                same = file_hashes(args.workdir / f"shoparena_{n}") == file_hashes(
                    args.workdir / f"reference_{n}"
                )
                identical = same if identical is None else identical and same
        rows.append((n, runs, identical))

    cmd = "python benchmarks/index_bench.py " + " ".join(argv if argv is not None else sys.argv[1:])
    lines = [
        "## Index build vs Lucene (`benchmarks/index_bench.py`)",
        "",
        f"- Command: `{cmd.strip()}`",
        f"- Date: {started:%Y-%m-%d %H:%M} UTC; machine: {machine()}; load average (1/5/15 min) at the end:"
        f" {load()}",
        "- CPU s = user + system of the build process and all its threads (`wait4`); the engines alternate.",
        "",
        "| products | engine | CPU s per build | median | wall s | peak RSS MB | CPU / Lucene |",
        "|---:|---|---|---:|---:|---:|---:|",
    ]
    summary = {}
    for n, runs, identical in rows:
        lucene_cpu = statistics.median(r["cpu"] for r in runs["lucene"])
        for engine in ("lucene", "shoparena", "reference", "baseline"):
            if not runs[engine]:
                continue
            cpu = statistics.median(r["cpu"] for r in runs[engine])
            summary[(n, engine)] = cpu / lucene_cpu
            name = {
                "reference": "shoparena, fast paths off", "baseline": f"shoparena from {args.baseline_src}"
            }.get(engine, engine)  # fmt: skip
            each = " / ".join(f"{r['cpu']:.1f}" for r in runs[engine])
            lines.append(
                f"| {n:,} | {name} | {each} | {cpu:.1f}"
                f" | {statistics.median(r['wall'] for r in runs[engine]):.0f}"
                f" | {max(r['rss_mb'] for r in runs[engine]):.0f} | {cpu / lucene_cpu:.2f}× |"
            )
        if identical is not None:
            lines.append(f"| {n:,} | fast and reference index files byte-identical | {identical} | | | | |")
    text = "\n".join(lines)
    print(text)
    for (n, engine), ratio in summary.items():
        if engine == "shoparena":
            print(f"RATIO shoparena/lucene CPU at {n:,} products: {ratio:.2f}")
    if args.write:
        print(f"wrote {write_section('index_bench', text)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
