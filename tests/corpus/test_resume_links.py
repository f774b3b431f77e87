"""A resume of ``corpus build`` never writes through a planted link out of the corpus (issue 31, #7)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sandbox_marks import needs_bwrap
from shoparena.cli.main import app


@needs_bwrap
@pytest.mark.parametrize("planted", ["summary.json", "views"])
def test_corpus_build_refuses_to_resume_through_a_link_out(corpus_dir: Path, firehose_dir, tmp_path, planted):
    corpus = tmp_path / "c"
    shutil.copytree(corpus_dir, corpus, symlinks=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("mine")
    target = corpus / planted
    if target.is_dir():
        shutil.rmtree(target)
    else:
        target.unlink(missing_ok=True)
    target.symlink_to(outside / "summary.json" if planted == "summary.json" else outside)
    race = str(firehose_dir / "race-000")
    args = ["corpus", "build", race, "--out", str(corpus), "--render-profile", "upstream"]
    result = CliRunner().invoke(app, args)  # the fixture's own command: a resume
    assert result.exit_code == 2, result.output
    assert "symbolic link" in result.stderr and "Traceback" not in result.output
    assert sorted(p.name for p in outside.iterdir()) == ["keep.txt"]
