"""What a spawned worker pays before its task when the parent is the ``shoparena`` console script.

``spawn`` runs the parent's main script again in each worker (as ``__mp_main__``). The script pip writes
imports the entry point's module at its top: with ``shoparena.cli.main`` that was the whole CLI (Typer, Rich,
every command's modules) in every corpus-ingest and catalogue-synthesis worker; with ``shoparena.cli.entry``
it is one small module. Each variant is the script pip writes for that entry point, run as a command that
starts two spawned workers doing what a corpus ingest worker imports first (``shoparena.corpus.sources``);
the workers' CPU is read with ``RUSAGE_CHILDREN``.

Usage: ``python benchmarks/worker_start_bench.py --quick`` (2 runs per variant, else 5), alternating.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: The console script as pip writes it for ``module:main`` (an import at the top, then the guarded call),
#: with a ``main`` that starts the workers instead of the CLI.
SCRIPT = """import sys
from {module} import main as _entry
import json
import resource
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context


def task(_):
    import shoparena.corpus.sources  # what an ingest worker imports first
    return sorted(m for m in sys.modules if m.startswith("shoparena.cli"))


if __name__ == "__main__":
    with ProcessPoolExecutor(2, mp_context=get_context("spawn")) as pool:
        imported = list(pool.map(task, range(2)))
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(json.dumps({{"children_cpu_s": kids.ru_utime + kids.ru_stime, "cli_modules": imported[0]}}))
"""

VARIANTS = {"cli.main at the top (before)": "shoparena.cli.main", "cli.entry (now)": "shoparena.cli.entry"}


def run(module: str, folder: Path) -> dict:
    script = folder / f"shoparena_{module.rsplit('.', 1)[-1]}"
    script.write_text(SCRIPT.format(module=module))
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    runs = 2 if args.quick else 5
    load = os.getloadavg()[0]
    seconds: dict[str, list[float]] = {name: [] for name in VARIANTS}
    modules: dict[str, list[str]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(runs):
            for name, module in VARIANTS.items():
                result = run(module, Path(tmp))
                seconds[name].append(result["children_cpu_s"] / 2)
                modules[name] = result["cli_modules"]
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
        f"date {time.strftime('%Y-%m-%d %H:%M')} UTC, load average {load:.1f} at start, "
        f"{os.getloadavg()[0]:.1f} at end; {runs} runs per variant, alternating"
    )
    print("| console script | CPU s per spawned worker (each run) | mean | `shoparena.cli` modules in it |")
    print("|---|---|---:|---:|")
    for name, values in seconds.items():
        each = ", ".join(f"{v:.2f}" for v in values)
        print(f"| {name} | {each} | {sum(values) / len(values):.2f} | {len(modules[name])} |")
    print(json.dumps({name: sum(v) / len(v) for name, v in seconds.items()}))


if __name__ == "__main__":
    main()
