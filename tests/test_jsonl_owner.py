"""Line I/O has one owner, ``shoparena.jsonl``: no other module opens a ``.jsonl`` file by name or splits a
whole file into lines itself (``str.splitlines`` also splits on U+2028 and U+0085, inside JSON strings).

The check parses every module under ``src/shoparena``. It is a lint, so it looks at what is spelled out: an
``open``/``read_text``/``write_text``/``read_bytes``/``write_bytes`` call whose path mentions ``.jsonl``, and
``.splitlines()``/``.split(...)`` applied directly to a whole-file read. It plants each violation in a copy to
prove it catches them.
"""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "shoparena"
OWNER = Path("jsonl.py")
OPENERS = frozenset({"open", "read_text", "write_text", "read_bytes", "write_bytes"})
WHOLE_READS = frozenset({"read_text", "read_bytes", "read"})

#: Known leftovers, each with its reason; the test fails when one is fixed and not removed from here.
ALLOWED = {
    ("eval/run.py", "splits a whole file into lines"): "split on b'\\n' only (correct); eval run owner",
}


def _strings(node: ast.AST) -> list[str]:
    return [n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def violations(root: Path) -> set[tuple[str, str]]:
    """(module path relative to ``root``, what it does) for every module other than the owner."""
    found: set[tuple[str, str]] = set()
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        if rel == OWNER:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = getattr(func, "id", None) or getattr(func, "attr", "")
            if name in OPENERS:
                parts: list[ast.AST] = [*node.args, *(k.value for k in node.keywords)]
                if isinstance(func, ast.Attribute):
                    parts.append(func.value)
                if any(".jsonl" in text for part in parts for text in _strings(part)):
                    found.add((rel.as_posix(), "opens a .jsonl file"))
            if name in ("splitlines", "split") and isinstance(func, ast.Attribute):
                receiver = func.value
                if (
                    isinstance(receiver, ast.Call)
                    and isinstance(receiver.func, ast.Attribute)
                    and receiver.func.attr in WHOLE_READS
                ):
                    found.add((rel.as_posix(), "splits a whole file into lines"))
    return found


def test_only_the_owner_does_line_io():
    assert violations(SRC) == set(ALLOWED)


def test_planted_violations_are_caught(tmp_path):
    root = tmp_path / "shoparena"
    shutil.copytree(SRC, root)
    (root / "planted_open.py").write_text(
        'from pathlib import Path\n\n\ndef f(run: Path) -> None:\n'
        '    with (run / "logs.jsonl").open("a") as fh:\n        fh.write("{}\\n")\n'
    )
    (root / "planted_split.py").write_text(
        "def g(path):\n    return [line for line in path.read_text().splitlines()]\n"
    )
    (root / "planted_open_call.py").write_text('def h(out):\n    return open(out / "x.jsonl", "wb")\n')
    assert violations(root) - set(ALLOWED) == {
        ("planted_open.py", "opens a .jsonl file"),
        ("planted_split.py", "splits a whole file into lines"),
        ("planted_open_call.py", "opens a .jsonl file"),
    }
