"""Every run-directory file name is spelt in one module only: the layout module of the layer that writes it.

Readers and writers take paths from the handles (``shoparena.runs.layout.open_run``, ``ArenaRun``,
``EvalRun``, ``CorpusRun``, ...), so a renamed file or a moved folder is one edit. The check parses every
module under ``src/shoparena`` and looks at what is spelt out as a path: a string that is the file name
(``"judge.jsonl"``) or holds it as the last part of a path (``f"{run}/agents/{a}/output.jsonl"``), and a
folder name joined onto a path (``run / "agents"``). Prose (docstrings, help text naming a file) is not a
path. It plants a second spelling in a copy to prove it catches it.
"""

from __future__ import annotations

import ast
import re
import shutil
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "shoparena"

#: File name → the one module that spells it.
FILE_OWNERS = {
    # every run directory (runs layer)
    "config.yaml": "runs/manifest.py",
    "manifest.json": "runs/manifest.py",  # also the search index's (written by runs.manifest)
    "summary.json": "runs/manifest.py",
    "identity.json": "runs/identity.py",
    "output.jsonl": "runs/envelopes.py",
    # arena runs and firehose races
    "judge.jsonl": "arena/layout.py",
    "miner.json": "arena/layout.py",
    "race.json": "arena/layout.py",
    "weights.json": "arena/layout.py",
    "scores.json": "arena/layout.py",
    "incentives.json": "arena/layout.py",
    "race_suite.json": "arena/layout.py",
    "_unattributed.jsonl": "arena/layout.py",
    "sandbox.jsonl": "arena/layout.py",
    "leaderboard.json": "arena/layout.py",
    "firehose.json": "arena/layout.py",
    # eval runs
    "episodes.jsonl": "eval/layout.py",
    "audit.json": "eval/layout.py",
    # corpus directories
    "records.jsonl": "corpus/layout.py",
    "quarantine.jsonl": "corpus/layout.py",
    "problems.json": "corpus/layout.py",
    "report.json": "corpus/layout.py",
    "diversity.json": "corpus/layout.py",
    "classified.jsonl": "corpus/layout.py",
    "dataset_dict.json": "corpus/layout.py",
    # training runs
    "logs.jsonl": "train/layout.py",
    # pipeline runs
    "report.html": "pipeline/layout.py",
    "bank.json": "pipeline/layout.py",
}
#: Folder name → the one module that joins it onto a path.
FOLDER_OWNERS = {
    "agents": "arena/layout.py",
    "proxy": "arena/layout.py",
    "leak": "eval/layout.py",
    "views": "corpus/layout.py",
    "checkpoints": "train/layout.py",
}


def _docstrings(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                ids.add(id(body[0].value))
    return ids


#: Known spellings outside the owner, each with its reason; the test fails when one goes and stays listed.
ALLOWED = {
    ("arena/agent_runner.py", "output.jsonl"): "the miner's own /tmp file inside its sandbox, not a run file",
    ("search/index.py", "quarantine.jsonl"): "the index directory's own quarantine (another layout)",
}


def _file_pattern(name: str) -> re.Pattern[str]:
    # The whole string, or the last component of a path in it (``.tmp`` suffixes still count).
    return re.compile(rf"(^|/){re.escape(name)}(?![\w-])")


PATTERNS = {name: _file_pattern(name) for name in FILE_OWNERS}


def spellings(root: Path) -> set[tuple[str, str]]:
    """(module path relative to ``root``, name) for every spelling of an owned name outside its owner."""
    found: set[tuple[str, str]] = set()
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        skip = _docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
                for name, pattern in PATTERNS.items():
                    if FILE_OWNERS[name] != rel and pattern.search(node.value):
                        found.add((rel, name))
            joined: list[ast.AST] = []
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
                joined = [node.right]
            elif isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "joinpath":
                joined = list(node.args)
            for part in joined:
                owned = isinstance(part, ast.Constant) and part.value in FOLDER_OWNERS
                if owned and FOLDER_OWNERS[part.value] != rel:
                    found.add((rel, part.value))
    return found


def test_each_run_directory_name_is_spelt_by_its_owner_only():
    assert spellings(SRC) == set(ALLOWED)


def test_every_owner_spells_its_names():
    for name, owner in {**FILE_OWNERS, **FOLDER_OWNERS}.items():
        assert f'"{name}"' in (SRC / owner).read_text(encoding="utf-8"), f"{owner} does not spell {name}"


def test_a_second_spelling_is_caught(tmp_path):
    root = tmp_path / "shoparena"
    shutil.copytree(SRC, root)
    (root / "planted_reader.py").write_text(
        "from pathlib import Path\n\n\n"
        "def verdicts(run: Path, agent: str) -> Path:\n"
        '    """Reads agents/<agent>/judge.jsonl (a docstring may name it)."""\n'
        '    return run / "agents" / agent / "judge.jsonl"\n\n\n'
        "def report(corpus: Path) -> str:\n"
        '    return f"{corpus}/report.json is missing"\n\n\n'
        "def usage() -> str:\n"
        '    return "prints report.json"  # prose, not a path\n'
    )
    (root / "planted_join.py").write_text(
        'def views(corpus):\n    return corpus.joinpath("views", "sft-train.jsonl")\n'
    )
    assert spellings(root) - set(ALLOWED) == {
        ("planted_reader.py", "agents"),
        ("planted_reader.py", "judge.jsonl"),
        ("planted_reader.py", "report.json"),
        ("planted_join.py", "views"),
    }
