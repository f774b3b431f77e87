"""deep_merge: the one config layering (train extends/trainer sections, pipeline preset < file)."""

from __future__ import annotations

import doctest

import shoparena.runs.config as config_module
from shoparena.runs.config import deep_merge


def test_nested_mappings_merge_key_by_key_and_other_values_replace():
    base = {"sft": {"trainer": {"lr": 1e-5, "epochs": 1}, "view": "sft"}, "seeds": [1, 2], "k": 1}
    over = {"sft": {"trainer": {"lr": 2e-5}}, "seeds": [3], "k": {"now": "a mapping"}}
    assert deep_merge(base, over) == {
        "sft": {"trainer": {"lr": 2e-5, "epochs": 1}, "view": "sft"}, "seeds": [3], "k": {"now": "a mapping"},
    }
    assert doctest.testmod(config_module).failed == 0


def test_the_result_shares_nothing_with_a_preset():
    preset = {"corpus": {"gates": {"tau": 0.5}}, "eval": {"k": [1]}}
    merged = deep_merge(preset, {"eval": {"n": 2}})
    merged["corpus"]["gates"]["tau"] = 0.9  # a section the override did not touch
    merged["eval"]["k"].append(2)
    assert preset == {"corpus": {"gates": {"tau": 0.5}}, "eval": {"k": [1]}}
