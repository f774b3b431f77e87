"""No function in ``src/`` has a parameter named bare ``profile``: it says ``render_profile`` or
``scoring_profile`` (docs/architecture.md, *One scoring bench*), since the two kinds met in one call before.

The check parses every module under ``src/shoparena`` (functions, methods, lambdas; positional, keyword-only,
``*args`` and ``**kwargs`` names) and plants each kind of offender in a copy to prove it catches them. Record
fields that store a profile (``Verdict.profile``) are class attributes, not parameters, and stay.
"""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "shoparena"
#: Parameter names that do not say which profile they mean.
AMBIGUOUS = frozenset({"profile"})


def ambiguous_parameters(root: Path) -> list[str]:
    """``module:line function(parameter)`` for every parameter whose name is in :data:`AMBIGUOUS`."""
    found: list[tuple[str, int, str]] = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                continue
            args = node.args
            every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
            name = getattr(node, "name", "<lambda>")
            module = path.relative_to(root).as_posix()
            found += [
                (module, node.lineno, f"{name}({arg.arg})") for arg in every if arg and arg.arg in AMBIGUOUS
            ]
    return [f"{module}:{line} {where}" for module, line, where in sorted(found)]


def test_no_parameter_is_named_bare_profile():
    assert ambiguous_parameters(SRC) == []


def test_planted_profile_parameters_are_caught(tmp_path):
    root = tmp_path / "shoparena"
    shutil.copytree(SRC, root, ignore=shutil.ignore_patterns("__pycache__", "_data"))
    (root / "planted.py").write_text(
        "class C:\n"
        "    profile: str = 'strict'  # a field, not a parameter: allowed\n"
        "    def score(self, *, profile): ...\n"
        "async def render(profile='upstream'): ...\n"
        "pick = lambda profile: profile\n"
        "def fine(scoring_profile, render_profile): ...\n"
    )
    assert ambiguous_parameters(root) == [
        "planted.py:3 score(profile)",
        "planted.py:4 render(profile)",
        "planted.py:5 <lambda>(profile)",
    ]
