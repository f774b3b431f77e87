"""The training run directory: log lines read through shoparena.jsonl, the manifest set up by RunDir."""

from __future__ import annotations

import json

import pytest
import yaml

from shoparena.runs.identity import RunLockedError, read_identity
from shoparena.runs.manifest import read_manifest
from shoparena.train.config import load_config
from shoparena.train.runner import TrainManifest, TrainRunDir, _tokens_per_s


def test_tokens_per_second_reads_log_lines_split_on_newline_only(tmp_path):
    rows = [{"step": 1, "num_tokens": 100, "note": "a\u2028b\u0085c"}, {"step": 2, "loss": 1.0},
            {"step": 3, "num_tokens": 400}]
    body = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    (tmp_path / "logs.jsonl").write_text(body + '{"step": 4, "num_tok', encoding="utf-8")  # torn last line
    assert _tokens_per_s(tmp_path, 3.0) == 100.0
    assert _tokens_per_s(tmp_path / "missing", 3.0) is None


def test_train_run_dir_is_a_run_dir_with_a_train_manifest(tmp_path):
    cfg = load_config("tiny", "sft")
    first = TrainRunDir(tmp_path / "run", kind="train", config=cfg)
    assert yaml.safe_load((tmp_path / "run" / "config.yaml").read_text(encoding="utf-8"))["method"] == "sft"
    manifest = read_manifest(tmp_path / "run", TrainManifest)
    assert (manifest.kind, manifest.method, manifest.model) == ("train", "sft", cfg.model)
    with pytest.raises(RunLockedError):  # one run at a time in a directory
        TrainRunDir(tmp_path / "run", kind="train", config=cfg)
    first.close()
    again = TrainRunDir(tmp_path / "run", kind="train", config=cfg)  # a re-run resumes the same run
    assert again.resumed and read_identity(tmp_path / "run").kind == "train-sft"
    assert isinstance(again.manifest, TrainManifest) and again.manifest.run_id == first.manifest.run_id
