"""``report.json`` as :class:`CorpusReport`: what a build wrote comes back byte for byte, older corpora (no
render profile) read with the default, and a report that is not one is one line naming the field."""

from __future__ import annotations

import json

import pytest

from shoparena.corpus.layout import CorpusRun
from shoparena.records.corpus import CorpusReport
from shoparena.runs.files import RunFileError

FUNNEL = {
    "input": 10,
    "quarantined": 1,
    "records": 9,
    "rejected": {"low_richness": 4, "duplicate": 0},
    "kept": 5,
    "recovered": 2,
    "recovered_kept": 1,
    "views": {"sft": {"train": 4, "eval": 1}},
    "adds_up": True,
}


def _write(tmp_path, doc) -> CorpusRun:
    (tmp_path / "report.json").write_text(json.dumps(doc, indent=2, sort_keys=True))
    return CorpusRun.at(tmp_path)


def test_a_written_report_reads_back_and_writes_the_same_bytes(tmp_path) -> None:
    doc = {
        "funnel": FUNNEL,
        "filter_quality": None,
        "thresholds": {"filter": {"min_richness": 0.5}},
        "render": {"profile": "compact", "profile_hash": "abc"},
        "sft_lengths": {"max_length": 512, "p50": 100},
        "richness_by_miner_kind": {"agentic": {"1.0": 3}},  # a key this model does not name: kept
    }
    corpus = _write(tmp_path, doc)
    report = corpus.report()
    assert report.funnel.kept == 5 and report.render_profile("upstream") == "compact"
    assert corpus.render_profile("upstream") == "compact"
    assert json.dumps(report.document(), indent=2, sort_keys=True) == corpus.report_path.read_text()


def test_a_report_from_before_the_render_profile_reads_with_the_default(tmp_path) -> None:
    corpus = _write(tmp_path, {"funnel": FUNNEL})
    assert corpus.report().render is None and corpus.render_profile("upstream") == "upstream"
    assert CorpusRun.at(tmp_path / "none").render_profile("upstream") == "upstream"  # no report at all


@pytest.mark.parametrize(
    ("doc", "field"),
    [({"funnel": {**FUNNEL, "kept": "many"}}, "funnel.kept"), ({"render": {"profile": "x"}}, "funnel")],
)
def test_a_report_that_is_not_one_names_the_field(tmp_path, doc, field) -> None:
    with pytest.raises(RunFileError, match=rf"report.json.*{field}"):
        _write(tmp_path, doc).report()


def test_numbers_keep_their_type() -> None:
    quality = {"precision": 1, "recall": 0.5}
    report = CorpusReport.model_validate({"funnel": FUNNEL, "filter_quality": quality})
    assert report.document()["filter_quality"] == {"precision": 1, "recall": 0.5}
    assert json.dumps(report.document()["filter_quality"]) == '{"precision": 1, "recall": 0.5}'
