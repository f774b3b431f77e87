"""Every reader of a proxy log gives the verdicts recorded before the readers shared one module."""

from __future__ import annotations

import json

import pytest
from proxy_log_fixtures import SCENARIOS, VERDICTS, verdicts

EXPECTED = json.loads(VERDICTS.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def actual() -> dict:
    return verdicts()


@pytest.mark.parametrize("name", [*SCENARIOS, "pooled"])
def test_verdicts_on_the_fixture_logs_are_unchanged(actual, name):
    assert actual[name] == EXPECTED[name]
