"""LLMJudge: request shape, rotation, blacklist, back-off, abort, explicit statuses, breaker, run failure."""

from __future__ import annotations

import pytest
from judge_fixtures import QUERY, example_trajectory, trusted_calls

from shoparena.judge import (
    JUDGE_SYSTEM_PROMPT,
    JudgeStatus,
    LLMJudge,
    LLMJudgeConfig,
    build_judge_input,
    run_failed,
)
from shoparena.judge.inputs import render_judge_input
from shoparena.llm import AuthError, InvalidResponse, RateLimited, ScriptedBackend, Unavailable
from shoparena.llm.types import BackendError

OK = '{"reasoning_quality": 0.7, "explanation": "Gate 4 failed: one candidate."}'


@pytest.fixture()
def judge_input():
    return build_judge_input(QUERY, trusted_calls(), example_trajectory())


def _judge(*scripts: list, **config) -> tuple[LLMJudge, list[ScriptedBackend], list[float]]:
    backends = [ScriptedBackend(script, name=f"m{i}") for i, script in enumerate(scripts)]
    sleeps: list[float] = []
    judge = LLMJudge([(f"m{i}", b) for i, b in enumerate(backends)], LLMJudgeConfig(**config),
                     sleep=sleeps.append)
    return judge, backends, sleeps


def test_ok_verdict_and_request_shape(judge_input) -> None:
    judge, (backend,), sleeps = _judge([OK])
    verdict = judge.judge(judge_input, problem_id="p-1")
    assert verdict.status is JudgeStatus.OK and verdict.score == 0.7
    assert verdict.model == "m0" and verdict.parse_stage == "json" and verdict.problem_id == "p-1"
    request = backend.requests[0]
    assert request.model == "m0" and request.temperature == 0.0 and request.max_tokens == 3072
    assert request.timeout_s == 90.0
    assert request.messages[0] == {"role": "system", "content": JUDGE_SYSTEM_PROMPT}
    assert request.messages[1]["content"] == render_judge_input(judge_input)
    assert sleeps == [] and judge.stats.judge_total == 1 and judge.stats.judge_failed == 0


def test_unparseable_blacklists_for_the_trajectory_and_rotates_without_sleep(judge_input) -> None:
    judge, (first, second), sleeps = _judge(["no idea", "still none", OK], [OK, "?"])
    verdict = judge.judge(judge_input)
    assert verdict.status is JudgeStatus.OK and verdict.model == "m1"
    assert [a.outcome for a in verdict.attempts] == ["unparseable", "ok"]
    assert sleeps == [] and judge.stats.blacklisted == []
    # ORO forgets the blacklist after each trajectory: the next problem asks m0 again.
    again = judge.judge(judge_input)
    assert [(a.model, a.outcome) for a in again.attempts] == [("m0", "unparseable"), ("m1", "unparseable")]
    assert again.status is JudgeStatus.PARSE_ERROR  # both blacklisted within this trajectory
    assert judge.judge(judge_input).model == "m0"
    assert len(first.requests) == 3 and len(second.requests) == 2


def test_run_blacklist_scope_keeps_the_model_out_for_the_run(judge_input) -> None:
    judge, (first, second), _ = _judge(["no idea", OK], [OK, OK], blacklist_scope="run")
    assert judge.judge(judge_input).model == "m1" and judge.stats.blacklisted == ["m0"]
    assert judge.judge(judge_input).model == "m1"  # straight to m1
    assert len(first.requests) == 1 and len(second.requests) == 2
    judge.new_run()
    assert judge.stats.blacklisted == [] and judge.judge(judge_input).model == "m0"


def test_invalid_http_body_counts_as_unparseable(judge_input) -> None:
    judge, _, sleeps = _judge([InvalidResponse("not json")], [OK], blacklist_scope="run")
    verdict = judge.judge(judge_input)
    assert verdict.status is JudgeStatus.OK
    assert [a.outcome for a in verdict.attempts] == ["invalid_response", "ok"]
    assert judge.stats.blacklisted == ["m0"] and sleeps == []


def test_all_models_unparseable_is_parse_error(judge_input) -> None:
    judge, backends, _ = _judge(["?"], ["still no json"])
    verdict = judge.judge(judge_input)
    assert verdict.status is JudgeStatus.PARSE_ERROR and verdict.score is None
    assert len(verdict.attempts) == 2 and all(len(b.requests) == 1 for b in backends)


@pytest.mark.parametrize("status", [401, 403])
def test_auth_error_aborts(judge_input, status: int) -> None:
    judge, (_, second), sleeps = _judge([AuthError("no", status_code=status)], [OK])
    verdict = judge.judge(judge_input)
    assert verdict.status is JudgeStatus.UNAVAILABLE and verdict.score is None
    assert verdict.attempts[0].outcome == "auth" and verdict.attempts[0].status_code == status
    assert len(second.requests) == 0 and sleeps == []


def test_402_rotates_as_oro_unless_listed_to_abort(judge_input) -> None:
    judge, (_, second), sleeps = _judge([AuthError("unpaid", status_code=402)], [OK])
    verdict = judge.judge(judge_input)
    assert verdict.status is JudgeStatus.OK and verdict.model == "m1" and sleeps == [5.0]
    assert [(a.outcome, a.status_code) for a in verdict.attempts] == [("http_error", 402), ("ok", 200)]
    judge, (_, second), _ = _judge([AuthError("unpaid", status_code=402)], [OK],
                                   abort_statuses=[401, 402, 403])
    assert judge.judge(judge_input).status is JudgeStatus.UNAVAILABLE and second.requests == []


def test_rate_limit_and_server_errors_rotate_and_sleep(judge_input) -> None:
    judge, _, sleeps = _judge(
        [RateLimited("busy"), BackendError("teapot", status_code=418), OK],
        [Unavailable("down", reason="server", status_code=502), OK],
    )
    verdict = judge.judge(judge_input)
    assert verdict.status is JudgeStatus.OK and verdict.model == "m1"
    assert [a.outcome for a in verdict.attempts] == ["rate_limited", "server", "http_error", "ok"]
    assert [a.model for a in verdict.attempts] == ["m0", "m1", "m0", "m1"]
    assert [a.slept_s for a in verdict.attempts] == [5.0, 10.0, 10.0, 0.0]
    assert sleeps == [5.0, 10.0, 10.0]


def test_timeouts_and_connection_errors_rotate_without_sleep(judge_input) -> None:
    judge, _, sleeps = _judge(
        [Unavailable("slow", reason="timeout")], [Unavailable("x", reason="connection")], [OK]
    )
    verdict = judge.judge(judge_input)
    assert verdict.status is JudgeStatus.OK and verdict.model == "m2"
    assert [a.outcome for a in verdict.attempts] == ["timeout", "connection", "ok"] and sleeps == []


def test_exhausted_attempts_are_unavailable_not_zero(judge_input) -> None:
    judge, backends, sleeps = _judge(*[[Unavailable("down", reason="server", status_code=503)] * 4] * 2)
    verdict = judge.judge(judge_input)
    assert verdict.status is JudgeStatus.UNAVAILABLE and verdict.score is None
    assert len(verdict.attempts) == 8 and [len(b.requests) for b in backends] == [4, 4]
    assert sleeps == [5.0] + [10.0] * 7


def test_max_attempts_is_configurable(judge_input) -> None:
    judge, _, _ = _judge([RateLimited("busy")] * 3, max_attempts=3)
    assert len(judge.judge(judge_input).attempts) == 3


def test_circuit_breaker_and_run_failure(judge_input) -> None:
    down = Unavailable("x", reason="connection")
    judge, (backend,), _ = _judge([OK, down, down, OK] + [down] * 6, max_attempts=2)
    statuses = [judge.judge(judge_input).status for _ in range(4)]
    assert statuses == [JudgeStatus.OK, JudgeStatus.UNAVAILABLE, JudgeStatus.OK, JudgeStatus.UNAVAILABLE]
    assert judge.stats.consecutive_failed == 1 and not judge.stats.breaker_open
    for _ in range(2):
        assert judge.judge(judge_input).status is JudgeStatus.UNAVAILABLE
    assert judge.stats.breaker_open
    calls_before = len(backend.requests)
    skipped = judge.judge(judge_input)
    assert skipped.status is JudgeStatus.SKIPPED_BREAKER and skipped.score is None
    assert len(backend.requests) == calls_before  # no model call once the breaker is open
    assert (judge.stats.judge_total, judge.stats.judge_failed) == (7, 5)
    assert (judge.stats.attempts_total, judge.stats.attempts_failed) == (10, 8)  # the skipped one: none
    assert judge.run_failed


@pytest.mark.parametrize(
    ("total", "failed", "expected"),
    [(2, 2, False), (3, 1, False), (3, 2, True), (4, 2, False), (5, 3, True), (10, 5, False)],
)
def test_run_failure_rule(total: int, failed: int, expected: bool) -> None:
    assert run_failed(total, failed) is expected


def test_requires_a_backend() -> None:
    with pytest.raises(ValueError, match=r"LLMJudge\.backends"):
        LLMJudge([])


def test_each_problem_starts_with_the_preferred_model(judge_input) -> None:
    judge, (first, second), sleeps = _judge([RateLimited("busy"), OK], [OK])
    assert judge.judge(judge_input).model == "m1"
    assert judge.judge(judge_input).model == "m0"  # a transient failure does not demote m0
    assert len(first.requests) == 2 and len(second.requests) == 1 and sleeps == [5.0]
