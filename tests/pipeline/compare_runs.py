"""Compare two pipeline run directories file by file, apart from run paths, ids and timings (the behaviour
check of a refactor: the tiny config run on the old and the new commit must agree).

    PYTHONPATH=<old checkout>/src python tests/pipeline/compare_runs.py run OLD_RUN   # pipeline_tiny.TINY
    PYTHONPATH=<new checkout>/src python tests/pipeline/compare_runs.py run NEW_RUN
    python tests/pipeline/compare_runs.py compare OLD_RUN NEW_RUN [-v]

Normalised before comparing: each run directory's path and name (-> ``RUN``), random run and completion
ids, and JSON keys that hold timings, wall-clock stamps, nonces or content fingerprints of files that embed
the run path or a timing (index manifests, identity input hashes, dataset fingerprints). JSONL files are
compared as multisets of lines (concurrent episodes finish in any order); Parquet and Arrow files by their
rows. Everything else byte for byte. Exit 1 when a file differs or exists in one run only (a stage's
``work/ingest-run-<input hash>.jsonl`` cache is named by its input's content hash, so it is listed, not
counted).
"""

from __future__ import annotations

import difflib
import json
import re
import sys
from pathlib import Path
from typing import Any

VOLATILE = {
    "created", "completed_at", "seconds", "started", "finished", "timestamp", "time", "elapsed_s", "run_id",
    "pid", "host", "hostname", "wall_s", "started_at", "finished_at", "updated", "duration_s", "generate_s",
    "episodes_per_s", "tokens_per_s", "execution_time", "elapsed", "claimed_at", "train_runtime",
    "train_samples_per_second", "train_steps_per_second", "date", "written_at", "duration_ms",
    "build_seconds", "completion_tokens_per_s", "_fingerprint", "index_bytes", "throughput",
    "products_per_second", "train_seconds", "sha256", "inputs_hash", "inputs", "data_hash", "config_hash",
    "tool_nonces", "num_bytes",
}  # fmt: skip
SKIP = {"run.lock"}


def norm_text(text: str, root: Path) -> str:
    text = text.replace(str(root), "RUN").replace(root.name, "RUN")
    text = re.sub(r"\b(run|ingest-run)-[0-9a-f]{12,}\b", r"\1-ID", text)
    text = re.sub(r"chatcmpl-[0-9a-f]+", "chatcmpl-ID", text)
    text = re.sub(r"num_bytes: \d+", "num_bytes: N", text)
    text = re.sub(r"<td>run id</td><td>[0-9a-f]+</td>", "<td>run id</td><td>ID</td>", text)
    head, sep, provenance = text.partition('<section id="provenance">')
    return head + sep + re.sub(r'<td class="num">[0-9.]+</td>', '<td class="num">S</td>', provenance)


def strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: strip(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [strip(v) for v in value]
    return value


def load(path: Path, root: Path) -> tuple[str, Any]:
    if path.suffix in (".parquet", ".arrow"):
        import pyarrow as pa
        import pyarrow.parquet as pq

        if path.suffix == ".parquet":
            rows = pq.read_table(path).to_pylist()
        else:
            with pa.memory_map(str(path)) as source:
                try:
                    rows = pa.ipc.open_stream(source).read_all().to_pylist()
                except pa.ArrowInvalid:
                    rows = pa.ipc.open_file(source).read_all().to_pylist()
        return "table", json.loads(norm_text(json.dumps(rows, default=str), root))
    if path.name == "training_args.bin":  # transformers' pickled TrainingArguments (output_dir is in the run)
        import torch

        args = torch.load(path, weights_only=False)
        return "json", strip(json.loads(norm_text(json.dumps(args.to_dict(), default=str), root)))
    data = path.read_bytes()
    try:
        text = data.decode()
    except UnicodeDecodeError:  # a pickle or weights: only the run path may differ
        return "bytes", data.replace(str(root).encode(), b"RUN")
    text = norm_text(text, root)
    try:
        if path.suffix == ".json":
            return "json", strip(json.loads(text))
        if path.suffix == ".jsonl":
            rows = [strip(json.loads(line)) for line in text.split("\n") if line.strip()]
            return "jsonl", sorted(json.dumps(row, sort_keys=True) for row in rows)
    except ValueError:
        pass
    return "text", text


def compare(a: Path, b: Path, verbose: bool) -> int:
    a, b = a.resolve(), b.resolve()
    files_a = {p.relative_to(a).as_posix() for p in a.rglob("*") if p.is_file() and p.name not in SKIP}
    files_b = {p.relative_to(b).as_posix() for p in b.rglob("*") if p.is_file() and p.name not in SKIP}
    differ = [rel for rel in sorted(files_a & files_b) if load(a / rel, a) != load(b / rel, b)]
    only = sorted(files_a ^ files_b)
    print(f"files compared: {len(files_a & files_b)}; identical after normalisation: "
          f"{len(files_a & files_b) - len(differ)}; differ: {len(differ)}")  # fmt: skip
    for rel in differ:
        print("DIFFER", rel)
        if verbose:
            (_, x), (_, y) = load(a / rel, a), load(b / rel, b)
            lines = difflib.unified_diff(str(x).splitlines(), str(y).splitlines(), lineterm="", n=0)
            print("  ", [line[:200] for line in lines][2:6])
    for rel in only:
        print("ONLY IN ONE", rel)
    counted = [rel for rel in only if not re.search(r"/work/ingest-run-[0-9a-f]+\.jsonl$", rel)]
    return 1 if differ or counted else 0


def run(out: Path) -> None:
    import io

    from pipeline_tiny import TINY
    from rich.console import Console

    from shoparena.pipeline import PipelineConfig, run_pipeline
    from shoparena.report import render_report

    console = Console(file=io.StringIO(), width=120)
    # A checkout from before the renderer was handed over reads report=<function> as report=True.
    summary = run_pipeline(
        PipelineConfig.model_validate(TINY), out, console=console, strict=True, report=render_report
    )
    print({name: stage["status"] for name, stage in summary["stages"].items()})


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parent))
    if sys.argv[1:2] == ["run"]:
        run(Path(sys.argv[2]))
    else:
        sys.exit(compare(Path(sys.argv[2]), Path(sys.argv[3]), "-v" in sys.argv))
