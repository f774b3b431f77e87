"""The console script's entry point: light to import (a spawned process imports it again), runs the CLI."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_console_script_points_at_the_light_entry() -> None:
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["shoparena"] == "shoparena.cli.entry:main"


def test_importing_the_entry_imports_no_cli() -> None:
    probe = (
        "import sys, shoparena.cli.entry; "
        "heavy = [m for m in ('shoparena.cli.main', 'typer', 'rich', 'pydantic') if m in sys.modules]; "
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_a_process_spawned_from_the_script_skips_the_cli(tmp_path: Path) -> None:
    """The script as pip writes it, run as ``__main__``: a spawned worker re-runs it (as ``__mp_main__``) and
    must find the CLI not imported."""
    script = tmp_path / "shoparena"
    script.write_text(
        "import sys\n"
        "from shoparena.cli.entry import main\n"
        "def probe(_):\n"
        "    return 'shoparena.cli.main' in sys.modules\n"
        "if __name__ == '__main__':\n"
        "    from concurrent.futures import ProcessPoolExecutor\n"
        "    from multiprocessing import get_context\n"
        "    with ProcessPoolExecutor(1, mp_context=get_context('spawn')) as pool:\n"
        "        print(pool.submit(probe, 0).result())\n"
    )
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_the_entry_runs_the_cli() -> None:
    code = "import sys; sys.argv = ['shoparena', '--help']; from shoparena.cli.entry import main; main()"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0
    assert "corpus" in out.stdout
