"""The corpus folder loads with ``datasets.load_dataset`` offline; publishing fails clearly offline."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from sandbox_marks import needs_bwrap
from shoparena.cli.main import app


@needs_bwrap
def test_card_metadata_lets_datasets_load_each_view(corpus_dir: Path, tmp_path, monkeypatch) -> None:
    datasets = pytest.importorskip("datasets")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    card = (corpus_dir / "README.md").read_text()
    meta = yaml.safe_load(card.split("---\n")[1])
    assert meta["license"] == "apache-2.0"
    assert [c["config_name"] for c in meta["configs"]] == ["sft", "sft_all", "steps", "kto"]
    assert [c for c in meta["configs"] if c.get("default")] == meta["configs"][:1]
    for config, view in (("sft", "sft_kept"), ("sft_all", "sft"), ("steps", "steps"), ("kto", "kto")):
        loaded = datasets.load_dataset(str(corpus_dir), config, cache_dir=str(tmp_path / "cache"))
        for split in ("train", "eval"):
            rows = [
                json.loads(line)
                for line in (corpus_dir / "views" / f"{view}-{split}.jsonl").read_text().splitlines()
            ]
            if not rows:  # an empty split is not listed (datasets cannot read a Parquet file without rows)
                assert split not in loaded
                continue
            assert loaded[split].num_rows == len(rows)
            assert loaded[split][0]["record_id"] == rows[0]["record_id"]
    every = datasets.load_dataset(str(corpus_dir), "sft_all", cache_dir=str(tmp_path / "cache"))["train"]
    assert every.num_rows and every[0]["messages"][0]["role"] in ("system", "user")
    default = datasets.load_dataset(str(corpus_dir), cache_dir=str(tmp_path / "cache"))["train"]
    assert 0 < default.num_rows < every.num_rows and set(default["outcome"]) == {"kept"}
    assert default[0]["prompt"][-1]["role"] == "user" and default[0]["completion"][0]["role"] == "assistant"


@needs_bwrap
def test_publish_stages_the_folder_and_fails_in_one_line_offline(corpus_dir: Path, tmp_path) -> None:
    stage = tmp_path / "stage"
    base = ["corpus", "publish", str(corpus_dir), "--repo-id", "org/shop", "--out", str(stage)]
    prepared = CliRunner().invoke(app, [*base, "--prepare-only"])
    assert prepared.exit_code == 0, prepared.output
    assert (stage / "README.md").read_text() == (corpus_dir / "README.md").read_text()
    assert sorted(p.name for p in (stage / "views").iterdir()) == sorted(
        p.name for p in (corpus_dir / "views").glob("*.parquet")
    )
    offline = CliRunner().invoke(app, [*base, "--endpoint", "http://127.0.0.1:9"])
    assert offline.exit_code == 2
    lines = offline.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: cannot publish org/shop to http://127.0.0.1:9")
    assert str(stage) in lines[0]


def test_publish_refuses_a_folder_without_a_card(tmp_path) -> None:
    result = CliRunner().invoke(
        app, ["corpus", "publish", str(tmp_path), "--repo-id", "o/n", "--prepare-only"]
    )
    assert result.exit_code == 2 and "no dataset card" in result.stderr


def _row_lengths_as_transformers_counts(views_dir: Path) -> list[int]:
    """The published rows' lengths the way TRL sees them: Parquet rows, transformers' tokenizer."""
    import pyarrow.parquet as pq

    from shoparena.corpus.gates import default_tokenizer

    tokenizer, lengths = default_tokenizer(), []
    for split in ("train", "eval"):
        path = views_dir / f"sft_kept-{split}.parquet"
        for row in pq.read_table(path, columns=["prompt", "completion", "tools"]).to_pylist():
            messages = [
                {k: v for k, v in m.items() if v not in (None, [])} for m in row["prompt"] + row["completion"]
            ]
            for m in messages:
                m.setdefault("content", "")
            text = tokenizer.apply_chat_template(
                messages, tools=json.loads(row["tools"]) or None, tokenize=False
            )
            lengths.append(len(tokenizer(text, add_special_tokens=False)["input_ids"]))
    return sorted(lengths)


@needs_bwrap
def test_sft_row_lengths_without_transformers_match_transformers_on_parquet(
    corpus_dir: Path, tmp_path
) -> None:
    from shoparena.corpus.card import sft_row_lengths
    from shoparena.corpus.gates import default_chat_tokenizer

    views = corpus_dir / "views"
    want = _row_lengths_as_transformers_counts(views)
    assert want, "the fixture corpus publishes sft rows"
    got = sft_row_lengths(views, default_chat_tokenizer())
    assert got is not None and got["rows"] == len(want) and got["max"] == want[-1]
    assert got["p50"] == want[min(len(want) - 1, len(want) // 2)]
    assert json.loads((corpus_dir / "report.json").read_text())["sft_lengths"] == got
    # Without the JSONL views (Parquet only) the lengths are the same.
    parquet_only = tmp_path / "views"
    parquet_only.mkdir()
    for path in views.glob("sft_kept-*.parquet"):
        shutil.copy(path, parquet_only / path.name)
    assert sft_row_lengths(parquet_only, default_chat_tokenizer()) == got
