"""A small corpus directory in the shape of the corpus contract (views sft/steps/kto, problems.json), written
with ``datasets`` from hand-made conversations over the test catalog, until the real builder lands."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from shoparena.env.environment import ShopEnv
from shoparena.records.problem import Problem
from shoparena.suites.loaders import load_suite, write_oro_suite

SYSTEM = "You are a shopping assistant. Use the tools, recommend the products, then terminate."


def tools_json(engine: Any) -> str:
    """The env's OpenAI tool schemas, as the corpus stores them (a JSON string)."""
    return json.dumps([s.to_openai() for s in ShopEnv(engine).tool_schemas()])  # engine unused by schemas


def _msg(
    role: str, content: str = "", *, calls=None, call_id=None, name=None, trainable=False
) -> dict[str, Any]:
    tool_calls = None
    if calls:
        tool_calls = [
            {"id": f"c{i}", "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
            for i, (n, a) in enumerate(calls)
        ]
    return {
        "role": role,
        "content": content,
        "tool_calls": tool_calls,
        "tool_call_id": call_id,
        "name": name,
        "trainable": trainable,
    }


def conversation(query: str, pid: str, *, scripted_fallback: bool = False) -> list[dict[str, Any]]:
    """system → user → find → view → recommend+terminate; the view step is code-written when asked."""
    return [
        _msg("system", SYSTEM),
        _msg("user", query),
        _msg(
            "assistant",
            "<think>\nSearch first.\n</think>\n\n",
            calls=[("find_product", {"q": query[:20], "page": 1})],
            trainable=True,
        ),
        _msg(
            "tool",
            json.dumps([{"product_id": pid, "title": "Nike Running Shoes"}]),
            call_id="c0",
            name="find_product",
        ),
        _msg(
            "assistant",
            "",
            calls=[("view_product_information", {"product_ids": pid})],
            trainable=not scripted_fallback,
        ),
        _msg(
            "tool",
            json.dumps([{"product_id": pid, "attributes": {"brand": "nike"}}]),
            call_id="c0",
            name="view_product_information",
        ),
        _msg(
            "assistant",
            f"I recommend {pid}.",
            calls=[("recommend_product", {"product_ids": pid}), ("terminate", {"status": "success"})],
            trainable=True,
        ),
    ]


def _common(i: int, problem: Problem, tools: str, outcome: str, origin: str) -> dict[str, Any]:
    return {
        "record_id": f"run1:{problem.problem_id}:{i}",
        "run_id": "run1",
        "problem_id": problem.problem_id,
        "rollout_idx": i,
        "split": "train",
        "cluster_id": f"c{i}",
        "category": "product",
        "difficulty": "easy",
        "tools": tools,
        "outcome": outcome,
        "origin": origin,
        "miner_kind": "",
        "labels": json.dumps({"success": outcome == "kept"}),
        "provenance": "{}",
    }


OUTCOMES = [("kept", "agentic"), ("kept", "agentic"), ("kept", "recovered"), ("judge_low", "agentic")]


def write_fixture_corpus(root: Path, engine: Any, problems: list[Problem]) -> Path:
    """Write the corpus directory; 4 trajectories per problem (outcomes :data:`OUTCOMES`)."""
    import datasets

    # Written first and read back: the suite loader gives problems their content-hash ids, which the corpus
    # rows must carry.
    write_oro_suite(problems, root / "problems.json")
    problems, _ = load_suite(root / "problems.json")
    tools = tools_json(engine)
    sft, steps, kto = [], [], []
    for problem in problems:
        for i, (outcome, origin) in enumerate(OUTCOMES):
            messages = conversation(problem.query, "101", scripted_fallback=i == 1)
            common = _common(i, problem, tools, outcome, origin)
            sft.append({**common, "messages": messages})
            assistant_idx = [k for k, m in enumerate(messages) if m["role"] == "assistant"]
            for step_idx, k in enumerate(assistant_idx):
                calls = messages[k]["tool_calls"] or []
                teacher = [
                    {"name": c["function"]["name"], "arguments": json.loads(c["function"]["arguments"])}
                    for c in calls
                ]
                steps.append(
                    {
                        **common,
                        "step_idx": step_idx,
                        "prompt_messages": k,  # the prompt is the sft row's messages[:k]
                        "completion": [messages[k]],
                        "teacher_action": json.dumps(teacher),
                    }
                )
                kto.append(
                    {
                        **common,
                        "prompt": messages[:k],
                        "completion": [messages[k]],
                        "label": outcome == "kept",
                        "granularity": "step",
                    }
                )
            kto.append(
                {
                    **common,
                    "prompt": messages[:2],
                    "completion": messages[2:],
                    "label": outcome == "kept",
                    "granularity": "trajectory",
                }
            )
    for name, rows in (("sft", sft), ("steps", steps), ("kto", kto)):
        train = datasets.Dataset.from_list(rows)
        dsd = datasets.DatasetDict({"train": train, "eval": train.select(range(2))})
        dsd.save_to_disk(str(root / "views" / name))
    return root
