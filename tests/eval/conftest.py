"""Fixtures: a small checked bank over the shared synthetic catalog.

No web problems: the arena's agentic miner offers no web_search, and the path-equivalence test compares all
three paths."""

from __future__ import annotations

from pathlib import Path

import pytest

from shoparena.eval.config import EvalConfig
from shoparena.records.problem import Intent
from shoparena.suites.options import SynthOptions
from shoparena.suites.synth import synthesize_bank


@pytest.fixture(scope="session")
def bank(synth, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bank") / "bank.json"
    options = SynthOptions(n=6, seed=4, intents=(Intent.PRODUCT, Intent.SHOP, Intent.VOUCHER))
    synthesize_bank(synth.index.index_dir, out, options)
    return out


@pytest.fixture
def make_config(bank, synth, tmp_path):
    def make(policy: str = "planner", out: str = "run", **kw) -> EvalConfig:
        kw.setdefault("progress", False)
        kw.setdefault("max_steps", 12)
        kw.setdefault("bootstrap", 200)
        return EvalConfig(policy=policy, suite=bank, index=synth.index.index_dir, out=tmp_path / out, **kw)

    return make
