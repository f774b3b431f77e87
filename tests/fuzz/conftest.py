"""Fixtures of the untrusted-surface fuzzing: a small bank over the shared synthetic catalog, its task set."""

from __future__ import annotations

from pathlib import Path

import pytest

from shoparena.records.problem import Intent
from shoparena.suites.options import SynthOptions
from shoparena.suites.synth import synthesize_bank


@pytest.fixture(scope="session")
def fuzz_bank(synth, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("fuzz_bank") / "bank.json"
    options = SynthOptions(n=3, seed=9, intents=(Intent.PRODUCT, Intent.SHOP))
    synthesize_bank(synth.index.index_dir, out, options)
    return out


@pytest.fixture(scope="session")
def tasks_for_fuzz(fuzz_bank, synth):
    from shoparena.integrations.tasks import ShopTaskSet

    return ShopTaskSet.load(fuzz_bank, synth.index.index_dir, max_steps=4)
