"""Fixtures: a one-race firehose over a small synthetic catalog (real sandbox, planner teachers)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "arena"))


@pytest.fixture(scope="session")
def firehose_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from arena_helpers import needs_bwrap  # noqa: F401 - skip marker lives with the arena tests

    from shoparena.arena.firehose import FirehoseConfig, run_firehose
    from shoparena.catalog.synth import SynthConfig, synthesize_catalog
    from shoparena.records.problem import Intent
    from shoparena.search import SearchIndex
    from shoparena.search.index import build_index
    from shoparena.suites.loaders import write_oro_suite
    from shoparena.suites.options import SynthOptions
    from shoparena.suites.synth import synthesize_problems

    root = tmp_path_factory.mktemp("firehose")
    synthesize_catalog(SynthConfig(products=600, seed=7), root / "catalog.jsonl", progress=False)
    build_index(root / "catalog.jsonl", root / "index", progress=False)
    engine = SearchIndex.open(root / "index")
    products = list(engine.iter_products())
    options = SynthOptions(n=4, seed=3, intents=(Intent.PRODUCT, Intent.SHOP))
    write_oro_suite(synthesize_problems(products, options, engine=engine).problems, root / "bank.json")
    config = FirehoseConfig(
        suites=[root / "bank.json"],
        index=root / "index",
        out=root / "fh",
        races=1,
        problems_per_race=4,
        timeout_s=10,
    )
    run_firehose(config, search=engine)
    return root / "fh"


@pytest.fixture(scope="session")
def corpus_dir(firehose_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from typer.testing import CliRunner

    from shoparena.cli.main import app

    out = tmp_path_factory.mktemp("corpus") / "c"
    result = CliRunner().invoke(app, ["corpus", "build", str(firehose_dir / "race-000"), "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out
