"""Reading our own JSONL side files (envelopes, proxy logs, verdicts) safely.

Records are split on ``\\n`` only: JSON written with ``ensure_ascii=False`` may hold U+0085 or U+2028 inside
strings, which ``str.splitlines`` treats as line breaks and would silently drop those records.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)


def read_jsonl_dicts(path: str | Path) -> list[dict[str, Any]]:
    """Every JSON-object line of ``path`` (missing file → []); other lines are skipped with a warning.

    Skipped lines are only ever a torn final write or foreign content in a file we own, so they are
    reported (file and line number) rather than raised.
    """
    path = Path(path)
    if not path.exists():
        return []
    out: list[dict[str, Any]] = []
    for line_no, line in enumerate(path.read_text(encoding="utf-8").split("\n"), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as exc:
            log.warning("%s:%d: skipped a line that is not JSON (%s)", path, line_no, exc)
            continue
        if isinstance(record, dict):
            out.append(record)
        else:
            log.warning("%s:%d: skipped a %s line (expected an object)", path, line_no, type(record).__name__)
    return out
