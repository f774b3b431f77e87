"""Views (corpus contract) as HF ``datasets`` (save_to_disk, Parquet, JSONL): every view of
:data:`shoparena.corpus.views.VIEWS`.

Rows come one record dict at a time (``records.jsonl`` order) into Parquet (pyarrow, fixed batches, the schema
of explicit :class:`datasets.Features`), JSONL (sorted keys) and an Arrow IPC stream of the same batches, from
which :func:`save_stream_to_disk` writes each view's ``save_to_disk`` folder with a sequential reader. Memory
stays flat and every file is a pure function of the records (byte-identical on re-runs). Records without an
assistant turn appear only in ``records.jsonl``.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import orjson

from shoparena.corpus.layout import DATASET_DICT_NAME, view_file
from shoparena.corpus.views import SPLITS, VIEWS, features, view_spec
from shoparena.formats.profiles import DEFAULT_PROFILE, RenderProfile, check_profile, render_chat
from shoparena.jsonl import LineWriter

BATCH_ROWS = 256


class _Sink:
    """One (view, split) output: a Parquet writer fed in fixed-size batches, and the JSONL file."""

    def __init__(self, views_dir: Path, cache: Path, view: str, split: str) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq
        import xxhash

        self.schema = features(view).arrow_schema
        self.parquet = view_file(views_dir, view, split, "parquet")
        self.writer = pq.ParquetWriter(str(self.parquet), self.schema)
        # The same batches as an Arrow IPC stream: the source of the save_to_disk shards, read back
        # sequentially (never memory-mapped), so the copy holds one batch at a time.
        self.arrow = cache / f"{view}-{split}.arrow"
        self.stream = pa.ipc.new_stream(str(self.arrow), self.schema)
        self.jsonl = LineWriter(view_file(views_dir, view, split, "jsonl"))
        self.rows: list[dict[str, Any]] = []
        self.digest = xxhash.xxh64()  # content fingerprint of the rows, for the datasets state.json
        self.count = 0

    def add(self, row: dict[str, Any]) -> None:
        line = orjson.dumps(row, option=orjson.OPT_SORT_KEYS)
        self.jsonl.write(line)
        self.digest.update(line)
        self.digest.update(b"\n")
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


class _RowCutter:
    """Reads an Arrow IPC stream file sequentially (no memory map: resident memory holds the batches in
    hand, not the file) and hands out its rows as tables of the sizes asked for, in order."""

    def __init__(self, path: Path) -> None:
        import pyarrow as pa

        self._pa = pa
        self._file = pa.OSFile(str(path), "rb")
        self._reader = pa.ipc.open_stream(self._file)
        self._pending: list[Any] = []
        self._held = 0

    def take(self, n: int) -> Any:
        while self._held < n:
            try:
                batch = self._reader.read_next_batch()
            except StopIteration:
                break
            self._pending.append(batch)
            self._held += batch.num_rows
        table = self._pa.Table.from_batches(self._pending, schema=self._reader.schema)
        rest = table.slice(n)
        self._pending, self._held = rest.to_batches(), rest.num_rows
        return table.slice(0, n)

    def close(self) -> None:
        self._reader.close()
        self._file.close()


def _stream_size(path: Path) -> tuple[int, int]:
    """Rows and Arrow bytes of an IPC stream file (what ``Dataset._estimate_nbytes`` sums), read
    sequentially: one batch in memory at a time, nothing memory-mapped."""
    import pyarrow as pa

    rows = nbytes = 0
    with pa.OSFile(str(path), "rb") as source, pa.ipc.open_stream(source) as reader:
        for batch in reader:
            rows += batch.num_rows
            nbytes += batch.nbytes
    return rows, nbytes


def save_stream_to_disk(arrow_path: Path, target: Path, view: str, fingerprint: str) -> None:
    """Write what ``Dataset.from_file(arrow_path).save_to_disk(target)`` writes (same shards, batches and
    info), reading the rows sequentially: ``save_to_disk`` copies from the memory-mapped table, whose
    pages then count in the process's resident set. ``fingerprint`` (``state.json``) is the content hash
    of the rows, so the folder is byte-identical on re-runs (``from_file`` would hash the path)."""
    from datasets import DatasetInfo, config
    from datasets.arrow_writer import ArrowWriter, get_writer_batch_size_from_data_size
    from datasets.utils.py_utils import asdict, convert_file_size_to_int  # datasets' asdict drops Nones

    rows, nbytes = _stream_size(arrow_path)
    # At least one shard: datasets writes none for an empty split and then cannot load it back.
    shards = max(1, min(rows, int(nbytes / convert_file_size_to_int(config.MAX_SHARD_SIZE)) + 1))
    batch_size = config.DEFAULT_MAX_BATCH_SIZE
    if nbytes > 0:
        batch_size = min(batch_size, get_writer_batch_size_from_data_size(rows, nbytes))
    names = [f"data-{i:05d}-of-{shards:05d}.arrow" for i in range(shards)]
    target.mkdir(parents=True, exist_ok=True)
    div, mod = divmod(rows, shards)  # contiguous shards, cut as Dataset.shard(contiguous=True) cuts them
    cutter = _RowCutter(arrow_path)
    try:
        for i, name in enumerate(names):
            writer = ArrowWriter(features=features(view), path=str(target / name), embed_local_files=True)
            try:
                left = div + (1 if i < mod else 0)
                while left > 0:  # batches of batch_size rows, as Dataset.iter(batch_size) yields them
                    table = cutter.take(min(batch_size, left))
                    writer.write_table(table)
                    left -= table.num_rows
            finally:
                writer.finalize()
                writer.close()
    finally:
        cutter.close()
    state = {
        "_data_files": [{"filename": name} for name in names],
        "_fingerprint": fingerprint,
        "_format_columns": None,
        "_format_kwargs": {},
        "_format_type": None,
        "_output_all_columns": False,
        "_split": None,
    }
    with open(target / config.DATASET_STATE_JSON_FILENAME, "w", encoding="utf-8") as fh:
        json.dump(state, fh, indent=2, sort_keys=True)
    info = asdict(DatasetInfo(features=features(view)))
    with open(target / config.DATASET_INFO_FILENAME, "w", encoding="utf-8") as fh:
        json.dump({key: info[key] for key in sorted(info)}, fh, indent=2)


class ViewWriter:
    """Every view, fed one record dict at a time (``records.jsonl`` order); :meth:`close` finishes the
    Parquet/JSONL files and writes each view's ``DatasetDict`` folder. Rows never wait in memory beyond
    one batch per (view, split)."""

    def __init__(self, views_dir: Path, render_profile: str = DEFAULT_PROFILE) -> None:
        from datasets.utils.logging import disable_progress_bar

        disable_progress_bar()
        self.render_profile = check_profile(render_profile)
        self.views_dir = views_dir
        views_dir.mkdir(parents=True, exist_ok=True)
        self.cache = views_dir / ".cache"
        shutil.rmtree(self.cache, ignore_errors=True)  # never reuse a cache from an earlier build
        self.cache.mkdir()
        self.sinks = {(v, s): _Sink(views_dir, self.cache, v, s) for v in VIEWS for s in SPLITS}
        self.closed = False

    def add(self, record: dict[str, Any]) -> None:
        if record["split"] not in SPLITS or not any(m["role"] == "assistant" for m in record["messages"]):
            return
        if self.render_profile != RenderProfile.UPSTREAM:
            record = rendered_record(record, self.render_profile)
        for view in VIEWS:
            sink = self.sinks[(view, record["split"])]
            for row in view_spec(view).rows(record):
                sink.add(row)

    def abort(self) -> None:
        if not self.closed:
            self.closed = True
            for sink in self.sinks.values():
                sink.close()

    def close(self) -> dict[str, dict[str, int]]:
        """Finish every file; returns view → split → rows."""
        self.abort()
        counts: dict[str, dict[str, int]] = {}
        for view in VIEWS:
            target = self.views_dir / view
            shutil.rmtree(target, ignore_errors=True)
            target.mkdir()
            for split in SPLITS:
                sink = self.sinks[(view, split)]
                save_stream_to_disk(sink.arrow, target / split, view, sink.digest.hexdigest())
            # What DatasetDict.save_to_disk writes next to the splits.
            (target / DATASET_DICT_NAME).write_text(json.dumps({"splits": list(SPLITS)}), encoding="utf-8")
            counts[view] = {split: self.sinks[(view, split)].count for split in SPLITS}
        shutil.rmtree(self.cache, ignore_errors=True)
        return counts


def rendered_record(record: dict[str, Any], render_profile: str) -> dict[str, Any]:
    """``record`` with its messages as a policy under ``profile`` sees them (loss flags kept)."""
    tools = record.get("tools")
    if isinstance(tools, str):
        try:
            tools = orjson.loads(tools)
        except orjson.JSONDecodeError:
            tools = None
    listed = tools if isinstance(tools, list) else None
    messages, template_tools = render_chat(record["messages"], listed, render_profile)
    # The profile decides what the chat template is given: compact names the tools in its system turn.
    shown = "" if template_tools is None else orjson.dumps(template_tools).decode()
    return {**record, "messages": messages, "tools": shown}


def export_views(
    records: Callable[[], Iterable[dict[str, Any]]], views_dir: Path, render_profile: str = DEFAULT_PROFILE
) -> dict[str, dict[str, int]]:
    """Write every view in one pass over the record dicts; returns view → split → rows."""
    writer = ViewWriter(views_dir, render_profile)
    try:
        for record in records():
            writer.add(record)
    except BaseException:
        writer.abort()
        raise
    return writer.close()


__all__ = [
    "ViewWriter",
    "export_views",
    "rendered_record",
    "save_stream_to_disk",
]
