"""The three parse stages and clamping."""

from __future__ import annotations

import pytest

from shoparena.judge import parse_judge_reply


@pytest.mark.parametrize(
    ("text", "score", "stage"),
    [
        ('{"reasoning_quality": 0.7, "explanation": "Gate 4 failed: one candidate"}', 0.7, "json"),
        ('{"reasoning_quality": 0.5, "explanation": "line\nbreak"}', 0.5, "json"),  # control chars allowed
        ('<think>maybe {"reasoning_quality": 0.1}</think>\n{"reasoning_quality": 0.9, "explanation": "x"}',
         0.9, "last_match"),
        ('Sure! {"explanation": "G3 passed", "reasoning_quality": 0.5} hope that helps', 0.5, "last_match"),
        ('{"reasoning_quality": 0.3, "explanation": "Gate 2 failed: the thinking only', 0.3, "repair"),
        ('<think>{a}</think>{"reasoning_quality": 0.7, "explanation": "cut \\"here', 0.7, "repair"),
        ('{"reasoning_quality": 1.7}', 1.0, "json"),
        ('{"reasoning_quality": -0.2}', 0.0, "json"),
        ('{"reasoning_quality": "0.3"}', 0.3, "json"),
    ],
)
def test_parses(text: str, score: float, stage: str) -> None:
    parsed = parse_judge_reply(text)
    assert parsed is not None
    assert parsed.score == score and parsed.stage == stage


@pytest.mark.parametrize(
    "text",
    ["", "   ", "I think it is about a 0.7", '{"score": 0.9}', '{"reasoning_quality": "high"}',
     '{"reasoning_quality": true}', '{"reasoning_quality": NaN}', "<think>no json at all</think>"],
)
def test_unparseable(text: str) -> None:
    assert parse_judge_reply(text) is None


def test_explanation_is_kept() -> None:
    parsed = parse_judge_reply('{"reasoning_quality": 0.9, "explanation": "Gate 4 passed: compares two."}')
    assert parsed is not None and parsed.explanation == "Gate 4 passed: compares two."
