"""Shared data for the corpus tests (a module of its own: ``conftest`` names clash across test folders)."""

from __future__ import annotations

import json

from world import SHARED_DATA

SN15_ROWS = SHARED_DATA / "oro" / "sft_corpus_prefix_examples.jsonl"


def view_record(i: int, steps: int) -> dict:
    """A corpus record dict (``records.jsonl``) with ``steps`` tool-calling assistant turns."""
    messages = [
        {"role": "system", "content": "sys", "trainable": False},
        {"role": "user", "content": f"query {i} café", "trainable": False},
    ]
    for k in range(steps):
        call = {
            "id": f"c{k}",
            "type": "function",
            "function": {"name": "find_product", "arguments": '{"q": 1}'},
        }
        messages.append(
            {"role": "assistant", "content": f"step {k}", "tool_calls": [call], "trainable": k % 2 == 0}
        )
        messages.append({"role": "tool", "content": json.dumps({"hits": [k] * k}), "tool_call_id": f"c{k}"})
    messages.append({"role": "assistant", "content": "done", "tool_calls": None, "trainable": True})
    return {
        "record_id": f"r:p{i}:0", "run_id": "r", "problem_id": f"p{i}", "rollout_idx": 0, "split": "train",
        "cluster_id": f"c{i}", "category": "product", "difficulty": "", "tools": "[]",
        "outcome": "kept" if i % 3 else "judge_below_bar", "origin": "agentic", "miner_kind": "",
        "structural_label": "agentic", "labels": {"b": 1, "a": None}, "provenance": {"z": "x", "agent": i},
        "messages": messages,
    }  # fmt: skip
