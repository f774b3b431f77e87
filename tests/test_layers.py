"""The layer order of docs/architecture.md holds: no module imports a higher layer, no import circles.

Every import counts, also those inside functions: a lazy import still couples the layers.
"""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "shoparena"

#: Lowest first. Keep in step with docs/architecture.md.
LAYERS: list[set[str]] = [
    {"records", "runs", "jsonl", "models", "py", "__init__"},
    {"catalog"},
    {"search", "formats"},
    {"scoring", "env", "agent_sdk"},
    {"agents"},
    {"llm"},
    {"suites", "judge"},
    {"arena"},
    {"corpus"},
    {"train", "eval"},
    {"report", "pipeline", "integrations", "viewer"},
    {"cli"},
]
RANK = {name: i for i, names in enumerate(LAYERS) for name in names}


def _module_name(src: Path, file: Path) -> str:
    parts = list(file.relative_to(src).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(["shoparena", *parts])


def import_edges(src: Path) -> dict[str, set[str]]:
    """module -> the shoparena modules it imports (``from pkg import submodule`` gives the submodule)."""
    files = {_module_name(src, f): f for f in sorted(src.rglob("*.py"))}
    edges: dict[str, set[str]] = {}
    for module, file in files.items():
        is_pkg = file.name == "__init__.py"
        targets: set[str] = set()
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = module.split(".")
                    base = base[: len(base) - node.level + (1 if is_pkg else 0)]
                    target = ".".join([*base, *([node.module] if node.module else [])])
                else:
                    target = node.module or ""
                subs = [f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in files]
                targets.update(subs or [target])
        edges[module] = {t for t in targets if t.split(".")[0] == "shoparena" and t != module}
    return edges


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def upward_imports(src: Path) -> list[str]:
    """``'a imports b'`` for every import of a higher layer (or of a package not placed in a layer)."""
    out = []
    for module, targets in import_edges(src).items():
        for target in sorted(targets):
            here, there = _layer(module), _layer(target)
            if here not in RANK or there not in RANK:
                out.append(f"{module} imports {target}: package not placed in the layer order")
            elif RANK[there] > RANK[here]:
                out.append(f"{module} ({here}) imports {target} ({there}), a higher layer")
    return out


def import_cycles(src: Path) -> list[list[str]]:
    """Strongly connected groups of modules importing each other (Tarjan), each sorted."""
    edges = import_edges(src)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(v: str) -> None:  # recursion depth is bounded by the module count (~150)
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, ()):
            if w not in edges:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                cycles.append(sorted(group))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return cycles


def test_no_upward_imports() -> None:
    assert upward_imports(SRC) == []


def test_no_import_circles() -> None:
    assert import_cycles(SRC) == []


@pytest.fixture
def src_copy(tmp_path: Path) -> Path:
    dest = tmp_path / "shoparena"
    shutil.copytree(SRC, dest, ignore=shutil.ignore_patterns("__pycache__", "_data"))
    return dest


def test_a_planted_upward_import_is_caught(src_copy: Path) -> None:
    target = src_copy / "catalog" / "io.py"
    late = "\n\ndef _late():\n    from shoparena.arena import run_directory  # noqa\n"
    target.write_text(target.read_text() + late)
    found = upward_imports(src_copy)
    assert found == [
        "shoparena.catalog.io (catalog) imports shoparena.arena.run_directory (arena), a higher layer"
    ]


def test_a_planted_circle_is_caught(src_copy: Path) -> None:
    (src_copy / "judge" / "records.py").write_text(
        (src_copy / "judge" / "records.py").read_text() + "\nfrom shoparena.judge import inputs  # noqa\n"
    )
    assert ["shoparena.judge.inputs", "shoparena.judge.records"] in import_cycles(src_copy)


def test_a_package_outside_the_order_is_caught(src_copy: Path) -> None:
    (src_copy / "gadgets").mkdir()
    (src_copy / "gadgets" / "__init__.py").write_text("from shoparena.records import Problem  # noqa\n")
    assert any("package not placed" in line for line in upward_imports(src_copy))
