"""View writing: the fast paths write exactly what the plain pyarrow / orjson / datasets calls write."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest
from corpus_helpers import view_record as _record

from shoparena.corpus.export import ViewWriter, _Sink
from shoparena.corpus.views import VIEWS, features


@pytest.mark.parametrize("view", list(VIEWS))
def test_sink_writes_what_plain_pyarrow_and_orjson_write(tmp_path: Path, view: str):
    import pyarrow as pa
    import pyarrow.parquet as pq

    cache = tmp_path / "cache"
    cache.mkdir()
    sink = _Sink(tmp_path, cache, view, "train")
    rows = [row for i in range(700) for row in VIEWS[view].rows(_record(i, i % 6))]
    for row in rows:
        sink.add(row)
    sink.close()
    expected_lines = b"".join(orjson.dumps(r, option=orjson.OPT_SORT_KEYS) + b"\n" for r in rows)
    assert (tmp_path / f"{view}-train.jsonl").read_bytes() == expected_lines
    schema = features(view).arrow_schema
    plain = tmp_path / "plain.parquet"
    with pq.ParquetWriter(str(plain), schema) as writer:
        for start in range(0, len(rows), 256):
            writer.write_table(pa.Table.from_pylist(rows[start : start + 256], schema=schema))
    assert (tmp_path / f"{view}-train.parquet").read_bytes() == plain.read_bytes()


def _plain_stream(path: Path, view: str, rows: list[dict]) -> Path:
    """The rows as an Arrow IPC stream of the sink's batches (what ``Dataset.from_file`` reads)."""
    import pyarrow as pa

    schema = features(view).arrow_schema
    with pa.ipc.new_stream(str(path), schema) as stream:
        for start in range(0, len(rows), 256):
            stream.write_table(pa.Table.from_pylist(rows[start : start + 256], schema=schema))
    return path


def _assert_same_folder(ours: Path, theirs: Path, fingerprint: str) -> list[str]:
    from datasets import load_from_disk

    names = sorted(p.name for p in theirs.iterdir())
    assert names == sorted(p.name for p in ours.iterdir())
    for name in names:
        if name != "state.json":  # the fingerprint: ours hashes the rows, from_file hashes the path
            assert (ours / name).read_bytes() == (theirs / name).read_bytes(), name
    state, their_state = (json.loads((d / "state.json").read_text()) for d in (ours, theirs))
    assert state == {**their_state, "_fingerprint": fingerprint}
    assert load_from_disk(str(ours)).to_list() == load_from_disk(str(theirs)).to_list()
    return names


# The shard written while the rows come, moved into place (default layout), or re-cut from it: into several
# shards (MAX_SHARD_SIZE), or into batches under DEFAULT_MAX_BATCH_SIZE rows (MAX_ROW_GROUP_SIZE).
@pytest.mark.parametrize(
    ("setting", "value", "several_shards", "default_batches"),
    [
        (None, None, False, True),
        ("MAX_SHARD_SIZE", 200_000, True, True),
        ("MAX_ROW_GROUP_SIZE", 50_000, False, False),
    ],
)
@pytest.mark.parametrize("view", ["steps", "kto"])
def test_sink_shards_match_datasets_save_to_disk(
    tmp_path, monkeypatch, setting, value, several_shards, default_batches, view
):
    import pyarrow as pa
    from datasets import Dataset, config

    if setting is not None:
        monkeypatch.setattr(config, setting, value)
    cache = tmp_path / "cache"
    cache.mkdir()
    sink = _Sink(tmp_path, cache, view, "train")
    rows = [row for i in range(1300) for row in VIEWS[view].rows(_record(i, i % 7))]
    for row in rows:
        sink.add(row)
    sink.close()
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    sink.shard.finish(ours, sink.digest.hexdigest())
    Dataset.from_file(str(_plain_stream(tmp_path / "plain.arrow", view, rows))).save_to_disk(str(theirs))
    names = _assert_same_folder(ours, theirs, sink.digest.hexdigest())
    data = [n for n in names if n.startswith("data-")]
    assert (len(data) > 1) == several_shards
    with pa.OSFile(str(ours / data[0]), "rb") as source, pa.ipc.open_stream(source) as reader:
        sizes = [batch.num_rows for batch in reader]
    assert (sizes[0] == min(config.DEFAULT_MAX_BATCH_SIZE, -(-len(rows) // len(data)))) == default_batches


def test_view_folders_are_byte_identical_on_rewrite(tmp_path: Path):
    outputs = []
    for name in ("a", "b"):
        writer = ViewWriter(tmp_path / name)
        for i in range(50):
            writer.add({**_record(i, i % 4), "split": "eval" if i % 5 == 0 else "train"})
        counts = writer.close()
        files = sorted(p for p in (tmp_path / name).rglob("*") if p.is_file())
        outputs.append({str(p.relative_to(tmp_path / name)): p.read_bytes() for p in files})
    assert counts["sft"] == {"train": 40, "eval": 10} and counts["kto"]["train"] > 0
    assert outputs[0] == outputs[1] and any(k.endswith("state.json") for k in outputs[0])


def test_an_empty_split_loads_back_with_its_features(tmp_path: Path):
    from datasets import load_from_disk

    from shoparena.corpus.export import export_views

    counts = export_views(lambda: [_record(i, 2) for i in range(3)], tmp_path / "views")
    assert counts["steps"] == {"train": 9, "eval": 0}  # two tool steps and the answer each
    for view in VIEWS:
        # An empty split used to be written without a shard, which load_from_disk cannot read.
        loaded = load_from_disk(str(tmp_path / "views" / view))
        assert len(loaded["eval"]) == 0 and loaded["eval"].features == features(view)
