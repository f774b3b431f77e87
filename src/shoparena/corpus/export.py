"""Views (corpus contract) as HF ``datasets`` (save_to_disk, Parquet, JSONL): every view of
:data:`shoparena.corpus.views.VIEWS`.

Rows come one record dict at a time (``records.jsonl`` order) into Parquet (pyarrow, fixed batches, the schema
of explicit :class:`datasets.Features`), JSONL (sorted keys) and each view's ``save_to_disk`` shard, written
as the rows come on the layout ordinary rows get (re-cut at the end when a split outgrows it). Memory stays
flat (a batch per split) and every file is a pure function of the records (byte-identical on re-runs).
Records without an assistant turn appear only in ``records.jsonl``.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import orjson

from shoparena.corpus.layout import DATASET_DICT_NAME, view_file
from shoparena.corpus.views import SPLITS, VIEWS, features, view_spec
from shoparena.formats.profiles import DEFAULT_PROFILE, RenderProfile, check_profile, render_chat
from shoparena.jsonl import LineWriter

BATCH_ROWS = 256


class _Sink:
    """One (view, split) output: a Parquet writer fed in fixed-size batches, the JSONL file, and the
    ``save_to_disk`` shard written as the rows come (:class:`_ShardWriter`)."""

    def __init__(self, views_dir: Path, cache: Path, view: str, split: str) -> None:
        import pyarrow.parquet as pq
        import xxhash

        self.schema = features(view).arrow_schema
        self.parquet = view_file(views_dir, view, split, "parquet")
        self.writer = pq.ParquetWriter(str(self.parquet), self.schema)
        self.shard = _ShardWriter(cache / f"{view}-{split}.arrow", view)
        self.jsonl = LineWriter(view_file(views_dir, view, split, "jsonl"))
        self.rows: list[dict[str, Any]] = []
        self.digest = xxhash.xxh64()  # content fingerprint of the rows, for the datasets state.json
        self.count = 0

    def add(self, row: dict[str, Any]) -> None:
        self.digest.update(self.jsonl.dump(row, orjson.OPT_SORT_KEYS))
        self.rows.append(row)
        self.count += 1
        if len(self.rows) >= BATCH_ROWS:
            self.flush()

    def flush(self) -> None:
        import pyarrow as pa

        if self.rows:
            table = pa.Table.from_pylist(self.rows, schema=self.schema)
            self.writer.write_table(table)
            self.shard.add(table)
            self.rows = []

    def close(self) -> None:
        import pyarrow as pa

        self.flush()
        if self.count == 0:
            self.writer.write_table(pa.Table.from_pylist([], schema=self.schema))
        self.writer.close()
        self.shard.close()
        self.jsonl.close()


def _arrow_writer(path: Path, view: str) -> Any:
    """datasets' ``ArrowWriter`` of ``view``'s rows into ``path``, on a native pyarrow file: the IPC stream's
    writes stay in Arrow (its own path opens an fsspec file, which takes every write through Python). The
    writer closes the file on ``finalize``."""
    import pyarrow as pa
    from datasets.arrow_writer import ArrowWriter

    return ArrowWriter(features=features(view), stream=pa.OSFile(str(path), "wb"), embed_local_files=True)


def _shard_layout(rows: int, nbytes: int) -> tuple[int, int]:
    """(shards, rows per record batch) of ``save_to_disk`` for a table of ``rows`` rows and ``nbytes``
    Arrow bytes (``Dataset._estimate_nbytes``): at least one shard (datasets writes none for an empty split
    and then cannot load it back)."""
    from datasets import config
    from datasets.arrow_writer import get_writer_batch_size_from_data_size
    from datasets.utils.py_utils import convert_file_size_to_int

    shards = max(1, min(rows, int(nbytes / convert_file_size_to_int(config.MAX_SHARD_SIZE)) + 1))
    batch_size = config.DEFAULT_MAX_BATCH_SIZE
    if nbytes > 0:
        batch_size = min(batch_size, get_writer_batch_size_from_data_size(rows, nbytes))
    return shards, batch_size


class _ShardWriter:
    """A view split's ``save_to_disk`` shard, written while the rows come, on the layout a corpus of
    ordinary rows gets: one shard (under ``MAX_SHARD_SIZE``) in record batches of ``DEFAULT_MAX_BATCH_SIZE``
    rows (rows under ``MAX_ROW_GROUP_SIZE / DEFAULT_MAX_BATCH_SIZE`` bytes on average). Rows wait here until a
    batch is whole, so memory holds at most one batch per split. :meth:`finish` moves the file into place
    when the layout holds, and otherwise re-cuts it (several shards, or smaller batches) from this file.

    ``nbytes`` sums the Arrow bytes of the tables as they come, which is what ``Dataset._estimate_nbytes``
    reads from a stream of those tables (the sizing of ``save_to_disk``'s shards and batches)."""

    def __init__(self, path: Path, view: str) -> None:
        from datasets import config

        self.path, self.view = path, view
        self.batch_size = config.DEFAULT_MAX_BATCH_SIZE
        self.writer = _arrow_writer(path, view)
        self.pending: list[Any] = []
        self.held = self.rows = self.nbytes = 0

    def add(self, table: Any) -> None:
        self.pending.append(table)
        self.held += table.num_rows
        self.rows += table.num_rows
        self.nbytes += table.nbytes
        while self.held >= self.batch_size:
            self._write(self.batch_size)

    def _write(self, n: int) -> None:
        import pyarrow as pa

        table = pa.concat_tables(self.pending)
        self.writer.write_table(table.slice(0, n))  # combined into one record batch, as save_to_disk writes
        rest = table.slice(n)
        self.pending, self.held = ([rest] if rest.num_rows else []), rest.num_rows

    def close(self) -> None:
        if self.held:
            self._write(self.held)
        self.writer.finalize()
        self.writer.close()

    def finish(self, target: Path, fingerprint: str) -> None:
        """``target`` as ``Dataset.save_to_disk`` writes these rows (``fingerprint``: ``state.json``)."""
        layout = _shard_layout(self.rows, self.nbytes)
        target.mkdir(parents=True, exist_ok=True)
        if layout == (1, self.batch_size):
            names = [_shard_name(0, 1)]
            os.replace(self.path, target / names[0])
        else:
            names = _write_shards(self.path, target, self.view, self.rows, layout, BATCH_ROWS)
            self.path.unlink()
        _write_dataset_files(target, names, self.view, fingerprint)


def _shard_name(i: int, shards: int) -> str:
    return f"data-{i:05d}-of-{shards:05d}.arrow"


class _Chunks:
    """The record batches of an Arrow IPC stream file, read sequentially (no memory map: resident memory
    holds the batches in hand, not the file), handed out shard by shard as what ``to_reader`` of a
    contiguous shard of the table gives, so datasets' own ``table_iter`` cuts them as ``save_to_disk`` does
    (a batch inside one chunk is written as a slice of it, one that spans chunks as a copy: the bytes follow
    the chunks).

    ``chunk``: the file's batches are first re-cut into the batches a stream of ``chunk``-row tables of the
    same rows reads back (each rebuilt: a slice's bitmaps carry its chunk's neighbouring bits)."""

    def __init__(self, path: Path, chunk: int) -> None:
        import pyarrow as pa

        self._pa = pa
        self._file = pa.OSFile(str(path), "rb")
        self._reader = pa.ipc.open_stream(self._file)
        self._batches = self._rechunked(chunk)
        self._held: Any = None  # the part of a batch that the last shard left

    def shard(self, rows: int) -> Any:
        """The next ``rows`` rows, as what ``table_iter`` reads: ``to_reader(max_chunksize)``."""
        return _ShardChunks(self, rows)

    def _next(self, rows: int) -> Any:
        batch = self._held if self._held is not None else next(self._batches)
        self._held = batch.slice(rows) if batch.num_rows > rows else None
        return batch.slice(0, rows) if batch.num_rows > rows else batch

    def _rechunked(self, chunk: int) -> Iterator[Any]:
        rows: list[dict[str, Any]] = []
        for batch in self._reader:
            rows += batch.to_pylist()
            while len(rows) >= chunk:
                yield self._rebuilt(rows[:chunk])
                rows = rows[chunk:]
        if rows:
            yield self._rebuilt(rows)

    def _rebuilt(self, rows: list[dict[str, Any]]) -> Any:
        """``rows`` as the one batch an IPC stream of their table reads back."""
        pa, schema = self._pa, self._reader.schema
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, schema) as stream:
            stream.write_table(pa.Table.from_pylist(rows, schema=schema))
        return pa.ipc.open_stream(sink.getvalue()).read_next_batch()

    def close(self) -> None:
        self._reader.close()
        self._file.close()


class _ShardChunks:
    """``rows`` rows of :class:`_Chunks`, read once through :meth:`to_reader`."""

    def __init__(self, chunks: _Chunks, rows: int) -> None:
        self._chunks, self._rows = chunks, rows

    def to_reader(self, max_chunksize: int) -> Iterator[Any]:
        left = self._rows
        while left > 0:
            batch = self._chunks._next(left)
            left -= batch.num_rows
            for start in range(0, batch.num_rows, max_chunksize):  # as pyarrow's TableBatchReader cuts
                yield batch.slice(start, max_chunksize)


def _write_shards(
    source: Path,
    target: Path,
    view: str,
    rows: int,
    layout: tuple[int, int],
    chunk: int,
) -> list[str]:
    """The ``rows`` rows of the Arrow stream ``source`` as ``layout[0]`` contiguous shards in ``target``
    (cut as ``Dataset.shard(contiguous=True)`` cuts them), in batches of ``layout[1]`` rows (cut by
    datasets' ``table_iter``, as ``Dataset.iter`` cuts them), the source read as ``chunk``-row batches
    (:class:`_Chunks`); returns the shards' file names."""
    from datasets.table import table_iter

    shards, batch_size = layout
    names = [_shard_name(i, shards) for i in range(shards)]
    div, mod = divmod(rows, shards)
    chunks = _Chunks(source, chunk)
    try:
        for i, name in enumerate(names):
            writer = _arrow_writer(target / name, view)
            try:
                for table in table_iter(chunks.shard(div + (1 if i < mod else 0)), batch_size):
                    writer.write_table(table)
            finally:
                writer.finalize()
                writer.close()
    finally:
        chunks.close()
    return names


def _write_dataset_files(target: Path, names: list[str], view: str, fingerprint: str) -> None:
    """``state.json`` and ``dataset_info.json`` beside the shards ``names``, as ``save_to_disk`` writes."""
    from datasets import DatasetInfo, config
    from datasets.utils.py_utils import asdict  # datasets' asdict drops Nones

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
                sink.shard.finish(target / split, sink.digest.hexdigest())
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
]
