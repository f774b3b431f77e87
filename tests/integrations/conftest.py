"""Fixtures: a small checked bank over the shared synthetic catalog, and its task set."""

from __future__ import annotations

from pathlib import Path

import pytest

from shoparena.integrations.tasks import ShopTaskSet
from shoparena.records.problem import Intent
from shoparena.suites.options import SynthOptions
from shoparena.suites.synth import synthesize_bank


@pytest.fixture(scope="session")
def door_bank(synth, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("door_bank") / "bank.json"
    options = SynthOptions(n=4, seed=4, intents=(Intent.PRODUCT, Intent.SHOP, Intent.VOUCHER))
    synthesize_bank(synth.index.index_dir, out, options)
    return out


@pytest.fixture(scope="session")
def tasks(door_bank, synth) -> ShopTaskSet:
    return ShopTaskSet.load(door_bank, synth.index.index_dir, max_steps=12)
