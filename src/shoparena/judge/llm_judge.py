"""LLM reasoning judge with ORO's retry, rotation, blacklist and circuit-breaker behaviour.

Every outcome has an explicit status (``ok``, ``parse_error``, ``unavailable``, ``skipped_breaker``) and only
``ok`` carries a score; each verdict keeps its model calls (``attempts``). How failures then weigh in the
run's score is :data:`FailureAccounting` (ORO's rule by default: a failed judgement is 0.0 in q and failures
are counted per call; :mod:`shoparena.judge.coefficient`). A model that returns unparseable replies is
blacklisted for the trajectory, as ORO does (``blacklist_scope="run"`` keeps it out for the whole run).
``LLMJudgeConfig.guided`` (off by default) adds structured output: the request carries ``guided_choice``
(vLLM's field; :class:`~shoparena.llm.transformers_backend.TransformersBackend` honours it too) listing
the five bin replies, so the model can only pick a bin.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from shoparena.judge.inputs import render_judge_input
from shoparena.judge.parse import parse_judge_reply
from shoparena.judge.prompt import judge_messages
from shoparena.judge.records import SCORE_BINS, JudgeAttempt, JudgeInput, JudgeStatus, JudgeVerdict
from shoparena.llm.types import (
    AuthError,
    BackendError,
    ChatBackend,
    ChatRequest,
    InvalidResponse,
    Unavailable,
)


class Judge(Protocol):
    """Anything that grades one judge input."""

    name: str

    def judge(self, judge_input: JudgeInput, *, problem_id: str | None = None) -> JudgeVerdict:
        """Grade one trajectory."""
        ...


FailureAccounting = Literal["oro", "verdicts"]
"""How judge failures count in a run's score.

``oro`` (ORO v1.0.79's validator): a failed judgement (attempts exhausted, auth error, every model
blacklisted) is 0.0 in the mean quality q; the run-failure rule counts model calls (HTTP attempts), and
problems skipped by the circuit breaker count neither in q nor in the calls. ``verdicts`` (shoparena's earlier
choice): q is the mean of the ``ok`` verdicts only, and the rule counts verdicts, every non-``ok`` one
(skipped ones included) as failed."""


BlacklistScope = Literal["trajectory", "run"]


class LLMJudgeConfig(BaseModel):
    """Knobs of :class:`LLMJudge` (defaults are ORO v1.0.79's)."""

    model_config = ConfigDict(extra="forbid")

    temperature: float = 0.0
    max_tokens: int = Field(default=3072, ge=1)
    timeout_s: float = Field(default=90.0, gt=0)
    max_attempts: int = Field(default=8, ge=1, description="Model calls per trajectory, over all rotations.")
    backoff_base_s: float = Field(
        default=5.0, ge=0, description="Sleep min(base * 2**attempt, cap) after 429/5xx/other statuses."
    )
    backoff_cap_s: float = Field(default=10.0, ge=0)
    breaker_threshold: int = Field(
        default=3, ge=1, description="Consecutive fully failed problems after which later ones are skipped."
    )
    blacklist_scope: BlacklistScope = Field(
        default="trajectory",
        description="How long a model that returned an unparseable reply is skipped. trajectory: for the "
        "rest of that trajectory (ORO's per-call blacklist). run: for the rest of the run.",
    )
    abort_statuses: list[int] = Field(
        default_factory=lambda: [401, 403],
        description="Auth statuses that abort a trajectory at once (ORO: 401, 403; the earlier choice added "
        "402). Another auth status rotates and backs off like any other error status.",
    )
    max_input_chars: int | None = Field(
        default=None, ge=200,
        description="Cut the rendered judge input to this many characters (middle cut, see "
        "cap_judge_text) so it fits a small model's context; None = ORO (no cap).",
    )
    guided: bool = Field(
        default=False,
        description="Send vLLM's guided_choice with the five bin replies (GUIDED_REPLIES), so even a small "
        "model answers in the required JSON; off = ORO's free-form reply.",
    )


GUIDED_EXPLANATION = "guided"
GUIDED_REPLIES: tuple[str, ...] = tuple(
    json.dumps({"reasoning_quality": b, "explanation": GUIDED_EXPLANATION}) for b in SCORE_BINS
)
"""The replies a guided judge may give: one per rubric bin, each parsed by the ordinary three-stage parser."""
GUIDED_MODEL_SUFFIX = " [guided_choice]"
"""Appended to a guided verdict's ``model``, so stored verdicts say how their score was produced."""


def cap_judge_text(text: str, limit: int | None) -> str:
    """``text`` cut to at most ``limit`` characters by removing its middle (a marker says how much went).

    The head holds the query and the trusted proxy block, the tail the last steps and the closing marker
    of the untrusted block, so both survive; the first steps' detail is what goes.
    """
    if limit is None or len(text) <= limit:
        return text
    marker = f"\n[... {len(text) - limit} characters cut to fit the judge's context ...]\n"
    keep = max(limit - len(marker), 0)
    head = keep * 3 // 5
    return text[:head] + marker + text[len(text) - (keep - head):]


class JudgeRunStats(BaseModel):
    """Per-run counters (one LLMJudge instance judges one run)."""

    model_config = ConfigDict(extra="forbid")

    judge_total: int = Field(default=0, description="Verdicts, skipped ones included.")
    judge_failed: int = Field(default=0, description="Verdicts that are not ok, skipped ones included.")
    attempts_total: int = Field(default=0, description="Model calls (ORO's judge_inference_total).")
    attempts_failed: int = Field(default=0, description="Model calls without a usable reply.")
    consecutive_failed: int = 0
    breaker_open: bool = False
    blacklisted: list[str] = Field(
        default_factory=list, description="Models blacklisted for the run (blacklist_scope='run' only)."
    )


def run_failed(judge_total: int, judge_failed: int) -> bool:
    """ORO's rule: a run fails (so another validator retries it) when >= 3 judged and over half failed."""
    return judge_total >= 3 and judge_failed > judge_total / 2


class LLMJudge:
    """Grade trajectories with a pool of judge models, rotating through them on failure.

    Args:
        backends: ``(model_name, backend)`` pairs in preference order; ``model_name`` is sent as the
            request's model (several names may share one backend, e.g. one proxy serving many models).
        config: Retry and sampling knobs.
        sleep: Sleep function (tests inject a recorder).
        name: Judge name stamped on verdicts.
    """

    def __init__(
        self,
        backends: Sequence[tuple[str, ChatBackend]],
        config: LLMJudgeConfig | None = None,
        *,
        sleep: Callable[[float], None] = time.sleep,
        name: str = "llm",
    ) -> None:
        if not backends:
            raise ValueError("LLMJudge.backends must name at least one (model, backend) pair")
        self.backends = list(backends)
        self.config = config or LLMJudgeConfig()
        self.name = name
        self._sleep = sleep
        self.stats = JudgeRunStats()

    def new_run(self) -> None:
        """Forget blacklist, breaker and counters before judging another run."""
        self.stats = JudgeRunStats()

    @property
    def run_failed(self) -> bool:
        """Whether the current run must be marked failed: :func:`run_failed` over model calls (ORO)."""
        return run_failed(self.stats.attempts_total, self.stats.attempts_failed)

    def _pick(self, cursor: int, blocked: Sequence[str]) -> int | None:
        """Index of the first model not in ``blocked`` at or after ``cursor`` (cyclically)."""
        n = len(self.backends)
        for offset in range(n):
            index = (cursor + offset) % n
            if self.backends[index][0] not in blocked:
                return index
        return None

    def _record(self, verdict: JudgeVerdict) -> JudgeVerdict:
        self.stats.judge_total += 1
        self.stats.attempts_total += len(verdict.attempts)
        self.stats.attempts_failed += sum(a.outcome != "ok" for a in verdict.attempts)
        if verdict.status is JudgeStatus.OK:
            self.stats.consecutive_failed = 0
        else:
            # Skipped problems count as failed: the judge could not grade them.
            self.stats.judge_failed += 1
            if verdict.status is not JudgeStatus.SKIPPED_BREAKER:
                self.stats.consecutive_failed += 1
                if self.stats.consecutive_failed >= self.config.breaker_threshold:
                    self.stats.breaker_open = True
        return verdict

    def judge(self, judge_input: JudgeInput, *, problem_id: str | None = None) -> JudgeVerdict:
        """Grade one trajectory; never raises for model failures (the verdict's status says what happened).

        Raises:
            Only errors that are not :class:`BackendError` (bugs, a ScriptedBackend running dry in tests).
        """
        if self.stats.breaker_open:
            return self._record(JudgeVerdict(
                problem_id=problem_id, judge=self.name, status=JudgeStatus.SKIPPED_BREAKER,
                explanation=f"circuit breaker open after {self.config.breaker_threshold} consecutive "
                "problems whose judge calls all failed",
            ))
        cfg = self.config
        messages = judge_messages(cap_judge_text(render_judge_input(judge_input), cfg.max_input_chars))
        attempts: list[JudgeAttempt] = []
        # ORO forgets its blacklist after each trajectory; the run scope shares one list across problems.
        blocked = self.stats.blacklisted if cfg.blacklist_scope == "run" else []

        def give_up(status: JudgeStatus, why: str) -> JudgeVerdict:
            return self._record(JudgeVerdict(problem_id=problem_id, judge=self.name, status=status,
                                             explanation=why, attempts=attempts))

        cursor = 0  # every problem starts with the most preferred model still allowed
        for attempt in range(cfg.max_attempts):
            index = self._pick(cursor, blocked)
            if index is None:
                return give_up(JudgeStatus.PARSE_ERROR, "every judge model returned unparseable replies")
            model, backend = self.backends[index]
            cursor = index + 1  # any failure below moves on to the next model
            request = ChatRequest(model=model, messages=messages, temperature=cfg.temperature,
                                  max_tokens=cfg.max_tokens, timeout_s=cfg.timeout_s,
                                  extra_body={"guided_choice": list(GUIDED_REPLIES)} if cfg.guided else {})
            try:
                response = backend.complete(request)
            except AuthError as error:
                if error.status_code not in cfg.abort_statuses:
                    attempts.append(self._back_off(model, "http_error", error, attempt))
                    continue
                attempts.append(JudgeAttempt(model=model, outcome="auth", status_code=error.status_code,
                                             detail=str(error)[:300]))
                return give_up(JudgeStatus.UNAVAILABLE, "judge credentials rejected; aborted")
            except InvalidResponse as error:
                blocked.append(model)
                attempts.append(JudgeAttempt(model=model, outcome="invalid_response", status_code=200,
                                             detail=str(error)[:300]))
                continue
            except Unavailable as error:
                if error.reason in ("timeout", "connection"):
                    attempts.append(JudgeAttempt(model=model, outcome=error.reason, detail=str(error)[:300]))
                    continue
                attempts.append(self._back_off(model, "server", error, attempt))
                continue
            except BackendError as error:
                outcome = "rate_limited" if error.status_code == 429 else "http_error"
                attempts.append(self._back_off(model, outcome, error, attempt))
                continue
            text = response.content if response.content.strip() else response.reasoning_content
            parsed = parse_judge_reply(text)
            if parsed is None:
                blocked.append(model)
                attempts.append(JudgeAttempt(model=model, outcome="unparseable", status_code=200,
                                             detail=text[:300]))
                continue
            attempts.append(JudgeAttempt(model=model, outcome="ok", status_code=200))
            return self._record(JudgeVerdict(
                problem_id=problem_id, judge=self.name, status=JudgeStatus.OK, score=parsed.score,
                explanation=parsed.explanation, model=model + (GUIDED_MODEL_SUFFIX if cfg.guided else ""),
                parse_stage=parsed.stage, attempts=attempts,
            ))
        if self._pick(0, blocked) is None:
            return give_up(JudgeStatus.PARSE_ERROR, "every judge model returned unparseable replies")
        return give_up(JudgeStatus.UNAVAILABLE, f"no usable judge reply in {cfg.max_attempts} attempts")

    def _back_off(self, model: str, outcome: str, error: BackendError, attempt: int) -> JudgeAttempt:
        delay = min(self.config.backoff_base_s * 2**attempt, self.config.backoff_cap_s)
        self._sleep(delay)
        return JudgeAttempt(model=model, outcome=outcome, status_code=error.status_code,
                            detail=str(error)[:300], slept_s=delay)
