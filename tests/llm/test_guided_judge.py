"""LLMJudge with ``guided=True``: the request offers the five bin replies; verdicts say they were guided."""

from __future__ import annotations

import importlib.util
import json

import pytest

from shoparena.judge import GUIDED_REPLIES, SCORE_BINS, JudgeStatus, LLMJudge, LLMJudgeConfig
from shoparena.judge.records import JudgeInput, TrustedSummary
from shoparena.llm import ScriptedBackend

MISSING = [n for n in ("torch", "transformers", "tokenizers") if importlib.util.find_spec(n) is None]
JUDGE_INPUT = JudgeInput(query="Black leather backpack under 300 yuan.", trusted=TrustedSummary(searches=2))


def test_guided_replies_are_one_per_bin_and_parse_as_json() -> None:
    assert [json.loads(r)["reasoning_quality"] for r in GUIDED_REPLIES] == list(SCORE_BINS)


@pytest.mark.parametrize("index", range(len(GUIDED_REPLIES)))
def test_guided_request_and_verdict(index: int) -> None:
    backend = ScriptedBackend([GUIDED_REPLIES[index]])
    judge = LLMJudge([("smol", backend)], LLMJudgeConfig(guided=True))
    verdict = judge.judge(JUDGE_INPUT, problem_id="p1")
    assert backend.requests[0].extra_body == {"guided_choice": list(GUIDED_REPLIES)}
    assert verdict.status is JudgeStatus.OK and verdict.score == SCORE_BINS[index]
    assert verdict.parse_stage == "json" and verdict.explanation == "guided"
    assert verdict.model == "smol [guided_choice]"


def test_unguided_is_oro_behaviour() -> None:
    backend = ScriptedBackend(['{"reasoning_quality": 0.5, "explanation": "Gate 3 failed."}'])
    verdict = LLMJudge([("smol", backend)]).judge(JUDGE_INPUT)
    assert "guided_choice" not in backend.requests[0].extra_body
    assert verdict.model == "smol" and verdict.score == 0.5


@pytest.mark.skipif(bool(MISSING), reason="torch/transformers not installed (train extra)")
def test_guided_judge_over_a_real_tiny_model(tmp_path) -> None:
    """A random tiny model never writes the JSON unguided; guided, every verdict is ok and on a bin."""
    from shoparena.llm.transformers_backend import TransformersBackend
    from shoparena.models.tiny import build_tiny_qwen3

    folder = build_tiny_qwen3(tmp_path / "tiny-qwen3", seed=1)
    backend = TransformersBackend(folder, device="cpu")
    judge = LLMJudge([("tiny", backend)], LLMJudgeConfig(guided=True))
    verdicts = [judge.judge(JUDGE_INPUT.model_copy(update={"query": q}), problem_id=q)
                for q in ("red kettle", "blue yoga mat")]
    assert all(v.status is JudgeStatus.OK and v.score in SCORE_BINS for v in verdicts)
    assert all(v.attempts[-1].outcome == "ok" for v in verdicts) and not judge.run_failed


def test_cap_judge_text_keeps_head_and_tail() -> None:
    from shoparena.judge.llm_judge import cap_judge_text

    text = "QUERY: kettle\n" + "".join(f"step {i}\n" for i in range(2000)) + "</untrusted>"
    assert cap_judge_text(text, None) == text and cap_judge_text(text, len(text)) == text
    cut = cap_judge_text(text, 1000)
    assert len(cut) <= 1000
    assert cut.startswith("QUERY: kettle\n") and cut.endswith("</untrusted>")
    assert f"{len(text) - 1000} characters cut" in cut


def test_capped_input_reaches_the_model() -> None:
    backend = ScriptedBackend([GUIDED_REPLIES[0]])
    long_input = JUDGE_INPUT.model_copy(update={"query": "backpack " * 500})
    LLMJudge([("smol", backend)], LLMJudgeConfig(max_input_chars=600)).judge(long_input)
    assert len(backend.requests[0].messages[1]["content"]) <= 600
