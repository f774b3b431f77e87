"""Shared helpers for the built-in miner and incentive tests (the synthetic world is tests/world.py)."""

from __future__ import annotations

import json
from pathlib import Path


def read_jsonl(path: Path) -> list[dict]:
    """JSON lines split on '\\n' only (catalog text may hold U+0085, which str.splitlines() breaks on)."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line.strip()]
