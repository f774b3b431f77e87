"""ORO envelopes, ShoppingBench rollout lines, per-line detection, quarantine and proxy-call bucketing."""

from __future__ import annotations

import copy
import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from shoparena.formats._common import FormatError, ujson_dumps
from shoparena.formats.io import (
    parse_trajectory_line,
    read_trajectories,
    read_trajectory_file,
    write_oro_envelopes,
    write_sb_rollouts,
    write_trajectories,
)
from shoparena.formats.oro import (
    all_proxy_calls,
    attach_proxy_calls,
    dumps_oro_line,
    from_oro_envelope,
    to_oro_envelope,
)
from shoparena.formats.sb import dumps_sb_line, from_sb_rollout, to_sb_rollout
from shoparena.formats.tagged import parse_completion, render_step_content, tool_call_id
from shoparena.records.trajectory import EpisodeStatus, Trajectory
from shoparena.runs.envelopes import bucket_proxy_calls

PID = "0c6f2d7e-51a9-4b83-a2de-6f1e0b93c4d8"
QUERY = "Green 1.5L glass kettle under 900 PHP with COD."


def _content(think: str, calls: list[dict[str, Any]], response: str = "") -> str:
    text = f"<think>{think}</think>\n<tool_call>{json.dumps(calls)}</tool_call>"
    return text + (f"\n<response>{response}</response>" if response else "")


def _proxy(kind: str, path: str, ts: int, **extra: Any) -> dict[str, Any]:
    return {
        "kind": kind,
        "method": "GET" if "search" in path else "POST",
        "path": path,
        "timestamp": ts,
        **extra,
    }


def example_envelope() -> dict[str, Any]:
    """A small invented envelope in the arena spec §5.4 shape (ids follow the real algorithm)."""
    search = {"q": "glass kettle 1.5l", "price": "0-900", "service": "COD"}
    view = {"product_ids": "8801,8802"}
    recommend = {"product_ids": "8802"}
    terminate = {"status": "success"}
    return {
        "problem_id": PID,
        "status": "SUCCESS",
        "execution_time": 12.5,
        "inference_failure_count": 0,
        "inference_total": 3,
        "error": None,
        "dialogue": [
            {
                "completion": {
                    "reasoning_content": "",
                    "content": _content(
                        "Search with price and COD.", [{"name": "find_product", "parameters": search}]
                    ),
                    "message": {
                        "think": "Search with price and COD.",
                        "tool_call": [
                            {
                                "name": "find_product",
                                "parameters": search,
                                "tool_call_id": tool_call_id("find_product", search),
                                "result": [
                                    {"product_id": "8801", "title": "1.5L Glass Kettle", "price": 799.0},
                                    {
                                        "product_id": "8802",
                                        "title": "Glass Kettle 1.5 L / green",
                                        "price": 845.5,
                                    },
                                ],
                            }
                        ],
                    },
                },
                "extra_info": {
                    "step": 1,
                    "query": QUERY,
                    "timestamp": 1777000001000,
                    "problem_id": PID,
                    "execution_time": 12.5,
                    "proxy_calls": [
                        _proxy(
                            "summary",
                            "/inference/chat/completions",
                            1777000000900,
                            duration_ms=880.2,
                            status_code=200,
                            response_truncated=True,
                            response_length=2301,
                        ),
                        _proxy(
                            "summary",
                            "/search/find_product",
                            1777000000990,
                            duration_ms=80.1,
                            status_code=200,
                            params={"q": "glass+kettle+1.5l", "page": 1},
                            response=[],
                        ),
                    ],
                },
            },
            {
                "completion": {
                    "reasoning_content": "",
                    "content": _content(
                        "Check colours.", [{"name": "view_product_information", "parameters": view}]
                    ),
                    "message": {
                        "think": "Check colours.",
                        "tool_call": [
                            {
                                "name": "view_product_information",
                                "parameters": view,
                                "tool_call_id": tool_call_id("view_product_information", view),
                                "result": [
                                    {"product_id": "8802", "sku_options": {"1": {"color_family": "green"}}}
                                ],
                            }
                        ],
                    },
                },
                "extra_info": {"step": 2, "query": QUERY, "timestamp": 1777000005000, "problem_id": PID},
            },
            {
                "completion": {
                    "reasoning_content": "",
                    "content": _content(
                        "8802 is green.",
                        [
                            {"name": "recommend_product", "parameters": recommend},
                            {"name": "terminate", "parameters": terminate},
                        ],
                        "Recommended: 8802.",
                    ),
                    "message": {
                        "think": "8802 is green.",
                        "tool_call": [
                            {
                                "name": "recommend_product",
                                "parameters": recommend,
                                "tool_call_id": tool_call_id("recommend_product", recommend),
                                "result": "Having recommended the products to the user: 8802.",
                            },
                            {
                                "name": "terminate",
                                "parameters": terminate,
                                "tool_call_id": "NR0gqQng",
                                "result": "The interaction has been completed with status: success",
                            },
                        ],
                        "response": "Recommended: 8802.",
                    },
                },
                "extra_info": {"step": 3, "query": QUERY, "timestamp": 1777000009000, "problem_id": PID},
            },
        ],
    }


def test_example_envelope_round_trips_byte_for_byte() -> None:
    line = json.dumps(example_envelope())  # ORO writes lines with json.dumps defaults
    traj = parse_trajectory_line(line, line_no=1)
    assert traj.source_format == "oro_envelope"
    assert (traj.problem_id, traj.status, traj.execution_time, traj.inference_total) == (
        PID,
        EpisodeStatus.SUCCESS,
        12.5,
        3,
    )
    assert traj.query == QUERY and [s.index for s in traj.steps] == [1, 2, 3]
    assert traj.steps[0].timestamp == 1777000001000 and len(traj.steps[0].proxy_calls) == 2
    assert traj.last_recommendation().parameters == {"product_ids": "8802"}
    assert [c.tool_call_id for c in traj.steps[2].tool_calls][1] == "NR0gqQng"
    assert dumps_oro_line(traj) == line


def test_example_steps_render_for_the_format_check() -> None:
    traj = from_oro_envelope(example_envelope())
    text = render_step_content(traj.steps[0], include_results=True)
    assert '"title":"Glass Kettle 1.5 L \\/ green"' in text and text.startswith("<think>Search")
    reparsed = parse_completion(traj.steps[2].content)
    assert [c.tool_call_id for c in reparsed.tool_calls] == [c.tool_call_id for c in traj.steps[2].tool_calls]


def test_irregular_envelopes_round_trip_exactly() -> None:
    odd = example_envelope()
    odd["execution_time"] = 12  # an int stays an int
    odd["validator_note"] = {"x": 1}  # unknown envelope key
    step = odd["dialogue"][1]
    step["extra_info"] = {"timestamp": "soon", "query": QUERY, "custom": [1]}  # no step, string timestamp
    step["completion"]["message"]["think"] = ""  # present but empty
    step["completion"]["message"]["tool_call"][0]["extra"] = True
    step["completion"]["message"]["tool_call"][0]["parameters"] = "8801"  # agent-controlled garbage
    step["completion"]["content"] = None
    step["completion"]["extra_field"] = 3
    odd["dialogue"][2]["completion"]["message"]["tool_call"].append("not a call")
    del odd["dialogue"][2]["extra_info"]
    line = json.dumps(odd)
    traj = parse_trajectory_line(line)
    assert traj.steps[1].timestamp is None and traj.steps[1].extra_info["timestamp"] == "soon"
    assert traj.steps[1].tool_calls[0].invalid_reason == "parameters is not a JSON object (string)"
    assert any("tool_call[2]" in e for e in traj.steps[2].parse_errors)
    assert dumps_oro_line(traj) == line
    # the canonical record survives our own JSON form too
    again = parse_trajectory_line(traj.model_dump_json())
    assert dumps_oro_line(again) == line


def test_failed_envelope_and_null_dialogue() -> None:
    line = json.dumps(
        {
            "problem_id": None,
            "status": "TIMED_OUT",
            "execution_time": 300.0,
            "inference_failure_count": 2,
            "inference_total": 9,
            "error": {"type": "TimeoutError", "message": "Problem exceeded 300s"},
            "dialogue": None,
        }
    )
    traj = parse_trajectory_line(line)
    assert traj.status is EpisodeStatus.TIMED_OUT and traj.dialogue_is_null and traj.steps == []
    assert traj.error is not None and traj.error.type == "TimeoutError"
    assert dumps_oro_line(traj) == line


def test_in_memory_trajectory_gets_oro_fill_ins() -> None:
    traj = from_oro_envelope(example_envelope())
    fresh = Trajectory(
        problem_id="p9",
        query="q9",
        execution_time=4.0,
        steps=[s.model_copy(update={"key_order": {}, "extra_info": {}}) for s in traj.steps],
    )
    env = to_oro_envelope(fresh)
    assert list(env) == [
        "problem_id",
        "status",
        "execution_time",
        "inference_failure_count",
        "inference_total",
        "error",
        "dialogue",
    ]
    first, second = env["dialogue"][0]["extra_info"], env["dialogue"][1]["extra_info"]
    assert list(first) == ["step", "query", "timestamp", "problem_id", "execution_time", "proxy_calls"]
    assert (first["query"], first["problem_id"], first["execution_time"]) == ("q9", "p9", 4.0)
    assert "execution_time" not in second
    failed = fresh.model_copy(update={"status": EpisodeStatus.FAILED})
    assert to_oro_envelope(failed)["dialogue"] is None  # ORO keeps dialogues of successes only


def test_old_bare_list_lines() -> None:
    dialogue = example_envelope()["dialogue"]
    line = json.dumps(dialogue)
    traj = parse_trajectory_line(line)
    assert traj.source_format == "oro_bare" and traj.problem_id == PID and traj.execution_time == 12.5
    assert traj.status is EpisodeStatus.SUCCESS and len(traj.steps) == 3
    assert dumps_oro_line(traj, legacy_bare=True) == line
    assert json.loads(dumps_oro_line(traj))["dialogue"] == dialogue


# --- ShoppingBench rollouts ---
def sb_rollout() -> list[dict[str, Any]]:
    search = {"q": "kettle", "page": 1}
    sid = tool_call_id("find_product", search)
    calls = [
        {"name": "find_product", "parameters": search, "tool_call_id": sid},
        {"name": "find_product", "parameters": search, "tool_call_id": sid},  # same call twice: same id
        {
            "name": "python_execute",
            "parameters": {"code": "1"},
            "tool_call_id": tool_call_id("python_execute", {"code": "1"}),
        },
    ]
    first = {
        "prompt": [
            {"role": "system", "content": "SYS / prompt"},
            {"role": "user", "content": "# Dialogue Records History\n<user>kettle</user>"},
        ],
        "completion": {
            "reasoning_content": "r",
            "content": "<think>t</think><tool_call>[...]</tool_call>",
            "message": {
                "think": "t",
                "tool_call": calls,
                "obs": [
                    {"tool_call_id": sid, "results": [{"product_id": "1"}]},
                    {"tool_call_id": sid, "results": None},
                ],
            },
        },
        "extra_info": {"step": 1, "query": "kettle", "timestamp": 1700000000000},
    }
    second = {
        "prompt": [{"role": "system", "content": "SYS / prompt"}, {"role": "user", "content": "..."}],
        "completion": {"reasoning_content": "", "content": "", "message": {}},
        "extra_info": {"step": 2, "query": "kettle", "timestamp": 1700000000500},
    }
    return [first, second]


def test_sb_rollout_round_trip_and_obs_attachment() -> None:
    line = ujson_dumps(sb_rollout())
    traj = parse_trajectory_line(line)
    assert traj.source_format == "sb_rollout" and traj.query == "kettle"
    first, second = traj.steps[0].tool_calls[:2]
    assert first.result == [{"product_id": "1"}] and second.result is None and second.has_result
    assert not traj.steps[0].tool_calls[2].has_result  # unknown tool: no obs entry
    assert dumps_sb_line(traj) == line
    # SB -> ORO -> SB keeps calls, ids, results and order.
    oro = parse_trajectory_line(dumps_oro_line(traj))
    assert [
        c.model_dump(include={"name", "parameters", "tool_call_id", "result", "has_result"})
        for s in oro.steps
        for c in s.tool_calls
    ] == [
        c.model_dump(include={"name", "parameters", "tool_call_id", "result", "has_result"})
        for s in traj.steps
        for c in s.tool_calls
    ]
    assert "prompt" not in json.loads(dumps_oro_line(traj))["dialogue"][0]
    back = to_sb_rollout(oro)
    assert back[0]["completion"]["message"] == sb_rollout()[0]["completion"]["message"]


def test_sb_prompt_built_for_steps_without_one() -> None:
    traj = from_oro_envelope(example_envelope())
    rollout = to_sb_rollout(traj, system_prompt="SYS")
    assert [m["role"] for m in rollout[1]["prompt"]] == ["system", "user"]
    user = rollout[1]["prompt"][1]["content"]
    assert user.startswith("# Dialogue Records History\n<user>" + QUERY)
    assert "<obs>" in user and "<think>Check colours.</think>" not in user  # history holds earlier steps only
    assert "obs" in rollout[0]["completion"]["message"]
    assert "result" not in rollout[0]["completion"]["message"]["tool_call"][0]
    assert from_sb_rollout(rollout).steps[0].tool_calls[0].result == traj.steps[0].tool_calls[0].result


# --- reading files, quarantine ---
def test_read_mixed_file_with_quarantine(tmp_path: Path) -> None:
    lines = [
        json.dumps(example_envelope()),
        "{not json",
        json.dumps({"problem_id": "x", "status": "DONE", "dialogue": None}),
        "",
        json.dumps({"problem_id": "x", "status": "SUCCESS", "dialogue": "oops"}),
        ujson_dumps(sb_rollout()),
        json.dumps({"problem_id": "x", "status": "SUCCESS", "dialogue": [{"completion": {}}, 7]}),
        json.dumps({"hello": 1}),
        json.dumps(example_envelope()["dialogue"]),
    ]
    path = tmp_path / "output.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")
    quarantine = tmp_path / "bad.jsonl"
    trajectories, summary = read_trajectory_file(path, quarantine_path=quarantine)
    assert [t.source_format for t in trajectories] == ["oro_envelope", "sb_rollout", "oro_bare"]
    assert (summary.read, summary.kept, summary.quarantined) == (8, 3, 5)
    bad = [json.loads(x) for x in quarantine.read_text().splitlines()]
    assert [b["line_no"] for b in bad] == [2, 3, 5, 7, 8]
    assert bad[0]["reason"].startswith("<record>: invalid JSON at char 1")
    assert bad[1]["reason"].startswith("status: expected SUCCESS")
    assert bad[2]["reason"] == "dialogue: expected a list or null, got string"
    assert bad[3]["reason"] == "dialogue[1]: expected a step object, got number"
    assert summary.reasons["dialogue[]"] == 1 and summary.reasons["invalid JSON"] == 1
    with pytest.raises(FormatError, match=r"^line 2: <record>: invalid JSON"):
        list(read_trajectories(path, strict=True))


def test_writers(tmp_path: Path) -> None:
    trajs = [from_oro_envelope(example_envelope()), parse_trajectory_line(ujson_dumps(sb_rollout()))]
    assert write_oro_envelopes(tmp_path / "o.jsonl", trajs) == 2
    assert write_sb_rollouts(tmp_path / "s.jsonl", trajs) == 2
    assert write_trajectories(tmp_path / "t.jsonl", trajs) == 2
    for name in ("o.jsonl", "s.jsonl", "t.jsonl"):
        back = list(read_trajectories(tmp_path / name))
        assert [[c.tool_call_id for s in t.steps for c in s.tool_calls] for t in back] == [
            [c.tool_call_id for s in t.steps for c in s.tool_calls] for t in trajs
        ]
    assert (tmp_path / "o.jsonl").read_text().splitlines()[0] == json.dumps(example_envelope())


# --- proxy calls ---
def test_bucket_proxy_calls_rules() -> None:
    calls = [
        {"kind": "summary", "timestamp": 5},  # before the first step -> first step
        {"kind": "attempt", "timestamp": 15},  # diagnostic, dropped
        {"kind": "summary", "timestamp": 10},  # equal to step 1's stamp -> step 1
        {"kind": "summary", "timestamp": 25},  # between step 2 and 3 -> step 2
        {"kind": "summary", "timestamp": 99},  # after the last -> last
        {"kind": "summary"},  # no timestamp counts as 0 -> first step
    ]
    buckets = bucket_proxy_calls([10, 20, 30], calls)
    assert [[c.get("timestamp") for c in b] for b in buckets] == [[5, 10, None], [25], [99]]
    assert bucket_proxy_calls([], calls) == []
    # Timestamps going backwards (a missing stamp filled at write time): the last step at or before wins.
    late = [{"kind": "summary", "timestamp": 40}]
    assert [len(b) for b in bucket_proxy_calls([10, 99, 30], late)] == [0, 0, 1]


def test_attach_and_concatenate_follow_the_arena_example() -> None:
    env = example_envelope()
    traj = from_oro_envelope(env)
    calls = all_proxy_calls(traj)
    assert len(calls) == 2
    more = [*calls, {"kind": "summary", "path": "/inference/chat/completions", "timestamp": 1777000008999}]
    fresh = copy.deepcopy(traj)
    for step in fresh.steps:
        step.proxy_calls = []
    attach_proxy_calls(fresh, more)
    # The call producing step k+1 lands on step k.
    assert [len(s.proxy_calls) for s in fresh.steps] == [2, 1, 0]
    assert all_proxy_calls(fresh) == more
