"""The env server as an untrusted client uses it (issue 31, findings 2, 3 and 8).

No ground truth in what it answers (the replay attack scores no better than random), a verdict for every
ended episode (a lone surrogate is the policy's failure, a fault of the server still ends with a verdict),
every field validated, calls per step capped, and only local Host names served.
"""

from __future__ import annotations

import json
import random
import urllib.request

import pytest

from shoparena.env.environment import ShopEnv
from shoparena.eval.server import LoopbackServer
from shoparena.integrations.http import EnvServerError, ResetRequest, SessionStore, create_app


def _ids(value) -> set[str]:
    """Every string in a JSON value (where a leaked product id would be)."""
    if isinstance(value, str):
        return {value}
    if isinstance(value, dict):
        return set().union(*(_ids(v) for v in value.values()), *(_ids(k) for k in value)) if value else set()
    if isinstance(value, list):
        return set().union(*(_ids(v) for v in value)) if value else set()
    return set()


def _finish(store: SessionStore, problem_id: str, ids: list[str]) -> dict:
    view = store.open(ResetRequest(problem_id=problem_id))
    calls = [
        {"name": "recommend_product", "parameters": {"product_ids": ",".join(ids)}},
        {"name": "terminate", "parameters": {"status": "success"}},
    ]
    end = store.step(view.session_id, calls)
    assert end.done and end.verdict is not None
    store.close(view.session_id)
    return end.model_dump(mode="json")


def test_the_replay_attack_scores_no_better_than_recommending_at_random(tasks) -> None:
    store = SessionStore(tasks)
    catalog = sorted(p.product_id for p in tasks.engine.iter_products())
    known = set(catalog)
    rng = random.Random(31)
    attack = random_policy = 0
    for problem in tasks.problems:
        throwaway = rng.sample(catalog, 5)
        first = _finish(store, problem.problem_id, throwaway)
        # What the attacker reads back: any catalog id in the answer it did not send itself.
        learned = sorted((_ids(first) & known) - set(throwaway))
        truth = {s.gt_product_id for s in tasks.score(problem, _trajectory(tasks, problem, throwaway)).slots}
        assert not truth & _ids(first) - set(throwaway), "ground truth in a verdict shown to a client"
        assert "expected" not in json.dumps(first)
        replay = _finish(store, problem.problem_id, learned or throwaway)
        attack += replay["reward"] == 1.0
        random_policy += _finish(store, problem.problem_id, rng.sample(catalog, 5))["reward"] == 1.0
    assert attack <= random_policy
    assert attack == 0  # the known answer of finding 2 was 12 of 12


def _trajectory(tasks, problem, ids):
    env = tasks.new_env()
    env.reset(problem)
    env.step([{"name": "recommend_product", "parameters": {"product_ids": ",".join(ids)}}])
    return env.trajectory()


def test_a_lone_surrogate_in_the_terminating_step_still_delivers_the_verdict(tasks) -> None:
    store = SessionStore(tasks)
    view = store.open(ResetRequest(seed=1))
    native = {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {"function": {"name": "find_product", "arguments": '{"q": "shoes \\ud83d", "page": 1}'}},
            {"function": {"name": "terminate", "arguments": '{"status": "success"}'}},
        ],
    }
    end = store.step(view.session_id, native)
    assert end.done and end.verdict is not None and end.verdict["status"] == "scored"
    assert end.termination_reason == "terminate" and end.reward == 0.0
    assert "lone surrogate" in end.tool_results[0]
    app = create_app(tasks)
    with LoopbackServer(app) as srv:
        status, body = _raw(srv, "POST", "/sessions", b'{"seed": 1}')
        sid = body["session_id"]
        payload = json.dumps({"action": native}).encode()
        status, body = _raw(srv, "POST", f"/sessions/{sid}/step", payload)
        assert status == 200 and body["done"] and body["verdict"]["status"] == "scored"
        status, trajectory = _raw(srv, "GET", f"/sessions/{sid}/trajectory")
        assert status == 200 and trajectory["steps"][0]["tool_calls"][0]["parameters"]["q"] == "shoes \ufffd"


def test_a_fault_of_the_server_mid_step_still_ends_the_episode_with_a_verdict(tasks, monkeypatch) -> None:
    store = SessionStore(tasks)
    view = store.open(ResetRequest(seed=2))

    def broken(self, call, session):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(ShopEnv, "_run_call", broken)
    end = store.step(view.session_id, [{"name": "find_product", "parameters": {"q": "x", "page": 1}}])
    assert end.done and end.termination_reason == "infra_error" and end.verdict is not None
    assert end.verdict["success"] is False
    with pytest.raises(EnvServerError) as again:
        store.step(view.session_id, "<tool_call>[]</tool_call>")
    assert again.value.status == 409


def test_calls_per_step_and_episodes_per_problem_are_capped(tasks) -> None:
    store = SessionStore(tasks, max_calls_per_step=4, max_episodes_per_problem=2)
    problem = tasks.problems[0].problem_id
    view = store.open(ResetRequest(problem_id=problem))
    calls = [{"name": "find_product", "parameters": {"q": f"shoe {i}", "page": 1}} for i in range(3000)]
    after = store.step(view.session_id, calls)
    assert len(after.tool_results) == 4
    assert len(after.model_dump_json()) < 200_000  # 3,000 calls answered 11.8 MB before the cap
    store.open(ResetRequest(problem_id=problem))
    with pytest.raises(EnvServerError) as third:
        store.open(ResetRequest(problem_id=problem))
    assert third.value.status == 429 and "limit is 2" in third.value.message


def _raw(srv, method: str, path: str, body: bytes | None = None, host: str | None = None) -> tuple[int, dict]:
    headers = {"content-type": "application/json"}
    if host is not None:
        headers["host"] = host
    request = urllib.request.Request(
        f"http://127.0.0.1:{srv.port}{path}", data=body, method=method, headers=headers
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_every_field_is_validated_and_only_local_hosts_are_served(tasks) -> None:
    app = create_app(tasks, allowed_hosts={"trainer.lan"})
    with LoopbackServer(app) as srv:
        for payload, field in [
            (b'{"seed": -1}', "seed"),
            (b'{"seed": 99999999999999999999999}', "seed"),
            (b'{"seed": "x"}', "seed"),
            (json.dumps({"problem_id": "p" * 600}).encode(), "problem_id"),
        ]:
            status, body = _raw(srv, "POST", "/sessions", payload)
            assert status == 422 and field in body["error"] and "\n" not in body["error"], body
        status, body = _raw(srv, "GET", "/health", host="evil.example:5640")
        assert status == 403 and "not a local name" in body["error"]
        for host in ("localhost:5640", "127.0.0.1", "[::1]:80", "trainer.lan:5640"):
            assert _raw(srv, "GET", "/health", host=host)[0] == 200, host


def test_an_unexpected_error_is_a_json_500_and_one_log_line(tasks, monkeypatch, caplog) -> None:
    from fastapi.testclient import TestClient

    app = create_app(tasks)
    store = app.app.state.store

    def broken(self, request):
        raise RuntimeError("index vanished\nsecond line")

    monkeypatch.setattr(type(store), "open", broken)
    client = TestClient(app, base_url="http://localhost", raise_server_exceptions=False)
    response = client.post("/sessions", json={"seed": 1})
    assert response.status_code == 500 and response.json()["error"].endswith("index vanished second line")
    errors = [r for r in caplog.records if r.levelname == "ERROR"]
    assert len(errors) == 1 and "\n" not in errors[0].getMessage() and errors[0].exc_info is None


def test_an_observation_over_the_cap_ends_the_episode_with_a_clear_error(tasks) -> None:
    """Issue 52: 30 steps of 32 view calls x 100 ids grew one observation to 48.9 M characters (896 MB a
    session). Over the cap the episode ends as the policy's failure, with one line and a verdict."""
    store = SessionStore(tasks, max_observation_chars=20_000)
    view = store.open(ResetRequest(problem_id=tasks.problems[0].problem_id))
    ids = ",".join(p.product_id for p in list(tasks.engine.iter_products())[:100])
    calls = [{"name": "view_product_information", "parameters": {"product_ids": ids}}] * 4
    after = store.step(view.session_id, calls)
    assert after.done and after.termination_reason == "agent_error" and after.verdict is not None
    assert after.observation.startswith("Error: observation of ")
    assert "over the cap of 20,000" in after.observation
    assert len(after.model_dump_json()) < 2_000_000
    trajectory = store.get(view.session_id).env.trajectory()
    assert trajectory.error is not None and "over the cap" in trajectory.error.message
    with pytest.raises(EnvServerError) as again:  # the episode has ended: no further step runs
        store.step(view.session_id, calls)
    assert again.value.status == 409
