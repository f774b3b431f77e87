"""Views (corpus contract): ``sft``, ``steps``, ``kto`` as HF ``datasets`` (save_to_disk, Parquet, JSONL).

Rows stream from ``records.jsonl`` (record dicts, in its order), in one pass, into Parquet (pyarrow, fixed
batches, the schema of explicit :class:`datasets.Features`) and JSONL (sorted keys); each view is then read
back from the same batches' Arrow stream (:meth:`datasets.Dataset.from_file`, memory-mapped) and written with
``save_to_disk``. Memory stays flat and the
files are a pure function of the records (byte-identical on re-runs). Records without an assistant
turn appear only in ``records.jsonl``.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import orjson

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
    row["labels"] = orjson.dumps(r["labels"], option=orjson.OPT_SORT_KEYS).decode()
    row["provenance"] = orjson.dumps(r["provenance"], option=orjson.OPT_SORT_KEYS).decode()
    return row


def sft_rows(r: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield {**_common(r), "messages": [_message(m) for m in r["messages"]]}


def _arguments(call: dict[str, Any]) -> Any:
    """A call's arguments as a JSON value (the teacher_action column nests them); raw text if not JSON."""
    raw = call["function"]["arguments"]
    try:
        return orjson.loads(raw) if isinstance(raw, str) else raw
    except orjson.JSONDecodeError:
        return raw


def step_rows(r: dict[str, Any]) -> Iterator[dict[str, Any]]:
    common = _common(r)
    messages = [_message(m) for m in r["messages"]]
    step = 0
    for i, m in enumerate(messages):
        if m["role"] != "assistant":
            continue
        action = [{"name": c["function"]["name"], "arguments": _arguments(c)} for c in m["tool_calls"]]
        yield {
            **common,
            "step_idx": step,
            "prompt": messages[:i],
            "completion": [m],
            "teacher_action": orjson.dumps(action).decode(),
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


BATCH_ROWS = 256


class _Sink:
    """One (view, split) output: a Parquet writer fed in fixed-size batches, and the JSONL file."""

    def __init__(self, views_dir: Path, cache: Path, view: str, split: str) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        self.schema = features(view).arrow_schema
        self.parquet = views_dir / f"{view}-{split}.parquet"
        self.writer = pq.ParquetWriter(str(self.parquet), self.schema)
        # The same batches as an Arrow IPC stream: what `datasets` memory-maps (Dataset.from_file), so the
        # save_to_disk copy never re-reads the Parquet through a builder.
        self.arrow = cache / f"{view}-{split}.arrow"
        self.stream = pa.ipc.new_stream(str(self.arrow), self.schema)
        self.jsonl = open(views_dir / f"{view}-{split}.jsonl", "wb")  # noqa: SIM115 - closed in close()
        self.rows: list[dict[str, Any]] = []
        self.count = 0

    def add(self, row: dict[str, Any]) -> None:
        self.jsonl.write(orjson.dumps(row, option=orjson.OPT_SORT_KEYS) + b"\n")
        self.rows.append(row)
        self.count += 1
        if len(self.rows) >= BATCH_ROWS:
            self.flush()

    def flush(self) -> None:
        import pyarrow as pa

        if self.rows:
            table = pa.Table.from_pylist(self.rows, schema=self.schema)
            self.writer.write_table(table)
            self.stream.write_table(table)
            self.rows = []

    def close(self) -> None:
        import pyarrow as pa

        self.flush()
        if self.count == 0:
            self.writer.write_table(pa.Table.from_pylist([], schema=self.schema))
        self.writer.close()
        self.stream.close()
        self.jsonl.close()


def export_views(
    records: Callable[[], Iterable[dict[str, Any]]], views_dir: Path
) -> dict[str, dict[str, int]]:
    """Write every view in one pass over the record dicts; returns view → split → rows."""
    from datasets import Dataset, DatasetDict
    from datasets.utils.logging import disable_progress_bar

    disable_progress_bar()
    views_dir.mkdir(parents=True, exist_ok=True)
    cache = views_dir / ".cache"
    shutil.rmtree(cache, ignore_errors=True)  # never reuse a cache from an earlier build
    cache.mkdir()
    sinks = {(v, s): _Sink(views_dir, cache, v, s) for v in VIEWS for s in SPLITS}
    try:
        for record in records():
            if record["split"] not in SPLITS or not any(m["role"] == "assistant" for m in record["messages"]):
                continue
            for view in VIEWS:
                sink = sinks[(view, record["split"])]
                for row in ROW_BUILDERS[view](record):
                    sink.add(row)
    finally:
        for sink in sinks.values():
            sink.close()
    counts: dict[str, dict[str, int]] = {}
    for view in VIEWS:
        parts = {}
        for split in SPLITS:
            sink = sinks[(view, split)]
            if sink.count:
                parts[split] = Dataset.from_file(str(sink.arrow))
            else:  # keep the empty split's features explicit
                parts[split] = Dataset.from_dict({k: [] for k in features(view)}, features=features(view))
        target = views_dir / view
        shutil.rmtree(target, ignore_errors=True)
        DatasetDict(parts).save_to_disk(str(target))
        counts[view] = {split: sinks[(view, split)].count for split in SPLITS}
    shutil.rmtree(cache, ignore_errors=True)
    return counts


__all__ = ["ROW_BUILDERS", "SPLITS", "VIEWS", "export_views", "features"]
