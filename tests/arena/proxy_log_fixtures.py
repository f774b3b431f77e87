"""Proxy-log fixtures and the verdicts read from them (richness, corpus structure, judge block, nonces).

``verdicts()`` runs every reader of a proxy log over :data:`SCENARIOS` and returns plain JSON. The expected
result, ``data/proxy_log_verdicts.json``, was produced at d6d6f03, before the readers shared one proxy-log
module (:mod:`shoparena.arena.proxy_log`); regenerate it only for a deliberate change of meaning
(``PYTHONPATH=src:tests/arena python tests/arena/proxy_log_fixtures.py``) and say which values moved.

Moved once, deliberately, when the readers were merged: the arena's Variant A (``richness.pending_target``,
``llm_emitted_count``, pooled) now walks the log as the corpus does (the pending list is replaced at every
inference entry, a failed one included), so it equals the corpus's ``richness_pending`` on the same log; and
the one tool-call parser reads a ``{"function": {"name", "arguments"}}`` block item, as the corpus did and
the nonce parser did not (``parsed_calls``). Every corpus evidence, label, outcome, judge block, headline
``agentic_richness`` and ``nonce_stamped`` is as recorded at d6d6f03.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

VERDICTS = Path(__file__).parent / "data" / "proxy_log_verdicts.json"
INF = "/inference/chat/completions"
FIND, VIEW = "find_product", "view_product_information"


def xml(*calls: dict[str, Any]) -> str:
    return "<think>t</think>\n<tool_call>" + json.dumps(list(calls)) + "</tool_call>"


def reply(content: str = "", native: list[tuple[str, str, dict]] | None = None, **extra: Any) -> dict:
    """A chat-completion response (native calls as (id, name, arguments))."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if native:
        message["tool_calls"] = [
            {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
            for cid, name, args in native
        ]
    return {"object": "chat.completion", "model": "m", "choices": [{"index": 0, "message": message}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 7, "total_tokens": 17}, **extra}


def inference(ts: int, response: dict | None = None, status: int = 200, **fields: Any) -> dict:
    entry = {"kind": "summary", "method": "POST", "path": INF, "timestamp": ts, "duration_ms": 12.5,
             "status_code": status, "json_data": {"model": "m"}}
    if response is not None:
        entry["response"] = response
    entry.update(fields)
    return entry


def dispatch(ts: int, tool: str, params: dict, status: int = 200, **fields: Any) -> dict:
    entry = {"kind": "summary", "method": "GET", "path": f"/search/{tool}", "timestamp": ts,
             "duration_ms": 3.0, "status_code": status, "params": params,
             "response": [{"product_id": "P1", "title": "mug"}]}
    entry.update(fields)
    return entry


def step(ts: int, calls: list[tuple[str, dict]], proxy_calls: list | None = None, think: str = "t") -> dict:
    """One ORO dialogue step calling ``calls`` (name, parameters) in tagged text."""
    payload = [{"name": n, "parameters": p} for n, p in calls]
    content = f"<think>{think}</think>\n<tool_call>{json.dumps(payload)}</tool_call>"
    info: dict[str, Any] = {"step": 0, "query": "a mug", "timestamp": ts}
    if proxy_calls is not None:
        info["proxy_calls"] = proxy_calls
    tool_call = [{"name": n, "parameters": p, "tool_call_id": f"c{ts}{i}", "result": []}
                 for i, (n, p) in enumerate(calls)]
    return {"completion": {"reasoning_content": "", "content": content,
                           "message": {"think": think, "tool_call": tool_call}},
            "extra_info": info}


Q = {"q": "mug"}
IDS = {"product_ids": "P1"}
REC = {"product_ids": "P1"}
STEPS_3 = [(1000, [(FIND, Q)]), (2000, [(VIEW, IDS)]), (3000, [("recommend_product", REC)])]

#: name -> (trusted log or None, steps as (timestamp, calls), agent-written proxy_calls per step or None)
SCENARIOS: dict[str, dict[str, Any]] = {
    "honest_native": {
        "trusted": [
            inference(900, reply(native=[("call_1", FIND, Q)]), parsed_tool_names=[FIND],
                      parsed_tool_calls=[{"id": "call_1", "name": FIND, "arguments": json.dumps(Q)}],
                      usage={"prompt_tokens": 10, "completion_tokens": 7, "total_tokens": 17}),
            {"kind": "attempt", "method": "GET", "path": "/search/find_product", "timestamp": 950,
             "attempt": 0, "duration_ms": 1.0, "status_code": 200},
            dispatch(990, FIND, Q, nonce_status="valid", proof="nonce_valid", problem_id="p"),
            inference(1900, reply(xml({"name": VIEW, "parameters": IDS}))),
            dispatch(1990, VIEW, IDS, nonce_status="missing", proof="matched_emitted"),
            inference(2900, reply(xml({"name": "recommend_product", "parameters": REC}))),
        ],
        "steps": STEPS_3,
    },
    "truncated_parsed_names": {
        "trusted": [
            inference(900, None, response_truncated=True, response_length=4000,
                      parsed_tool_names=[FIND, FIND], usage={"completion_tokens": 900}),
            {"method": "GET", "path": "/search/find_product", "timestamp": 990, "status_code": 200,
             "nonce_status": "valid", "proof": "nonce_valid", "response_truncated": True,
             "response_length": 3000, "result_product_ids": ["P1", "P2", "P3"]},
            dispatch(995, FIND, {"q": "red mug"}, nonce_status="missing", proof="unmatched"),
            inference(1900, None, response_truncated=True, parsed_tool_names=["recommend_product"]),
        ],
        "steps": [(1000, [(FIND, Q), (FIND, {"q": "red mug"})]), (2000, [("recommend_product", REC)])],
    },
    "old_log_without_proofs": {
        "trusted": [
            inference(900, reply(xml({"name": FIND, "parameters": Q}, {"name": VIEW, "parameters": IDS}))),
            dispatch(990, FIND, Q, nonce_status="valid"),
            dispatch(995, VIEW, IDS, nonce_status="missing"),
            dispatch(996, "get_product_raw", IDS, status=403),
        ],
        "steps": [(1000, [(FIND, Q), (VIEW, IDS)])],
    },
    "failed_inference_between_reply_and_dispatch": {
        "trusted": [
            inference(900, reply(native=[("a", FIND, Q), ("b", VIEW, IDS)]), parsed_tool_names=[FIND, VIEW]),
            dispatch(990, FIND, Q, proof="matched_emitted"),
            inference(1500, None, status=504, error={"error": {"type": "InferenceTimeout"}}),
            dispatch(1600, VIEW, IDS, proof="matched_emitted"),
        ],
        "steps": [(1000, [(FIND, Q)]), (2000, [(VIEW, IDS)])],
    },
    "subtask_no_model_requests": {
        "trusted": [
            dispatch(100, FIND, Q, nonce_status="missing", proof="unmatched"),
            dispatch(200, VIEW, IDS, nonce_status="missing", proof="unmatched"),
            inference(900, reply("<think>pick</think><response>P1</response>")),
        ],
        "steps": [(1000, [(FIND, Q), (VIEW, IDS)]), (2000, [("recommend_product", REC)])],
    },
    "no_model_at_all": {
        "trusted": [dispatch(100, FIND, Q)],
        "steps": [(1000, [(FIND, Q)])],
    },
    "dict_function_block_without_parsed_names": {
        "trusted": [
            inference(900, reply('<tool_call>{"function": {"name": "find_product", '
                                 '"arguments": {"q": "mug"}}}</tool_call>')),
            dispatch(990, FIND, Q, proof="unmatched"),
        ],
        "steps": [(1000, [(FIND, Q)])],
    },
    "agent_written_log_with_forgeries": {
        "trusted": None,
        "steps": [
            (1000, [(FIND, Q)]), (2000, [(VIEW, IDS), (FIND, Q)]), (3000, [("recommend_product", REC)]),
        ],
        "claimed": [
            [
                inference(900, reply(xml({"tool": FIND, "parameters": Q}))),
                dispatch(990, FIND, Q, nonce_status="mismatch"),
                {"kind": "attempt", "path": "/search/find_product", "status_code": 500},
            ],
            [
                {"path": INF, "status_code": 200, "response": reply(
                    '<tool_call>not json</tool_call><tool_call>[{"name": "view_product_information"}, 7,'
                    ' {"function": {"name": "find_product"}}]</tool_call>')},
                {"path": "/search/view_product_information", "nonce_status": "valid"},
                {"path": "/search/find_product", "nonce_status": "replayed"},
            ],
            [
                {"path": INF, "status_code": 200, "parsed_tool_names": ["recommend_product", 3]},
                {"path": "/search/recommend_product"},
            ],
        ],
    },
    "trusted_contradicts_claims": {
        "trusted": [
            inference(900, reply(native=[("a", FIND, Q)]), parsed_tool_names=[FIND]),
            dispatch(990, FIND, Q, nonce_status="valid", proof="nonce_valid"),
        ],
        "steps": [(1000, [(FIND, Q)]), (2000, [(FIND, Q)])],
        "claimed": [
            [inference(900, reply(native=[("a", FIND, Q)])), dispatch(990, FIND, Q)],
            [inference(1900, reply(native=[("b", FIND, Q)])), dispatch(1990, FIND, Q)],
        ],
    },
}


def envelope(name: str) -> dict[str, Any]:
    scenario = SCENARIOS[name]
    claimed = scenario.get("claimed") or [None] * len(scenario["steps"])
    dialogue = [step(ts, calls, proxy) for (ts, calls), proxy in zip(scenario["steps"], claimed, strict=True)]
    return {"problem_id": name, "status": "SUCCESS", "execution_time": 1.0, "inference_failure_count": 0,
            "inference_total": 1, "error": None, "dialogue": dialogue}


def _calls(response: Any) -> list[list[str]]:
    from shoparena.arena.proxy_log import parse_response_tool_calls

    return [[c.call_id, c.name, c.arguments] for c in parse_response_tool_calls(response)]


def scenario_record(traj: Any, problem_id: str, trusted: list | None) -> Any:
    """The corpus record of a trajectory with the trusted log ``trusted`` (None: the agent-written calls)."""
    from shoparena.corpus.ingest import record_from_episode
    from shoparena.records.episode import Episode, EpisodeOrigin
    from shoparena.records.proxy_log import proxy_entries
    from shoparena.scoring.bench import ScoringBench

    origin = EpisodeOrigin(source_format="arena_run", source_path="x", source_line=1, run_id="r", record="r")
    log = proxy_entries(trusted) if trusted is not None else None
    episode = Episode(trajectory=traj, problem_id=problem_id, origin=origin, trusted_log=log)
    return record_from_episode(episode, ScoringBench())


def verdicts() -> dict[str, Any]:
    """Every reader's verdict on every scenario, as JSON-able values."""
    from shoparena.arena.richness import pooled_richness, trajectory_richness
    from shoparena.corpus.config import FilterConfig, GateConfig
    from shoparena.corpus.filter import classify
    from shoparena.formats.oro import from_oro_envelope
    from shoparena.judge.inputs import summarise_proxy_calls
    from shoparena.runs.envelopes import bucket_proxy_calls

    out: dict[str, Any] = {}
    per_problem = []
    for name, scenario in SCENARIOS.items():
        trusted = scenario["trusted"]
        traj = from_oro_envelope(envelope(name))
        log = trusted if trusted is not None else [e for s in scenario.get("claimed") or [] for e in s]
        rich = trajectory_richness(name, [e for e in log if isinstance(e, dict)])
        per_problem.append(rich)
        record = scenario_record(traj, name, trusted)
        classify(record, FilterConfig(), GateConfig())
        assert record.evidence.proxy_log_problem is None
        dicts = [e for e in log if isinstance(e, dict)]
        responses = [e["response"] for e in dicts if isinstance(e.get("response"), dict)]
        out[name] = {
            "richness": rich.model_dump(mode="json"),
            # proxy_log_problem came after the recording: these logs are all present, so it is always None.
            "evidence": record.evidence.model_dump(mode="json", exclude={"proxy_log_problem"}),
            "labels": {k: getattr(record.labels, k) for k in ("agentic_richness", "richness_pending",
                                                                "nonce_valid_ratio")},
            "trainable": [m.trainable for m in record.messages],
            "structural_label": record.structural_label,
            "outcome": record.outcome,
            "judge": summarise_proxy_calls([e for e in log if isinstance(e, dict)]).model_dump(mode="json"),
            "buckets": [len(b) for b in bucket_proxy_calls([1000, 2000, 3000], [e for e in log
                                                                              if isinstance(e, dict)])],
            "parsed_calls": [_calls(r) for r in responses],
        }
    out["pooled"] = pooled_richness(per_problem).model_dump(mode="json")
    return out


if __name__ == "__main__":
    VERDICTS.write_text(json.dumps(verdicts(), indent=1, sort_keys=True) + "\n")
