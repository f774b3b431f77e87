"""A firehose directory knows its suites, index and settings: a firehose over other suites into it is refused
before anything is written (races already there would be served as new), more races extend it."""

from __future__ import annotations

from pathlib import Path

import pytest

from shoparena.arena.firehose import FirehoseConfig, firehose_identity, run_firehose
from shoparena.runs.identity import RunDirError, claim_run_dir


def _config(tmp_path: Path, suite: str, **kw) -> FirehoseConfig:
    path = tmp_path / suite
    path.write_text(f'[{{"suite": "{suite}"}}]')
    (tmp_path / "index").mkdir(exist_ok=True)
    return FirehoseConfig(suites=[path], index=tmp_path / "index", out=tmp_path / "fh", **kw)


def test_other_suites_are_refused_before_any_write_and_more_races_extend(tmp_path):
    first = _config(tmp_path, "a.json", races=1)
    claim_run_dir(first.out, firehose_identity(first), own=[]).release()  # as a finished firehose leaves it
    (first.out / "race-000").mkdir()
    (first.out / "race-000" / "race.json").write_text("{}")
    before = sorted(p.relative_to(first.out).as_posix() for p in first.out.rglob("*"))

    other = _config(tmp_path, "b.json", races=1)
    with pytest.raises(RunDirError, match=r"input suites\.0: other content.*--restart"):
        run_firehose(other)
    assert sorted(p.relative_to(first.out).as_posix() for p in first.out.rglob("*")) == before
    with pytest.raises(RunDirError, match=r"timeout_s: 30\.0 -> 5\.0"):
        run_firehose(_config(tmp_path, "a.json", timeout_s=5.0))

    assert firehose_identity(_config(tmp_path, "a.json", races=3, workers=8)) == firehose_identity(first)
    with pytest.raises(RunDirError, match="is the input"):
        run_firehose(first.model_copy(update={"out": first.index}))
