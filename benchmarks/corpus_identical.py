"""Are two versions' corpus builds byte-identical on the same input? Builds with this checkout's ``src/`` and
with ``--before`` (another ``src/``, e.g. ``git archive main src | tar -x -C /tmp/main``), then compares every
file of both output folders with ``cmp``: only ``config.yaml``'s ``out`` and the manifest's run id, creation
time, git sha and stages' times and config hashes (of a config with ``out``) may differ (those two files are
compared without them), and pass 1's scratch ``work/classified.jsonl`` is not compared.

Usage: ``python benchmarks/corpus_identical.py --before /tmp/main/src --races FH/race-000 FH/race-001``
(``--files F.jsonl --problems P --index I`` for a file input); exit status 1 when anything differs.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parents[1] / "src"
#: Written by the run directory, not by the build: compared without what names the run.
LOOSE = {"config.yaml", "manifest.json", "run.lock"}
#: Pass 1's scratch, read only by the same build's pass 2 (its layout may change between versions; the
#: ingest caches beside it are compared, since a resumed build reads them).
SCRATCH = {"work/classified.jsonl"}


def build(src: Path, out: Path, args: argparse.Namespace) -> None:
    config = {"out": str(out), "workers": args.workers, "run_dirs": [str(p) for p in args.races or []]}
    config |= {"files": [str(p) for p in args.files or []], "problems": [str(p) for p in args.problems or []]}
    if args.index:
        config["index"] = str(args.index)
    code = (
        "import json, sys; from shoparena.corpus import CorpusConfig, build_corpus; "
        "build_corpus(CorpusConfig(**json.loads(sys.argv[1])))"
    )
    env = {**os.environ, "PYTHONPATH": str(src)}
    subprocess.run([sys.executable, "-c", code, json.dumps(config)], env=env, check=True)


def _manifest(path: Path) -> dict:
    doc = json.loads(path.read_bytes())
    for key in ("run_id", "created"):
        doc.pop(key, None)
    doc.get("versions", {}).pop("git_sha", None)
    for stage in doc.get("stages", {}).values():  # its config hash covers ``out``
        stage.pop("config_hash", None)
        stage.pop("completed_at", None)
        stage.pop("seconds", None)
    return doc


def _config(path: Path) -> dict:
    doc = yaml.safe_load(path.read_text())
    doc.pop("out", None)
    return doc


def compare(a: Path, b: Path) -> list[str]:
    """What differs between two output folders (empty: identical up to the run's own names)."""
    files_a = {p.relative_to(a).as_posix() for p in a.rglob("*") if p.is_file()}
    files_b = {p.relative_to(b).as_posix() for p in b.rglob("*") if p.is_file()}
    problems = [f"only in one: {name}" for name in sorted(files_a ^ files_b)]
    for name in sorted(files_a & files_b):
        if name == "manifest.json":
            same = _manifest(a / name) == _manifest(b / name)
        elif name == "config.yaml":
            same = _config(a / name) == _config(b / name)
        elif name in LOOSE or name in SCRATCH:
            continue
        else:
            same = subprocess.run(["cmp", "-s", a / name, b / name]).returncode == 0
        if not same:
            problems.append(f"differs: {name}")
    return problems


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", type=Path, required=True, help="The other version's src/ folder.")
    parser.add_argument("--after", type=Path, default=HERE, help="This src/ (default: the checkout's).")
    parser.add_argument("--races", type=Path, nargs="*")
    parser.add_argument("--files", type=Path, nargs="*")
    parser.add_argument("--problems", type=Path, nargs="*")
    parser.add_argument("--index", type=Path)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--keep", type=Path, help="Build into this folder (kept) instead of a temporary one.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = args.keep or Path(tmp)
        before, after = root / "before", root / "after"
        build(args.before, before, args)
        build(args.after, after, args)
        problems = compare(before, after)
        n = sum(1 for p in after.rglob("*") if p.is_file())
    for line in problems:
        print(line)
    print(f"{n} files compared: " + ("byte-identical" if not problems else f"{len(problems)} differ"))
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
