"""Typed client of the shoparena environment server (``shoparena env serve``), stdlib only.

One session per episode::

    client = EnvClient("http://127.0.0.1:5640")
    episode = client.reset(problem_id="p1")            # or reset(seed=7)
    while not episode.done:
        episode = client.step(episode.session_id, my_policy(episode.system_prompt, episode.observation))
    print(episode.reward, episode.verdict["success"])
    client.close(episode.session_id)

Every refusal of the server (unknown session, malformed action, oversized body, too many sessions, a step
past its timeout) raises :class:`EnvServerError` with the server's status and one-line message.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from typing import Any

from shoparena.agent_sdk import wire

DEFAULT_ENV_URL = "http://127.0.0.1:5640"


class EnvServerError(Exception):
    """The server refused a request (``status`` is the HTTP status, 0 when it could not be reached)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"{status}: {message}")
        self.status = status
        self.message = message


@dataclass(slots=True)
class Episode:
    """One session's state as the server reports it (the server's ``EpisodeView``).

    Attributes:
        session_id: The session (one per episode).
        problem_id: The problem being played.
        observation: The environment's user prompt for the next step (request, dialogue, tool results).
        system_prompt: The system prompt listing the tools.
        tools: The episode's tool schemas, OpenAI style.
        step_index: 1-based number of the step about to be taken.
        done: True once the episode has ended.
        reward: 1.0 when the ended episode's verdict succeeds, else 0.0.
        terminated: Ended by ``terminate`` or an empty step.
        truncated: Ended by the step cap.
        termination_reason: Why it ended.
        tool_results: Results of the last step's calls.
        verdict: Outcome, scores and checks of the ended episode.
    """

    session_id: str
    problem_id: str
    observation: str
    system_prompt: str
    tools: list[dict[str, Any]]
    step_index: int
    done: bool = False
    reward: float = 0.0
    terminated: bool = False
    truncated: bool = False
    termination_reason: str | None = None
    tool_results: list[Any] = field(default_factory=list)
    verdict: dict[str, Any] | None = None

    @classmethod
    def from_json(cls, payload: Any) -> Episode:
        """Build from the server's JSON (unknown keys are an error: client and server disagree)."""
        if not isinstance(payload, dict):
            raise EnvServerError(0, f"expected a JSON object from the server, got {type(payload).__name__}")
        names = {f.name for f in fields(cls)}
        extra = sorted(set(payload) - names)
        if extra:
            raise EnvServerError(0, f"unexpected field(s) {extra} in the server's answer: client out of date")
        try:
            return cls(**payload)
        except TypeError as exc:
            raise EnvServerError(0, f"incomplete answer from the server: {exc}") from None


class EnvClient:
    """HTTP client of the environment server.

    Args:
        base_url: The server's address, e.g. ``http://127.0.0.1:5640``.
        timeout: Per-request timeout in seconds (keep it above the server's step timeout).
    """

    def __init__(self, base_url: str = DEFAULT_ENV_URL, timeout: float = 120.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout

    def _request(self, method: str, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        try:
            status, _, raw = wire.request(
                method,
                self.base_url + path,
                body=data,
                headers={"content-type": "application/json"},
                timeout=self.timeout,
            )
        except OSError as exc:
            raise EnvServerError(0, f"{self.base_url}: unreachable: {exc}") from None
        if 200 <= status < 300:
            try:
                return json.loads(raw or b"null")
            except ValueError:
                raise EnvServerError(status, f"the server's answer is not JSON: {raw[:200]!r}") from None
        try:
            message = json.loads(raw).get("error") or raw.decode(errors="replace")
        except (ValueError, AttributeError):
            message = raw.decode(errors="replace")[:500]
        raise EnvServerError(status, str(message))

    def health(self) -> dict[str, Any]:
        """The server's health record (``status``, open ``sessions``)."""
        return self._request("GET", "/health")

    def problems(self) -> list[dict[str, Any]]:
        """The public views of the server's problems (id, query, category, ...)."""
        return self._request("GET", "/problems")

    def reset(self, problem_id: str | None = None, seed: int | None = None) -> Episode:
        """Start an episode (a new session) on a problem, named or drawn by ``seed``."""
        return Episode.from_json(self._request("POST", "/sessions", {"problem_id": problem_id, "seed": seed}))

    def step(self, session_id: str, action: str | dict[str, Any] | list[dict[str, Any]]) -> Episode:
        """Run one step: tagged completion text, a native assistant message, or a list of calls."""
        return Episode.from_json(self._request("POST", f"/sessions/{session_id}/step", {"action": action}))

    def state(self, session_id: str) -> Episode:
        """The session's current state."""
        return Episode.from_json(self._request("GET", f"/sessions/{session_id}"))

    def trajectory(self, session_id: str) -> dict[str, Any]:
        """The episode so far as a ``records.Trajectory`` JSON object."""
        return self._request("GET", f"/sessions/{session_id}/trajectory")

    def close(self, session_id: str) -> None:
        """Close the session (its episode is discarded on the server)."""
        self._request("DELETE", f"/sessions/{session_id}")


__all__ = ["DEFAULT_ENV_URL", "EnvClient", "EnvServerError", "Episode"]
