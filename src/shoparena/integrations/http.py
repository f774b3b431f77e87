"""The HTTP environment server: one session per episode over a :class:`ShopTaskSet`.

For trainers that run rollouts in another process or machine (the typed client is
:class:`shoparena.agent_sdk.env_client.EnvClient`). Endpoints, all JSON:

* ``POST /sessions`` ``{"problem_id": ..., "seed": ...}`` starts an episode (the problem by id, or drawn
  by the seed as in the Gymnasium door) and answers 201 with an :class:`EpisodeView`.
* ``POST /sessions/{id}/step`` ``{"action": ...}`` runs one step. The action is a tagged completion string,
  a native assistant message (``{"role": "assistant", "tool_calls": [...]}``) or a list of
  ``{"name", "parameters"}`` calls, exactly what ``ShopEnv.step`` takes. When the episode ends the view
  carries the reward and the verdict.
* ``GET /sessions/{id}`` is the session's state; ``GET /sessions/{id}/trajectory`` the episode as a
  ``records.Trajectory``; ``DELETE /sessions/{id}`` closes it.
* ``GET /health``, ``GET /problems`` (the problems' public views).

Limits: at most ``max_sessions`` open sessions (503 beyond; idle ones expire after ``idle_timeout_s``, ended
episodes' sessions ``ended_timeout_s`` after their last use, reaped on every request), a step runs at most
``step_timeout_s`` (504, and the session is closed), a request body is at most ``max_body_bytes`` (413), a
step runs at most ``max_calls_per_step`` calls (the rest are dropped, noted on the step), an action over
32,768 characters is not parsed (a parse issue, the episode ends as an empty step), an observation over
``max_observation_chars`` ends the episode (``agent_error``, the observation one line saying so), a problem is
started at most ``max_episodes_per_problem`` times (429; 0: no limit), and a request whose ``Host`` header is
not a local name (or one of ``allowed_hosts``) gets 403 (DNS rebinding). Every error is JSON ``{"error":
"...", "status": N}`` with one line that names the session or field; no request can crash the server.

What a client learns: the problems' public views, the observations, and for an ended episode the reward and
the verdict's public form (:meth:`shoparena.records.verdict.Verdict.public_view`: which checks passed, never
what was expected), so replaying a problem in a new session teaches nothing a search would not. Every ended
episode gets its verdict, also one ended by a fault of the server (``infra_error``).
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import orjson
from pydantic import BaseModel, ConfigDict, Field

from shoparena.env.environment import ShopEnv, TerminationReason
from shoparena.integrations.config import (
    DEFAULT_ENDED_TIMEOUT_S,
    DEFAULT_IDLE_TIMEOUT_S,
    DEFAULT_MAX_BODY_BYTES,
    DEFAULT_MAX_CALLS_PER_STEP,
    DEFAULT_MAX_EPISODES_PER_PROBLEM,
    DEFAULT_MAX_SESSIONS,
    DEFAULT_PORT,
    DEFAULT_STEP_TIMEOUT_S,
    host_allowed,
)
from shoparena.integrations.tasks import (
    MAX_OBSERVATION_CHARS,
    ShopTaskSet,
    TaskSetError,
    bounded_observation,
    observation_text,
    verdict_summary,
)
from shoparena.records.problem import Problem

logger = logging.getLogger(__name__)


class ResetRequest(BaseModel):
    """Body of ``POST /sessions``: name the problem, or let the seed draw it (neither: seed None)."""

    model_config = ConfigDict(extra="forbid")

    problem_id: str | None = Field(default=None, max_length=512, description="The problem to play.")
    seed: int | None = Field(
        default=None,
        ge=0,
        le=2**63 - 1,
        strict=True,  # "1" is not a seed
        description="Draws the problem when problem_id is not given.",
    )


class StepRequest(BaseModel):
    """Body of ``POST /sessions/{id}/step``."""

    model_config = ConfigDict(extra="forbid")

    action: str | dict[str, Any] | list[dict[str, Any]] = Field(
        description="Tagged completion text, a native assistant message, or a list of {name, parameters}."
    )


class EpisodeView(BaseModel):
    """What the server answers about a session (the same shape for reset, step and state)."""

    model_config = ConfigDict(extra="forbid")

    session_id: str
    problem_id: str
    observation: str = Field(description="The environment's user prompt for the next step.")
    system_prompt: str = Field(description="The system prompt listing the tools.")
    tools: list[dict[str, Any]] = Field(description="The episode's tool schemas, OpenAI style.")
    step_index: int = Field(description="1-based number of the step about to be taken.")
    done: bool = False
    reward: float = Field(default=0.0, description="1.0 when the ended episode's verdict succeeds.")
    terminated: bool = False
    truncated: bool = Field(default=False, description="The step cap ended the episode.")
    termination_reason: str | None = None
    tool_results: list[Any] = Field(default_factory=list, description="Results of the last step's calls.")
    verdict: dict[str, Any] | None = Field(
        default=None, description="The verdict's public form when done: outcome, scores, checks passed."
    )


class EnvServerError(Exception):
    """A request the server refuses: an HTTP status and one line."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(slots=True)
class _Session:
    session_id: str
    problem: Problem
    env: ShopEnv
    last_used: float
    lock: threading.Lock = field(default_factory=threading.Lock)
    view: EpisodeView | None = None


class SessionStore:
    """Open sessions, bounded in number, expiring when idle. Thread-safe."""

    def __init__(
        self,
        tasks: ShopTaskSet,
        *,
        max_sessions: int = DEFAULT_MAX_SESSIONS,
        idle_timeout_s: float = DEFAULT_IDLE_TIMEOUT_S,
        ended_timeout_s: float = DEFAULT_ENDED_TIMEOUT_S,
        clock: Any = time.monotonic,
        max_calls_per_step: int = DEFAULT_MAX_CALLS_PER_STEP,
        max_episodes_per_problem: int = DEFAULT_MAX_EPISODES_PER_PROBLEM,
        max_observation_chars: int = MAX_OBSERVATION_CHARS,
    ) -> None:
        if max_sessions < 1:
            raise ValueError(f"SessionStore.max_sessions must be >= 1, got {max_sessions}")
        self.tasks = tasks
        self.max_calls_per_step = max_calls_per_step
        self.max_episodes_per_problem = max_episodes_per_problem
        self.max_observation_chars = max_observation_chars
        self._episodes: dict[str, int] = {}
        self.max_sessions = max_sessions
        self.idle_timeout_s = idle_timeout_s
        self.ended_timeout_s = ended_timeout_s
        self._clock = clock
        self._sessions: dict[str, _Session] = {}
        self._lock = threading.Lock()
        self.expired = 0

    def __len__(self) -> int:
        return len(self._sessions)

    def reap(self) -> int:
        """Close sessions idle for longer than ``idle_timeout_s`` (an ended episode's: ``ended_timeout_s``,
        so its history is released soon after the client read the verdict); returns how many."""
        now = self._clock()
        with self._lock:
            stale = [
                key
                for key, s in self._sessions.items()
                if now - s.last_used > (self.ended_timeout_s if s.env.session.done else self.idle_timeout_s)
            ]
            for key in stale:
                del self._sessions[key]
            self.expired += len(stale)
        return len(stale)

    def open(self, request: ResetRequest) -> EpisodeView:
        self.reap()
        try:
            problem = (
                self.tasks.problem(request.problem_id)
                if request.problem_id is not None
                else self.tasks.pick(request.seed)
            )
        except TaskSetError as exc:
            raise EnvServerError(404, str(exc)) from None
        with self._lock:
            if len(self._sessions) >= self.max_sessions:
                raise EnvServerError(
                    503, f"{len(self._sessions)} sessions open, the limit is {self.max_sessions}: close one"
                )
            played = self._episodes.get(problem.problem_id, 0)
            if self.max_episodes_per_problem and played >= self.max_episodes_per_problem:
                raise EnvServerError(
                    429,
                    f"problem {problem.problem_id!r}: {played} episodes started, "
                    f"the limit is {self.max_episodes_per_problem}",
                )
            self._episodes[problem.problem_id] = played + 1
            session_id = uuid.uuid4().hex
            env = self.tasks.new_env(run_id=session_id, max_calls_per_step=self.max_calls_per_step)
            session = _Session(session_id, problem, env, self._clock())
            self._sessions[session_id] = session
        obs = env.reset(problem)
        session.view = EpisodeView(
            session_id=session_id,
            problem_id=problem.problem_id,
            observation=observation_text(obs),
            system_prompt=obs.system_prompt,
            tools=[t.to_openai() for t in obs.tools],
            step_index=obs.step_index,
        )
        return session.view

    def get(self, session_id: str) -> _Session:
        self.reap()
        with self._lock:
            session = self._sessions.get(session_id)
            if session is None:
                raise EnvServerError(404, f"session {session_id!r}: unknown, closed or expired")
            session.last_used = self._clock()
            return session

    def close(self, session_id: str) -> None:
        with self._lock:
            if self._sessions.pop(session_id, None) is None:
                raise EnvServerError(404, f"session {session_id!r}: unknown, closed or expired")

    def step(self, session_id: str, action: Any) -> EpisodeView:
        """Run one step (blocking; the app runs it in a worker thread under the step timeout)."""
        session = self.get(session_id)
        if not session.lock.acquire(blocking=False):
            raise EnvServerError(409, f"session {session_id!r}: a step is already running")
        try:
            if session.env.session.done:
                raise EnvServerError(409, f"session {session_id!r}: the episode has ended; start a new one")
            try:
                result = session.env.step(action)
            except (TypeError, ValueError) as exc:
                if session.env.session.done:  # raised after the episode ended: still deliver its verdict
                    return self._finish(session, {})
                raise EnvServerError(422, f"session {session_id!r}: malformed action: {exc}") from None
            except Exception as exc:  # the server's own fault: the episode ends as infra_error, scored
                session.env.fail(TerminationReason.INFRA_ERROR, f"{type(exc).__name__}: {exc}"[:500])
                return self._finish(session, {})
            assert session.view is not None
            # over the cap the episode ends (agent_error) and the observation is one line saying so
            observation = bounded_observation(session.env, result.observation, self.max_observation_chars)
            done = result.done or session.env.session.done
            update: dict[str, Any] = {
                "observation": observation,
                "step_index": result.observation.step_index,
                "done": done,
                "tool_results": [c.result if c.has_result else None for c in result.step.tool_calls],
            }
            if done:
                return self._finish(session, update)
            session.view = session.view.model_copy(update=update)
            session.last_used = self._clock()
            return session.view
        finally:
            session.lock.release()

    def _finish(self, session: _Session, update: dict[str, Any]) -> EpisodeView:
        """The view of an ended episode, with its reward and public verdict (a scorer's fault gives a
        failed verdict naming it, never a session left without one)."""
        reason = session.env.session.termination_reason
        try:
            verdict = verdict_summary(self.tasks.score(session.problem, session.env.trajectory()))
        except Exception as exc:
            verdict = {
                "problem_id": session.problem.problem_id,
                "profile": self.tasks.scoring_profile,
                "status": "failed_run",
                "success": False,
                "error": f"scoring failed: {type(exc).__name__}: {exc}"[:300],
            }
        assert session.view is not None
        update = {
            "done": True,
            "step_index": len(session.env.session.steps) + 1,
            **update,
            "reward": 1.0 if verdict["success"] else 0.0,
            "terminated": reason != TerminationReason.MAX_STEPS,
            "truncated": reason == TerminationReason.MAX_STEPS,
            "termination_reason": reason,
            "verdict": verdict,
        }
        session.view = session.view.model_copy(update=update)
        session.last_used = self._clock()
        return session.view

    def abandon(self, session_id: str, message: str) -> None:
        """End a session whose step ran past the timeout (its worker thread may still finish it)."""
        with self._lock:
            session = self._sessions.pop(session_id, None)
        if session is not None:
            session.env.fail(TerminationReason.INFRA_ERROR, message)


class BodyLimit:
    """Pure ASGI middleware: a request body over ``max_bytes`` gets a JSON 413 (declared or streamed)."""

    def __init__(self, app: Any, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.max_bytes
        declared = dict(scope.get("headers", ())).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            await _send_json(send, 413, f"request body of {int(declared)} bytes over the limit of {limit}")
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            size += len(message.get("body", b""))
            if size > limit:
                await _send_json(send, 413, f"request body over the limit of {limit} bytes")
                return
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        sent = False

        async def replay() -> dict[str, Any]:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


async def _send_json(send: Any, status: int, message: str) -> None:
    body = orjson.dumps({"error": message, "status": status})
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _validation_line(exc: Any) -> str:
    parts = []
    for err in exc.errors()[:3]:
        where = ".".join(str(x) for x in err.get("loc", ()) if x != "body") or "body"
        parts.append(f"{where}: {err.get('msg', 'invalid')}")
    return "malformed request: " + "; ".join(parts)


def create_app(
    tasks: ShopTaskSet,
    *,
    max_sessions: int = DEFAULT_MAX_SESSIONS,
    idle_timeout_s: float = DEFAULT_IDLE_TIMEOUT_S,
    step_timeout_s: float = DEFAULT_STEP_TIMEOUT_S,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    max_calls_per_step: int = DEFAULT_MAX_CALLS_PER_STEP,
    max_episodes_per_problem: int = DEFAULT_MAX_EPISODES_PER_PROBLEM,
    allowed_hosts: frozenset[str] | set[str] = frozenset(),
    max_observation_chars: int = MAX_OBSERVATION_CHARS,
) -> Any:
    """The FastAPI app serving ``tasks`` (see the module docstring for the endpoints and limits)."""
    from fastapi import FastAPI, Request
    from fastapi.exceptions import RequestValidationError
    from fastapi.responses import Response
    from starlette.exceptions import HTTPException as StarletteHTTPException

    store = SessionStore(
        tasks,
        max_sessions=max_sessions,
        idle_timeout_s=idle_timeout_s,
        max_calls_per_step=max_calls_per_step,
        max_episodes_per_problem=max_episodes_per_problem,
        max_observation_chars=max_observation_chars,
    )
    app = FastAPI(title="shoparena environment server", docs_url=None, redoc_url=None)
    app.state.store = store

    def error(status: int, message: str) -> Response:
        return Response(
            orjson.dumps({"error": message, "status": status}), status, media_type="application/json"
        )

    def ok(payload: Any, status: int = 200) -> Response:
        if isinstance(payload, BaseModel):
            payload = payload.model_dump(mode="json")
        try:
            body = orjson.dumps(payload)
        except TypeError:  # text orjson refuses (invalid Unicode from an old record): escaped, not a 500
            body = json.dumps(payload, default=str).encode()
        return Response(body, status, media_type="application/json")

    allowed = frozenset(h.lower() for h in allowed_hosts)

    @app.middleware("http")
    async def _guard(request: Request, call_next: Any) -> Response:
        # A web page that rebinds its own name to this machine sends that name: refused (DNS rebinding).
        host = request.headers.get("host")
        if not host_allowed(host, allowed):
            refused = f"Host {str(host)[:100]!r} is not a local name; serve it with --allow-host NAME"
            return error(403, refused)
        try:
            return await call_next(request)
        except Exception as exc:  # a JSON 500 and one log line (the framework would log a traceback)
            line = f"{request.method} {request.url.path}: {type(exc).__name__}: {' '.join(str(exc).split())}"
            logger.error("%s", line[:300])
            return error(500, line[:300])

    @app.exception_handler(EnvServerError)
    async def _refused(request: Request, exc: EnvServerError) -> Response:
        return error(exc.status, exc.message)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> Response:
        return error(422, _validation_line(exc))

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> Response:
        return error(exc.status_code, f"{request.method} {request.url.path}: {exc.detail}")

    @app.exception_handler(Exception)
    async def _crash(request: Request, exc: Exception) -> Response:
        return error(500, f"{request.method} {request.url.path}: {type(exc).__name__}: {exc}")

    @app.get("/health")
    async def health() -> Response:
        return ok({"status": "healthy", "service": "shoparena-env", "sessions": len(store)})

    @app.get("/problems")
    async def problems() -> Response:
        return ok([p.public_view() for p in tasks.problems])

    @app.post("/sessions")
    async def open_session(body: ResetRequest) -> Response:
        view = await asyncio.get_running_loop().run_in_executor(None, store.open, body)
        return ok(view, 201)

    @app.get("/sessions/{session_id}")
    async def state(session_id: str) -> Response:
        return ok(store.get(session_id).view)

    @app.get("/sessions/{session_id}/trajectory")
    async def trajectory(session_id: str) -> Response:
        return ok(store.get(session_id).env.trajectory())

    @app.delete("/sessions/{session_id}")
    async def close(session_id: str) -> Response:
        store.close(session_id)
        return ok({"closed": session_id})

    @app.post("/sessions/{session_id}/step")
    async def step(session_id: str, body: StepRequest) -> Response:
        store.get(session_id)  # 404 before a thread is spent
        try:
            # shield: on timeout stop waiting at once (the worker thread may still finish the step)
            work = asyncio.get_running_loop().run_in_executor(None, store.step, session_id, body.action)
            view = await asyncio.wait_for(asyncio.shield(work), timeout=step_timeout_s)
        except TimeoutError:
            message = f"session {session_id!r}: the step ran past {step_timeout_s:g} s; the session is closed"
            store.abandon(session_id, message)
            raise EnvServerError(504, message) from None
        return ok(view)

    return BodyLimit(app, max_body_bytes)


def serve(
    tasks: ShopTaskSet,
    host: str = "127.0.0.1",
    port: int = DEFAULT_PORT,
    *,
    log_level: str = "warning",
    **limits: Any,
) -> None:
    """Serve ``tasks`` with uvicorn until interrupted (one process: sessions live in its memory).

    A specific bind address is a name the server answers to; a wildcard (``0.0.0.0``) is not: name the
    hosts remote clients use in ``allowed_hosts``.
    """
    import uvicorn

    if host not in ("0.0.0.0", "::", ""):
        limits["allowed_hosts"] = frozenset({*limits.get("allowed_hosts", ()), host})

    uvicorn.Server(
        uvicorn.Config(
            create_app(tasks, **limits), host=host, port=port, log_level=log_level, access_log=False
        )
    ).run()


__all__ = [
    "DEFAULT_PORT",
    "BodyLimit",
    "EnvServerError",
    "EpisodeView",
    "ResetRequest",
    "SessionStore",
    "StepRequest",
    "create_app",
    "serve",
]
