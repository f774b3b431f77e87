"""Fixtures: a one-race firehose over a small synthetic catalog (real sandbox, planner teachers)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def firehose_dir(shop_world, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A one-race firehose over the shared synthetic world's 4-problem bank (``OUT/race-000``)."""
    from shoparena.arena.firehose import FirehoseConfig, run_firehose

    out = tmp_path_factory.mktemp("firehose") / "fh"
    config = FirehoseConfig(
        suites=[shop_world.bank],
        index=shop_world.index,
        out=out,
        races=1,
        problems_per_race=4,
        timeout_s=10,
        # Two sandboxes, as before the machine defaults (4): a 10 s limit must hold on a loaded CI host.
        workers=2,
    )
    run_firehose(config, search=shop_world.engine)
    return out


@pytest.fixture(scope="session")
def corpus_dir(firehose_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from typer.testing import CliRunner

    from shoparena.cli.main import app

    out = tmp_path_factory.mktemp("corpus") / "c"
    # Upstream rendering: the view-layout tests read ShoppingBench's own text (the pipeline's compact profile
    # is covered by the pipeline tests and tests/formats).
    race = str(firehose_dir / "race-000")
    args = ["corpus", "build", race, "--out", str(out), "--render-profile", "upstream"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    return out
