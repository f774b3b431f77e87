"""`arena firehose --parallel-races N`: races in N processes give the in-process outcomes, byte for byte."""

from __future__ import annotations

from pathlib import Path

from arena_helpers import FIREHOSE_POPULATION, compared_firehose, needs_bwrap, race_outcomes
from typer.testing import CliRunner

from shoparena.arena.firehose import FirehoseConfig, run_firehose
from shoparena.cli.main import app

pytestmark = needs_bwrap


def _config(shop_world, out: Path, parallel_races: int) -> FirehoseConfig:
    return compared_firehose(shop_world, out, races=3, parallel_races=parallel_races)


def test_parallel_races_match_races_in_turn_and_resume(shop_world, tmp_path: Path):
    in_turn = tmp_path / "in-turn"
    run_firehose(_config(shop_world, in_turn, 1), search=shop_world.engine)
    parallel = tmp_path / "parallel"
    lines: list[str] = []
    dirs = run_firehose(_config(shop_world, parallel, 2), progress=lines.append)
    assert [d.name for d in dirs] == ["race-000", "race-001", "race-002"]
    assert lines == ["race 1/3 done", "race 2/3 done", "race 3/3 done"]
    expected = race_outcomes(in_turn)
    assert len(expected) == 3 * 2 * len(FIREHOSE_POPULATION)
    assert race_outcomes(parallel) == expected
    for race in ("race-000", "race-001", "race-002"):
        for name in ("race.json", "weights.json"):
            assert (parallel / race / name).read_bytes() == (in_turn / race / name).read_bytes()
    # A lost race is run again on resume, with the same parallel setting, and comes back the same.
    weights = (parallel / "race-001" / "weights.json").read_bytes()
    for path in sorted((parallel / "race-001").rglob("*"), reverse=True):
        path.unlink() if path.is_file() else path.rmdir()
    (parallel / "race-001").rmdir()
    run_firehose(_config(shop_world, parallel, 2))
    assert (parallel / "race-001" / "weights.json").read_bytes() == weights


def test_cli_takes_parallel_races(shop_world, tmp_path: Path):
    out = tmp_path / "cli"
    result = CliRunner().invoke(
        app,
        [
            "arena", "firehose", "--suite", str(shop_world.product_only), "--index", str(shop_world.index),
            "--races", "2", "--problems-per-race", "1", "--workers", "1", "--parallel-races", "2",
            "--out", str(out),
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert sorted(p.parent.name for p in out.glob("race-*/race.json")) == ["race-000", "race-001"]
