"""The view table (corpus.views.VIEWS) and the method table (train.methods.METHODS) agree, and a view added
as one entry is written by ``corpus build`` and read by ``train``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from corpus_helpers import SN15_ROWS, view_record
from typer.testing import CliRunner

from shoparena.cli.main import app
from shoparena.corpus.export import export_views
from shoparena.corpus.views import VIEWS, ViewSpec, features, method_views, sft_rows
from shoparena.train.config import ConfigError, load_config
from shoparena.train.methods import METHODS


def test_every_method_has_a_view_and_every_view_a_method() -> None:
    assert set(method_views()) == set(METHODS)
    for method in METHODS.values():
        assert method.view in VIEWS and VIEWS[method.view].method == method.name
    for spec in VIEWS.values():
        assert spec.method in METHODS, spec.name


@pytest.mark.parametrize("name", list(VIEWS))
def test_every_view_has_features_and_a_builder_that_fits_them(name: str) -> None:
    columns = set(features(name))
    rows = list(VIEWS[name].rows(view_record(1, 3)))
    assert rows and all(set(row) == columns for row in rows)


def test_every_method_names_a_trl_config_class() -> None:
    pytest.importorskip("trl")
    from shoparena.train.trl_configs import config_class

    assert {name: config_class(name).__name__ for name in METHODS} == {
        name: m.config_class for name, m in METHODS.items()
    }


def test_an_unknown_view_or_method_is_a_config_error_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump({"model": "tiny", "data": {"view": "nope"}}))
    with pytest.raises(ConfigError, match=r"field data\.view: .*unknown corpus view 'nope'"):
        load_config(path, "sft")
    with pytest.raises(ConfigError, match="unknown training method 'dpo'"):
        load_config(path, "dpo")


def _short_rows(record: dict) -> Iterator[dict]:
    """The toy view: SFT rows of the records with at most two assistant turns."""
    if sum(m["role"] == "assistant" for m in record["messages"]) <= 2:
        yield from sft_rows(record)


@pytest.fixture
def toy_view(monkeypatch: pytest.MonkeyPatch) -> str:
    spec = ViewSpec("short", lambda message: {"messages": [message]}, _short_rows, method="sft")
    monkeypatch.setitem(VIEWS, "short", spec)
    return spec.name


def test_a_view_added_as_one_entry_is_built_and_trained_on(toy_view: str, tmp_path: Path) -> None:
    # corpus build writes every view of the table (the shared rows have no assistant turn: empty views).
    out = tmp_path / "built"
    result = CliRunner().invoke(app, ["corpus", "build", "--from", str(SN15_ROWS), "--out", str(out)])
    assert result.exit_code == 0, result.output
    listed = json.loads((out / "views" / toy_view / "dataset_dict.json").read_text())
    assert listed == {"splits": ["train", "eval"]}
    assert (out / "views" / f"{toy_view}-train.parquet").is_file()

    # The rows: records with 0..5 steps, of which those with <= 2 assistant turns (0 or 1 tool step).
    records = [view_record(i, i % 6) for i in range(12)]
    counts = export_views(lambda: records, tmp_path / "corpus" / "views")
    assert counts[toy_view] == {"train": 4, "eval": 0}
    assert counts["sft"] == {"train": 12, "eval": 0}

    from shoparena.train.data import select_rows

    config = tmp_path / "train.yaml"
    config.write_text(yaml.safe_dump({"model": "tiny"}))
    cfg = load_config(config, "sft", [f"data.corpus={tmp_path / 'corpus'}", f"data.view={toy_view}"])
    rows, report = select_rows(cfg)
    assert report.view == toy_view and report.rows == 4
    kept = [r for r in records if r["outcome"] == "kept" and len(r["messages"]) <= 5]
    assert sorted(rows["record_id"]) == sorted(r["record_id"] for r in kept)


def test_the_train_cli_has_one_command_per_method() -> None:
    result = CliRunner().invoke(app, ["train", "--help"])
    assert result.exit_code == 0
    for name, method in METHODS.items():
        assert f" {name} " in result.output and method.help.split(":")[0].split(" (")[0][:20] in result.output
