"""``shoparena train`` as one process of a launch (``torchrun ... launched_train.py train sft ...``), for
tests/train/test_distributed.py and scripts/gpu_check.sh.

Records in ``$WRITES_LOG/rank-<RANK>.txt`` every call this process makes to the functions that write a run
directory (the real functions still run), so a test can tell which processes wrote it. With
``$KILL_AFTER_STEP`` the main process dies (``os._exit``, no clean-up, as a killed job) right after logging
that step; the launcher then stops the others. ``$RANK_1_SET`` (``key=value``) replaces the ``--set key=...``
of process 1 only (inputs that differ between processes).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

WRITERS = {
    "shoparena.runs.rundir": ["claim_run_dir", "write_manifest"],
    "shoparena.train.runner": ["append_line", "write_jsonl", "write_render_stamp"],
}


def _spy(module: Any, name: str, log: Path) -> None:
    real = getattr(module, name)

    def recorded(*args: Any, **kwargs: Any) -> Any:
        with log.open("a", encoding="utf-8") as fh:
            fh.write(name + "\n")
        return real(*args, **kwargs)

    setattr(module, name, recorded)


def _kill_after(step: int) -> None:
    from transformers import TrainerCallback

    import shoparena.train.runner as runner

    real = runner._callbacks

    class Kill(TrainerCallback):
        def on_log(self, args, state, control, logs=None, **kwargs):
            if state.global_step == step and state.is_world_process_zero:
                os._exit(137)

    runner._callbacks = lambda run, progress: [*real(run, progress), Kill()]


def main() -> None:
    import importlib

    log = Path(os.environ["WRITES_LOG"]) / f"rank-{os.environ.get('RANK', '0')}.txt"
    for module_name, names in WRITERS.items():
        module = importlib.import_module(module_name)
        for name in names:
            _spy(module, name, log)
    if os.environ.get("KILL_AFTER_STEP"):
        _kill_after(int(os.environ["KILL_AFTER_STEP"]))
    from shoparena.cli.main import main as cli

    argv = sys.argv[1:]
    other = os.environ.get("RANK_1_SET")
    if other and os.environ.get("RANK") == "1":
        key = other.partition("=")[0] + "="
        argv = [other if item.startswith(key) else item for item in argv]
    sys.argv = ["shoparena", *argv]
    cli()


if __name__ == "__main__":
    main()
