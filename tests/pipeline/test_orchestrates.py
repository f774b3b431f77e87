"""The pipeline orchestrates: the work it runs is the library's, and the report is rendered by the command.

Every import counts (module level or inside a function), as in tests/test_layers.py.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PIPELINE = ROOT / "src" / "shoparena" / "pipeline"
MOVED = {"train_policy", "evaluate_policy", "base_model_path", "torch_threads"}


def _imports(path: Path) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.update({node.module, *(f"{node.module}.{a.name}" for a in node.names)})
    return out


def test_the_pipeline_imports_no_report_code():
    found = {
        f.name: sorted(m for m in _imports(f) if m.startswith("shoparena.report"))
        for f in PIPELINE.glob("*.py")
    }
    assert {name: mods for name, mods in found.items() if mods} == {}


def test_training_and_evaluation_are_not_defined_in_the_pipeline():
    defined = {
        (f.name, node.name)
        for f in PIPELINE.glob("*.py")
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8")))
        if isinstance(node, ast.FunctionDef) and node.name in MOVED
    }
    assert defined == set()


def test_no_benchmark_imports_the_pipeline_stages_module():
    users = sorted(
        f.name for f in (ROOT / "benchmarks").glob("*.py") if "shoparena.pipeline.stages" in _imports(f)
    )
    assert users == []
