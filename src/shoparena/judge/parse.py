"""Parse a judge model's reply into a score, in three stages (as ORO does).

1. The whole reply as lenient JSON (control characters allowed inside strings).
2. The last flat ``{...}`` object containing ``"reasoning_quality": <number>`` (skips ``<think>`` preambles).
3. Truncation repair: from the last ``{`` that mentions ``reasoning_quality``, close an open string and brace.

Values are clamped to [0, 1]. Anything else is unparseable (None), which the LLM judge treats as a model
failure, not as a score of 0.
"""

from __future__ import annotations

import json
import math
import re

from pydantic import BaseModel, ConfigDict

_FLAT_OBJECT_RE = re.compile(r'\{[^{}]*"reasoning_quality"\s*:\s*-?[\d.]+[^{}]*\}', re.DOTALL)


class ParsedReply(BaseModel):
    """A parsed judge reply."""

    model_config = ConfigDict(extra="forbid")

    score: float
    explanation: str = ""
    stage: str


def _score_from(candidate: str) -> tuple[float, str] | None:
    try:
        data = json.loads(candidate, strict=False)
    except (ValueError, TypeError):
        return None
    if not isinstance(data, dict) or "reasoning_quality" not in data:
        return None
    value = data["reasoning_quality"]
    if isinstance(value, bool):
        return None
    try:
        score = float(value)
    except (TypeError, ValueError):
        return None
    if math.isnan(score):
        return None
    explanation = data.get("explanation", "")
    return min(1.0, max(0.0, score)), explanation if isinstance(explanation, str) else str(explanation)


def repair_truncated(text: str) -> str | None:
    """Close a reply cut off by max_tokens: an odd quote count gets a quote, then a closing brace."""
    start = text.rfind("{", 0, text.rfind('"reasoning_quality"') + 1)
    if '"reasoning_quality"' not in text or start < 0:
        return None
    fragment = text[start:].rstrip()
    unescaped_quotes = len(re.findall(r'(?<!\\)"', fragment))
    if unescaped_quotes % 2:
        fragment += '"'
    if not fragment.endswith("}"):
        fragment += "}"
    return fragment


def parse_judge_reply(text: str) -> ParsedReply | None:
    """Parse ``text``; None when no stage finds a numeric ``reasoning_quality``."""
    if not text or not text.strip():
        return None
    stripped = text.strip()
    found = _score_from(stripped)
    if found:
        return ParsedReply(score=found[0], explanation=found[1], stage="json")
    matches = _FLAT_OBJECT_RE.findall(stripped)
    if matches and (found := _score_from(matches[-1])):
        return ParsedReply(score=found[0], explanation=found[1], stage="last_match")
    repaired = repair_truncated(stripped)
    if repaired and (found := _score_from(repaired)):
        return ParsedReply(score=found[0], explanation=found[1], stage="repair")
    return None
