"""Views (corpus contract): ``sft``, ``steps``, ``kto`` as HF ``datasets`` (save_to_disk, Parquet, JSONL).

Rows stream from ``records.jsonl`` (record dicts, in its order) through
:meth:`datasets.Dataset.from_generator` with explicit :class:`datasets.Features` into a private Arrow
cache, then to Parquet and ``save_to_disk``; the JSONL is written as the rows stream by. Memory stays flat
and the files are a pure function of the records (byte-identical on re-runs). Records without an assistant
turn appear only in ``records.jsonl``.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

VIEWS = ("sft", "steps", "kto")
SPLITS = ("train", "eval")
COMMON = (
    "record_id", "run_id", "problem_id", "split", "cluster_id", "category", "difficulty", "tools", "outcome",
    "origin", "miner_kind",
)  # fmt: skip


def features(view: str) -> Any:
    from datasets import Features, Value

    call = {
        "id": Value("string"),
        "type": Value("string"),
        "function": {"name": Value("string"), "arguments": Value("string")},
    }
    message = {
        "role": Value("string"),
        "content": Value("string"),
        "tool_calls": [call],
        "tool_call_id": Value("string"),
        "name": Value("string"),
        "trainable": Value("bool"),
    }
    common = {name: Value("string") for name in (*COMMON, "labels", "provenance")}
    common["rollout_idx"] = Value("int64")
    if view == "sft":
        return Features({**common, "messages": [message]})
    if view == "steps":
        return Features(
            {
                **common,
                "step_idx": Value("int64"),
                "prompt": [message],
                "completion": [message],
                "teacher_action": Value("string"),
            }
        )
    return Features(
        {
            **common,
            "prompt": [message],
            "completion": [message],
            "label": Value("bool"),
            "granularity": Value("string"),
        }
    )


def _message(m: dict[str, Any]) -> dict[str, Any]:
    return {
        "role": m["role"],
        "content": m.get("content"),
        "tool_calls": m.get("tool_calls") or [],
        "tool_call_id": m.get("tool_call_id"),
        "name": m.get("name"),
        "trainable": bool(m.get("trainable")),
    }


def _common(r: dict[str, Any]) -> dict[str, Any]:
    row = {key: r[key] for key in COMMON}
    row["rollout_idx"] = r["rollout_idx"]
    row["labels"] = json.dumps(r["labels"], sort_keys=True)
    row["provenance"] = json.dumps(r["provenance"], sort_keys=True)
    return row


def sft_rows(r: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield {**_common(r), "messages": [_message(m) for m in r["messages"]]}


def step_rows(r: dict[str, Any]) -> Iterator[dict[str, Any]]:
    common = _common(r)
    messages = [_message(m) for m in r["messages"]]
    step = 0
    for i, m in enumerate(messages):
        if m["role"] != "assistant":
            continue
        action = [
            {"name": c["function"]["name"], "arguments": c["function"]["arguments"]} for c in m["tool_calls"]
        ]
        yield {
            **common,
            "step_idx": step,
            "prompt": messages[:i],
            "completion": [m],
            "teacher_action": json.dumps(action, ensure_ascii=False),
        }
        step += 1


def kto_rows(r: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Trajectory-level KTO: desirable = kept; undesirable = a structurally agentic (or recovered) trajectory
    that failed the judge bar or success. Other rejects carry no preference signal and give no row."""
    agentic = r["origin"] == "recovered" or r["structural_label"] == "agentic"
    if not agentic or r["outcome"] not in ("kept", "judge_below_bar", "not_successful"):
        return
    messages = [_message(m) for m in r["messages"]]
    first = next(i for i, m in enumerate(messages) if m["role"] == "assistant")
    yield {
        **_common(r),
        "prompt": messages[:first],
        "completion": messages[first:],
        "label": r["outcome"] == "kept",
        "granularity": "trajectory",
    }


ROW_BUILDERS: dict[str, Callable[[dict[str, Any]], Iterator[dict[str, Any]]]] = {
    "sft": sft_rows,
    "steps": step_rows,
    "kto": kto_rows,
}


def _rows(
    records: Callable[[], Iterable[dict[str, Any]]], view: str, split: str, jsonl: str
) -> Iterator[dict]:
    with open(jsonl, "w", encoding="utf-8") as fh:
        for record in records():
            if record["split"] != split or not any(m["role"] == "assistant" for m in record["messages"]):
                continue
            for row in ROW_BUILDERS[view](record):
                fh.write(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n")
                yield row


def export_views(
    records: Callable[[], Iterable[dict[str, Any]]], views_dir: Path
) -> dict[str, dict[str, int]]:
    """Write every view from a re-iterable source of record dicts; returns view → split → rows."""
    from datasets import Dataset, DatasetDict
    from datasets.utils.logging import disable_progress_bar

    disable_progress_bar()
    views_dir.mkdir(parents=True, exist_ok=True)
    cache = views_dir / ".cache"
    shutil.rmtree(cache, ignore_errors=True)  # never reuse a generator cache from an earlier build
    counts: dict[str, dict[str, int]] = {}
    for view in VIEWS:
        parts: dict[str, Any] = {}
        for split in SPLITS:
            jsonl = views_dir / f"{view}-{split}.jsonl"
            kwargs = {"records": records, "view": view, "split": split, "jsonl": str(jsonl)}
            if any(True for _ in _rows(**kwargs)):
                data = Dataset.from_generator(
                    _rows,
                    features=features(view),
                    cache_dir=str(cache / f"{view}-{split}"),
                    gen_kwargs=kwargs,
                )
            else:  # datasets cannot build from an empty generator
                data = Dataset.from_dict({k: [] for k in features(view)}, features=features(view))
            data.to_parquet(str(views_dir / f"{view}-{split}.parquet"))
            parts[split] = data
        target = views_dir / view
        shutil.rmtree(target, ignore_errors=True)
        DatasetDict(parts).save_to_disk(str(target))
        counts[view] = {split: len(parts[split]) for split in SPLITS}
    shutil.rmtree(cache, ignore_errors=True)
    return counts


__all__ = ["ROW_BUILDERS", "SPLITS", "VIEWS", "export_views", "features"]
