"""What a spawned ingest worker imports: the ingest, not the build's other stages nor the heavy libraries it
never calls (each worker pays for its imports in CPU, docs/benchmarks.md)."""

from __future__ import annotations

import subprocess
import sys

#: Libraries an ingest never calls: the views (datasets, pyarrow), the diversity and gate MinHash
#: (datasketch), the BM25 reference (bm25s, scipy), the CLI (typer).
NOT_IN_A_WORKER = ("datasets", "pyarrow", "datasketch", "bm25s", "scipy", "typer", "shoparena.cli")


def test_the_ingest_task_module_imports_no_heavy_library() -> None:
    probe = (
        "import sys, shoparena.corpus.sources; "
        f"print(sorted({{m.split('.')[0] if not m.startswith('shoparena') else m for m in sys.modules}} & "
        f"set({NOT_IN_A_WORKER!r})))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
