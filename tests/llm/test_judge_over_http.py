"""LLMJudge end to end over the HTTP backend and the loopback fake server."""

from __future__ import annotations

from fake_openai_server import Action, FakeServer, completion

from shoparena.judge import JudgeStatus, LLMJudge, build_judge_input
from shoparena.llm import BackoffPolicy, OpenAICompatibleBackend
from shoparena.records.trajectory import Step, Trajectory


def test_judge_rotates_over_http(server: FakeServer) -> None:
    server.reset(
        Action(status=200, text="<html>gateway</html>"),  # model A: invalid body -> blacklisted
        Action(status=503, text="busy"),  # model B: server error -> back off, rotate (back to B)
        Action(json=completion('<think>ok</think>{"reasoning_quality": 0.5, "explanation": "G3 failed"}')),
    )
    backend = OpenAICompatibleBackend(server.base_url, "k", max_retries=0,
                                      backoff=BackoffPolicy(jitter=False), sleep=lambda s: None)
    sleeps: list[float] = []
    judge = LLMJudge([("model-a", backend), ("model-b", backend)], sleep=sleeps.append)
    trajectory = Trajectory(query="a mug", steps=[Step(index=1, think="searching")])
    verdict = judge.judge(build_judge_input("a mug", [], trajectory), problem_id="p")
    assert verdict.status is JudgeStatus.OK and verdict.score == 0.5 and verdict.parse_stage == "last_match"
    assert [a.outcome for a in verdict.attempts] == ["invalid_response", "server", "ok"]
    assert [body["model"] for body in server.received] == ["model-a", "model-b", "model-b"]
    assert all(body["temperature"] == 0.0 and body["max_tokens"] == 3072 for body in server.received)
    assert sleeps == [10.0]  # attempt index 1: min(5 * 2**1, 10)
