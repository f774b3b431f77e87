"""Views (corpus contract): ``sft``, ``steps``, ``kto`` as HF ``datasets`` (save_to_disk, Parquet, JSONL).

Rows are built in ``record_id`` order with explicit :class:`datasets.Features`, so the files are a pure
function of the records (byte-identical on re-runs). Records without an assistant turn appear only in
``records.jsonl``.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from shoparena.records.corpus import CorpusMessage, CorpusRecord

VIEWS = ("sft", "steps", "kto")
SPLITS = ("train", "eval")


def _features(view: str) -> Any:
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
    common = {
        name: Value("string")
        for name in (
            "record_id",
            "run_id",
            "problem_id",
            "split",
            "cluster_id",
            "category",
            "difficulty",
            "tools",
            "outcome",
            "origin",
            "miner_kind",
            "labels",
            "provenance",
        )
    }
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


def _message(m: CorpusMessage) -> dict[str, Any]:
    return {
        "role": m.role,
        "content": m.content,
        "tool_calls": m.tool_calls or [],
        "tool_call_id": m.tool_call_id,
        "name": m.name,
        "trainable": m.trainable,
    }


def _common(r: CorpusRecord) -> dict[str, Any]:
    return {
        "record_id": r.record_id,
        "run_id": r.run_id,
        "problem_id": r.problem_id,
        "rollout_idx": r.rollout_idx,
        "split": r.split,
        "cluster_id": r.cluster_id,
        "category": r.category,
        "difficulty": r.difficulty,
        "tools": r.tools,
        "outcome": r.outcome,
        "origin": r.origin,
        "miner_kind": r.miner_kind,
        "labels": json.dumps(r.labels.model_dump(mode="json"), sort_keys=True),
        "provenance": json.dumps(r.provenance.model_dump(mode="json"), sort_keys=True),
    }


def sft_rows(r: CorpusRecord) -> Iterator[dict[str, Any]]:
    yield {**_common(r), "messages": [_message(m) for m in r.messages]}


def step_rows(r: CorpusRecord) -> Iterator[dict[str, Any]]:
    common = _common(r)
    step = 0
    for i, m in enumerate(r.messages):
        if m.role != "assistant":
            continue
        action = [
            {"name": c["function"]["name"], "arguments": c["function"]["arguments"]}
            for c in m.tool_calls or []
        ]
        yield {
            **common,
            "step_idx": step,
            "prompt": [_message(p) for p in r.messages[:i]],
            "completion": [_message(m)],
            "teacher_action": json.dumps(action, ensure_ascii=False),
        }
        step += 1


def kto_rows(r: CorpusRecord) -> Iterator[dict[str, Any]]:
    """Trajectory-level KTO: desirable = kept; undesirable = a structurally agentic trajectory that failed
    a later gate (judge or success). Other rejects carry no preference signal and give no row."""
    agentic = r.origin == "recovered" or r.structural_label == "agentic"
    if not agentic or r.outcome not in ("kept", "judge_below_bar", "not_successful"):
        return
    first = next(i for i, m in enumerate(r.messages) if m.role == "assistant")
    yield {
        **_common(r),
        "prompt": [_message(m) for m in r.messages[:first]],
        "completion": [_message(m) for m in r.messages[first:]],
        "label": r.outcome == "kept",
        "granularity": "trajectory",
    }


ROW_BUILDERS = {"sft": sft_rows, "steps": step_rows, "kto": kto_rows}


def export_views(records: Sequence[CorpusRecord], views_dir: Path) -> dict[str, dict[str, int]]:
    """Write every view; returns view → split → rows."""
    from datasets import Dataset, DatasetDict
    from datasets.utils.logging import disable_progress_bar

    disable_progress_bar()

    views_dir.mkdir(parents=True, exist_ok=True)
    ordered = sorted(
        (r for r in records if any(m.role == "assistant" for m in r.messages)), key=lambda r: r.record_id
    )
    counts: dict[str, dict[str, int]] = {}
    for view in VIEWS:
        features = _features(view)
        parts: dict[str, Any] = {}
        for split in SPLITS:
            rows = [row for r in ordered if r.split == split for row in ROW_BUILDERS[view](r)]
            data = (
                Dataset.from_list(rows, features=features)
                if rows
                else Dataset.from_dict({k: [] for k in features}, features=features)
            )
            data.to_parquet(str(views_dir / f"{view}-{split}.parquet"))
            with open(views_dir / f"{view}-{split}.jsonl", "w", encoding="utf-8") as fh:
                for row in rows:
                    fh.write(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n")
            parts[split] = data
        target = views_dir / view
        if target.exists():
            shutil.rmtree(target)
        DatasetDict(parts).save_to_disk(str(target))
        counts[view] = {split: len(parts[split]) for split in SPLITS}
    return counts


__all__ = ["ROW_BUILDERS", "SPLITS", "VIEWS", "export_views"]
