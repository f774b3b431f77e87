"""No function in ``src/`` is longer than 120 lines (a longer one is split where the split has a name).

Counted from the ``def`` line to the last line of the body, decorators and signature included: what a reader
has to hold at once. The check parses every module under ``src/shoparena`` and plants a long function in a
copy to prove it catches one.
"""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "shoparena"
MAX_LINES = 120


def long_functions(root: Path, limit: int = MAX_LINES) -> dict[str, int]:
    """``module:qualname`` → lines, for every function or method over ``limit`` lines."""
    found: dict[str, int] = {}
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        stack: list[tuple[ast.AST, str]] = [(tree, "")]
        while stack:
            node, prefix = stack.pop()
            for child in ast.iter_child_nodes(node):
                name = prefix
                if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    name = f"{prefix}{child.name}."
                if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                    lines = child.end_lineno - child.lineno + 1  # type: ignore[operator]
                    if lines > limit:
                        found[f"{path.relative_to(root).as_posix()}:{name[:-1]}"] = lines
                stack.append((child, name))
    return found


def test_no_function_is_over_the_limit():
    assert long_functions(SRC) == {}


def test_a_planted_long_function_is_caught(tmp_path):
    root = tmp_path / "shoparena"
    shutil.copytree(SRC, root)
    long_body = "".join(f"        x{i} = {i}\n" for i in range(MAX_LINES))  # def line + body: one too many
    (root / "planted.py").write_text("class C:\n    def long(self):\n" + long_body)
    short_body = "".join(f"    y{i} = {i}\n" for i in range(MAX_LINES - 1))  # exactly the limit
    (root / "planted_ok.py").write_text("def short():\n" + short_body)
    planted = long_functions(root).items() - long_functions(SRC).items()
    assert planted == {("planted.py:C.long", MAX_LINES + 1)}
