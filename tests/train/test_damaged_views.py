"""A corpus whose saved view is damaged is one line naming it, never a traceback (issue 31, finding 9)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from shoparena.cli.main import app
from shoparena.train.config import ConfigError, DataSection
from shoparena.train.data import load_view

datasets = pytest.importorskip("datasets")


def _corpus(root: Path) -> Path:
    rows = {"messages": [[{"role": "user", "content": f"q{i}"}] for i in range(50)], "outcome": ["kept"] * 50}
    datasets.Dataset.from_dict(rows).save_to_disk(str(root / "views" / "sft" / "train"))
    return root


def _truncate_arrow(corpus: Path) -> None:
    (arrow,) = (corpus / "views" / "sft" / "train").glob("*.arrow")
    arrow.write_bytes(arrow.read_bytes()[: arrow.stat().st_size // 2])


def _tear_info(corpus: Path) -> None:
    info = corpus / "views" / "sft" / "train" / "dataset_info.json"
    info.write_text(info.read_text()[:20])


@pytest.mark.parametrize("damage", [_truncate_arrow, _tear_info])
def test_a_damaged_saved_view_is_a_config_error_naming_the_split(tmp_path, damage) -> None:
    corpus = _corpus(tmp_path / "corpus")
    assert len(load_view(DataSection(corpus=str(corpus)), "sft")) == 50
    damage(corpus)
    with pytest.raises(ConfigError, match=r"views/sft/train: view 'sft' split 'train' is damaged"):
        load_view(DataSection(corpus=str(corpus)), "sft")


@pytest.mark.slow  # imports the training stack (~30 s on 2 cores); the unit test above runs by default
def test_train_on_a_truncated_view_exits_2_in_one_line(tmp_path) -> None:
    corpus = _corpus(tmp_path / "corpus")
    _truncate_arrow(corpus)
    args = ["train", "sft", "--config", "tiny", "--set", f"data.corpus={corpus}"]
    result = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "run"), "--quiet"])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "is damaged" in errors[0], result.stderr
