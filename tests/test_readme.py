"""Every shell block of the README runs, in order, in one fresh working directory, and exits 0.

``SHOPARENA_README_SCALE`` picks the scale: ``small`` (the default) rewrites the sizes the README names
(:data:`SMALL`: a 600-product catalogue, 8 problems, 2 held out, the tiny model for SmolLM2, short
episodes) and checks ``make run`` with ``--dry-run`` and ``make test`` with ``make -n`` (the suite cannot
run itself inside itself); ``full`` runs every line as written (``pytest -m slow``: tens of minutes).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from world import REPO

SCALE = os.environ.get("SHOPARENA_README_SCALE", "small")
#: README text → its small-scale stand-in (each must occur in the README: the table cannot go stale).
SMALL = {
    "--products 20000": "--products 600",
    "--n 400": "--n 8",
    "--heldout 16": "--heldout 2 --public-size 2 --reserve 2",
    "--max-steps 3": "--max-steps 2",
    "--max-tokens 64": "--max-tokens 16",
    "$(shoparena models smollm2)": "$(shoparena models tiny --out work/tiny)",
}
#: The quick start's make targets at small scale: the commands they run, checked without running them.
MAKE_TARGETS = {"make run": "--dry-run", "make test": None}

pytestmark = pytest.mark.slow if SCALE == "full" else []


def shell_blocks(text: str) -> list[str]:
    """The ``sh`` fenced blocks of a Markdown text, continuation lines joined."""
    return [block.replace("\\\n", " ") for block in re.findall(r"```sh\n(.*?)```", text, re.DOTALL)]


def scaled(block: str) -> str:
    for full, small in SMALL.items():
        block = block.replace(full, small)
    return block


def _make(target_line: str, env: dict[str, str], cwd: Path) -> None:
    """``make run`` / ``make test`` at small scale: the command make would run, dry."""
    target = target_line.split()[1]
    argv = ["make", "-n", "--no-print-directory", "-C", str(REPO), target]
    dry = subprocess.run(argv, capture_output=True, text=True, env=env)
    assert dry.returncode == 0, dry.stderr
    command = dry.stdout.strip().splitlines()[-1]  # after the install stamp's recipe, the target's own
    flag = MAKE_TARGETS[f"make {target}"]
    if flag is None:
        assert "pytest" in command, command
        return
    argv = shlex.split(command)
    assert Path(argv[0]).name == "shoparena", command
    result = subprocess.run(["shoparena", *argv[1:], flag], cwd=cwd, capture_output=True, text=True, env=env)
    assert result.returncode == 0, f"{command} {flag}\n{result.stdout}\n{result.stderr}"


@pytest.fixture
def shell_env(tmp_path: Path) -> dict[str, str]:
    """``shoparena`` on PATH as this checkout's CLI, a private model cache."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    launcher = bin_dir / "shoparena"
    launcher.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m shoparena.cli.main "$@"\n')
    launcher.chmod(0o755)
    env = dict(os.environ)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO / "src"), env.get("PYTHONPATH")]))
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    env["COLUMNS"] = "200"
    return env


def test_every_readme_shell_block_runs(tmp_path: Path, shell_env: dict[str, str]) -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    blocks = shell_blocks(readme)
    assert len(blocks) >= 3
    if SCALE == "small":
        missing = [full for full in SMALL if full not in readme]
        assert not missing, f"README no longer says {missing}: update SMALL"
    work = tmp_path / "session"
    work.mkdir()
    for block in blocks:
        lines = [line for line in block.splitlines() if line.strip() and not line.lstrip().startswith("#")]
        if SCALE == "small" and any(line.split("#")[0].strip() in MAKE_TARGETS for line in lines):
            for line in lines:
                _make(line.split("#")[0].strip(), shell_env, work)
            continue
        script = scaled(block) if SCALE == "small" else block
        argv = ["bash", "-e", "-o", "pipefail", "-c", script]
        result = subprocess.run(argv, cwd=work, capture_output=True, text=True, env=shell_env)
        output = f"--- stdout\n{result.stdout[-3000:]}\n--- stderr\n{result.stderr[-3000:]}"
        assert result.returncode == 0, f"README block failed:\n{script}\n{output}"
