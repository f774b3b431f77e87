"""``open_run``: one typed handle per run directory, chosen by the manifest's kind."""

from __future__ import annotations

import pytest

from shoparena.arena.layout import ArenaRun
from shoparena.corpus.layout import CorpusRun
from shoparena.eval.layout import EvalRun
from shoparena.pipeline.layout import PipelineRun
from shoparena.runs.layout import EnvelopeLogRun, RunHandle, handle_class, open_run, register_run_kind
from shoparena.runs.manifest import ArenaManifest, ManifestError, RunManifest, write_manifest
from shoparena.train.layout import TrainRun


@pytest.mark.parametrize(
    ("kind", "handle"),
    [
        ("arena", ArenaRun),
        ("eval", EvalRun),
        ("corpus", CorpusRun),
        ("train-sft", TrainRun),
        ("train-kto", TrainRun),
        ("pipeline", PipelineRun),
        ("episodes", EnvelopeLogRun),
    ],
)
def test_the_manifest_kind_picks_the_handle(tmp_path, kind, handle):
    write_manifest(RunManifest(kind=kind), tmp_path)
    run = open_run(tmp_path)
    assert type(run) is handle and run.kind == kind and run.manifest is not None


def test_the_arena_handle_reads_its_typed_manifest_and_names_its_files(tmp_path):
    write_manifest(ArenaManifest(agents={"b": {"path": "b.py", "sha256": "0" * 64}}), tmp_path)
    (tmp_path / "agents" / "a").mkdir(parents=True)
    run = open_run(tmp_path, ArenaRun)
    assert isinstance(run.manifest, ArenaManifest)
    assert run.agents() == ["b"] and run.agent_folders() == ["a"]
    assert run.proxy_log_path("b", "p/1").parent == run.proxy_dir("b")
    assert run.proxy_log_path("b", "p/1").name == "p_1.jsonl"  # one file-name-safe rule
    assert run.verdicts("b") == {} and run.race() is None and run.miner_truth("b") is None


def test_a_kind_the_reader_cannot_use_is_one_line_naming_the_file(tmp_path):
    write_manifest(RunManifest(kind="corpus"), tmp_path)
    with pytest.raises(ManifestError, match=r"manifest.json: kind: a 'corpus' run directory, not arena"):
        open_run(tmp_path, ArenaRun)
    with pytest.raises(ManifestError, match=r"not arena"):
        ArenaRun.open(tmp_path)


def test_no_manifest_or_a_torn_one_is_a_manifest_error(tmp_path):
    with pytest.raises(ManifestError, match="no manifest"):
        open_run(tmp_path)
    (tmp_path / "manifest.json").write_text('{"kind": "ar')
    with pytest.raises(ManifestError, match="torn"):
        open_run(tmp_path)


def test_an_unknown_kind_opens_as_the_plain_handle(tmp_path):
    write_manifest(RunManifest(kind="index"), tmp_path)
    run = open_run(tmp_path)
    assert type(run) is RunHandle and run.config_path.parent == tmp_path


def test_a_new_kind_is_one_registered_class(tmp_path):
    @register_run_kind
    class SweepRun(RunHandle):
        kinds = ("test-sweep",)

        @property
        def grid_path(self):
            return self.path / "grid.json"

    try:
        write_manifest(RunManifest(kind="test-sweep"), tmp_path)
        run = open_run(tmp_path)
        assert isinstance(run, SweepRun) and run.grid_path == tmp_path / "grid.json"
        with pytest.raises(ValueError, match="already opened by"):

            @register_run_kind
            class Other(RunHandle):
                kinds = ("test-sweep",)

    finally:
        from shoparena.runs import layout

        layout._HANDLES.pop("test-sweep", None)
    assert handle_class("test-sweep") is RunHandle
