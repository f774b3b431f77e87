"""Device check 3: a few steps of the ``paper`` preset (run by scripts/gpu_check.sh on one H100/H200).

``pipeline run --preset paper --until sft`` with scripts/gpu_paper_check.yaml over it: the same code path as
the paper's run (catalogue, index, bank, firehose, judge, corpus in upstream's render profile, model stage,
SFT with the ``qwen3-4b`` preset) on a world small enough for minutes and four SFT steps. Model: ``$QWEN3_4B``
(a local Qwen3-4B folder) or a random-init model of Qwen3-4B's exact shape (scripts/gpu_check.py).
Prints each stage's status and seconds.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
OVERLAY = ROOT / "scripts" / "gpu_paper_check.yaml"


def write_overlay(model: str, out: Path) -> Path:
    """The check's pipeline.yaml: the fixed overlay with ``model.base`` set to ``model``."""
    data: dict[str, Any] = yaml.safe_load(OVERLAY.read_text())
    data["model"] = {"base": model}
    out.write_text(yaml.safe_dump(data, sort_keys=False))
    return out


def main() -> None:
    import torch

    from shoparena.pipeline.config import load_pipeline_config
    from shoparena.pipeline.run import run_pipeline

    assert torch.cuda.is_available(), "gpu_paper_check needs a CUDA device"
    sys.path.insert(0, str(ROOT / "scripts"))
    from gpu_check import qwen3_4b_shaped

    work = Path(tempfile.mkdtemp(prefix="gpu_paper_check-"))
    model = os.environ.get("QWEN3_4B") or qwen3_4b_shaped(work / "qwen3-4b-shaped")
    config = load_pipeline_config(write_overlay(model, work / "pipeline.yaml"), preset="paper")
    started = time.time()
    summary = run_pipeline(config, work / "run", until="sft", report=False, strict=True)
    stages = {name: (s["status"], s.get("seconds")) for name, s in summary["stages"].items()}
    print(json.dumps({"seconds": round(time.time() - started, 1), "stages": stages}, indent=2))


if __name__ == "__main__":
    main()
