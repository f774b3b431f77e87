"""The HTTP door: a real uvicorn server on an ephemeral port, driven by the SDK's typed client."""

from __future__ import annotations

import json
import time
import urllib.request

import pytest
from door_helpers import play_http

from shoparena.agent_sdk.env_client import EnvClient, EnvServerError, Episode
from shoparena.eval.server import LoopbackServer
from shoparena.integrations.http import EpisodeView, SessionStore, create_app
from shoparena.integrations.tasks import ShopTaskSet


@pytest.fixture(scope="module")
def served(tasks):
    app = create_app(tasks, max_sessions=3, max_body_bytes=64 * 1024)
    with LoopbackServer(app) as srv:
        yield srv, app.app.state.store


@pytest.fixture
def server(served):
    return served[0]


@pytest.fixture
def client(served) -> EnvClient:
    srv, store = served
    yield EnvClient(f"http://127.0.0.1:{srv.port}", timeout=30)
    store.reap()
    for sid in list(store._sessions):  # leave no session behind: the server allows only 3
        store.close(sid)


def test_planner_plays_over_http(client, tasks) -> None:
    assert client.health()["status"] == "healthy"
    assert [p["problem_id"] for p in client.problems()] == [p.problem_id for p in tasks.problems]
    verdicts = [play_http(client, p.problem_id) for p in tasks.problems]
    assert any(v["success"] for v in verdicts)


def test_client_and_server_agree_on_the_episode_fields() -> None:
    assert set(EpisodeView.model_fields) == set(Episode.__dataclass_fields__)


def test_native_and_call_list_actions_and_the_trajectory(client, tasks) -> None:
    episode = client.reset(seed=3)
    assert episode.problem_id == tasks.pick(3).problem_id
    call = {"name": "find_product", "parameters": {"q": "shoes", "page": 1}}
    after = client.step(episode.session_id, [call])
    assert after.step_index == 2 and not after.done and after.tool_results[0]
    native = {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": "c1", "function": {"name": "terminate", "arguments": '{"status": "failure"}'}}],
    }
    end = client.step(episode.session_id, native)
    assert end.done and end.terminated and end.termination_reason == "terminate"
    traj = client.trajectory(episode.session_id)
    assert [c["name"] for s in traj["steps"] for c in s["tool_calls"]] == ["find_product", "terminate"]
    assert client.state(episode.session_id) == end
    with pytest.raises(EnvServerError) as info:
        client.step(episode.session_id, "<tool_call>[]</tool_call>")
    assert info.value.status == 409 and "ended" in info.value.message


def raw(server, method: str, path: str, body: bytes | None = None) -> tuple[int, dict]:
    request = urllib.request.Request(
        f"http://127.0.0.1:{server.port}{path}",
        data=body,
        method=method,
        headers={"content-type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_bad_requests_get_json_errors_and_the_server_survives(server, client) -> None:
    status, body = raw(server, "POST", "/sessions/nope/step", b'{"action": "x"}')
    assert status == 404 and "session 'nope'" in body["error"]
    episode = client.reset(seed=0)
    path = f"/sessions/{episode.session_id}/step"
    cases = [
        (b"{not json", 422, "malformed request"),
        (b'{"act": "x"}', 422, "action"),
        (b'{"action": 5}', 422, "action"),
        (b'{"action": {"foo": 1}}', 422, "malformed action"),
        (b'{"action": "' + b"x" * (70 * 1024) + b'"}', 413, "over the limit"),
    ]
    for payload, want_status, want_text in cases:
        status, body = raw(server, "POST", path, payload)
        assert (status, body["status"]) == (want_status, want_status), (payload[:40], body)
        assert want_text in body["error"]
    status, body = raw(server, "GET", "/no/such/route")
    assert status == 404 and "error" in body
    status, body = raw(server, "POST", "/sessions", b'{"problem_id": "missing"}')
    assert status == 404 and "missing" in body["error"]
    assert client.state(episode.session_id).step_index == 1  # nothing above touched the episode
    assert client.health()["status"] == "healthy"


def test_sessions_are_bounded(client) -> None:
    opened = [client.reset(seed=i) for i in range(3)]
    with pytest.raises(EnvServerError) as info:
        client.reset(seed=9)
    assert info.value.status == 503 and "limit is 3" in info.value.message
    client.close(opened[0].session_id)
    client.reset(seed=9)
    with pytest.raises(EnvServerError) as closed:
        client.state(opened[0].session_id)
    assert closed.value.status == 404


def test_idle_sessions_expire(tasks) -> None:
    now = [0.0]
    store = SessionStore(tasks, max_sessions=1, idle_timeout_s=10, clock=lambda: now[0])
    from shoparena.integrations.http import EnvServerError as ServerError
    from shoparena.integrations.http import ResetRequest

    first = store.open(ResetRequest(seed=1))
    now[0] = 5.0
    store.get(first.session_id)  # use keeps it alive
    now[0] = 14.0
    with pytest.raises(ServerError):
        store.open(ResetRequest(seed=2))  # still open, the limit is 1
    now[0] = 25.0
    second = store.open(ResetRequest(seed=2))
    assert store.expired == 1 and len(store) == 1 and second.session_id != first.session_id


def test_an_ended_episode_releases_its_session_long_before_the_idle_expiry(tasks) -> None:
    """An ended episode's session (history, trajectory, last observation) is closed ``ended_timeout_s``
    after its last use, while a live one waits the idle timeout: three ended sessions no longer hold their
    memory until the idle expiry (issue 52)."""
    from shoparena.integrations.http import EnvServerError as ServerError
    from shoparena.integrations.http import ResetRequest

    now = [0.0]
    store = SessionStore(tasks, idle_timeout_s=600, ended_timeout_s=30, clock=lambda: now[0])
    live = store.open(ResetRequest(seed=1))
    ended = store.open(ResetRequest(seed=2))
    view = store.step(ended.session_id, [{"name": "terminate", "parameters": {"status": "failure"}}])
    assert view.done and view.verdict is not None
    now[0] = 20.0
    assert store.get(ended.session_id).view.done  # the verdict stays readable for a while after the end
    now[0] = 51.0
    assert store.reap() == 1 and len(store) == 1
    with pytest.raises(ServerError):
        store.get(ended.session_id)
    assert store.get(live.session_id).view.done is False  # a live episode keeps the idle timeout


def test_unreachable_server_is_one_line() -> None:
    with pytest.raises(EnvServerError) as info:
        EnvClient("http://127.0.0.1:9", timeout=2).health()
    assert info.value.status == 0 and "unreachable" in info.value.message


class SlowEngine:
    """The shared engine, with a search that takes half a second."""

    def __init__(self, engine) -> None:
        self._engine = engine

    def __getattr__(self, name):
        return getattr(self._engine, name)

    def find_product(self, *args, **kwargs):
        time.sleep(0.5)
        return self._engine.find_product(*args, **kwargs)


def test_a_step_past_the_timeout_is_504_and_closes_the_session(tasks) -> None:
    slow = ShopTaskSet(engine=SlowEngine(tasks.engine), problems=tasks.problems, env_options={"max_steps": 4})
    with LoopbackServer(create_app(slow, step_timeout_s=0.1)) as srv:
        client = EnvClient(f"http://127.0.0.1:{srv.port}", timeout=30)
        episode = client.reset(seed=0)
        with pytest.raises(EnvServerError) as info:
            client.step(
                episode.session_id, [{"name": "find_product", "parameters": {"q": "shoes", "page": 1}}]
            )
        assert info.value.status == 504 and "past 0.1 s" in info.value.message
        with pytest.raises(EnvServerError) as gone:
            client.state(episode.session_id)
        assert gone.value.status == 404
        assert client.health()["sessions"] == 0
