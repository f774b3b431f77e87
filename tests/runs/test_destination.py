"""Destinations a command replaces: refused unless the command wrote them (issue 31, finding 1)."""

from __future__ import annotations

import pytest

from shoparena.models.folder import MANIFEST_NAME, save_model_folder
from shoparena.runs.identity import (
    RunDirError,
    RunIdentity,
    RunKind,
    claim_run_dir,
    refuse_foreign_destination,
)


def test_a_foreign_folder_a_link_a_file_and_an_input_are_refused(tmp_path) -> None:
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "catalog.jsonl").write_text("{}\n")
    with pytest.raises(RunDirError, match="not empty and was not written by this command"):
        refuse_foreign_destination(foreign, markers=(MANIFEST_NAME,))
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "nowhere")
    with pytest.raises(RunDirError, match="symbolic link"):
        refuse_foreign_destination(link, markers=(MANIFEST_NAME,))
    with pytest.raises(RunDirError, match="is a file"):
        refuse_foreign_destination(foreign / "catalog.jsonl", markers=(MANIFEST_NAME,))
    with pytest.raises(RunDirError, match="holds the input"):
        refuse_foreign_destination(tmp_path, markers=(), input_paths=[foreign / "catalog.jsonl"])
    own = tmp_path / "own"
    own.mkdir()
    (own / MANIFEST_NAME).write_text("{}")
    refuse_foreign_destination(own, markers=(MANIFEST_NAME,))  # its own earlier output: replaced
    refuse_foreign_destination(tmp_path / "new", markers=(MANIFEST_NAME,))


def test_a_model_folder_is_never_written_over_a_foreign_one(tmp_path) -> None:
    foreign = tmp_path / "out"
    foreign.mkdir()
    (foreign / "thesis.tex").write_text("years of work")
    with pytest.raises(RunDirError, match="not written by this command"):
        save_model_folder(None, None, foreign, kind="tiny", source="x", template_version=1)
    assert (foreign / "thesis.tex").read_text() == "years of work"


def test_a_run_directory_that_is_a_link_is_refused_before_anything_is_written(tmp_path) -> None:
    target = tmp_path / "target"
    target.mkdir()
    link = tmp_path / "run"
    link.symlink_to(target, target_is_directory=True)
    with pytest.raises(RunDirError, match="symbolic link"):
        claim_run_dir(link, RunIdentity.of(RunKind.EVAL, {}, {}), own=())
    assert list(target.iterdir()) == []


def test_a_resume_never_writes_through_a_link_out_of_its_directory(tmp_path) -> None:
    identity = RunIdentity.of(RunKind.CORPUS, {"a": 1}, {})
    run = tmp_path / "run"
    claim_run_dir(run, identity, own=("views",)).release()
    outside = tmp_path / "precious.json"
    outside.write_text("mine")
    (run / "summary.json").symlink_to(outside)
    with pytest.raises(RunDirError, match=r"summary\.json is a symbolic link to .*outside the run directory"):
        claim_run_dir(run, identity, own=("views",))
    (run / "summary.json").unlink()
    (run / "views").mkdir()
    (run / "views" / "sft").symlink_to(tmp_path, target_is_directory=True)
    with pytest.raises(RunDirError, match="views/sft is a symbolic link"):
        claim_run_dir(run, identity, own=("views",))
    (run / "views" / "sft").unlink()
    (run / "views" / "inside").symlink_to(run / "views")  # a link that stays inside is harmless
    claim_run_dir(run, identity, own=("views",)).release()
    assert outside.read_text() == "mine"
