"""Config layering shared by every run directory's config: the one deep merge (presets < files < overrides).

The training configs (``extends:`` chains, trainer sections) and the pipeline config (preset < YAML file)
both layer with :func:`deep_merge`, so a nested section is overridden key by key the same way everywhere.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any


def deep_merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """``over`` laid on ``base``: mappings on both sides merge key by key, anything else from ``over`` wins.

    The result shares nothing with its inputs (values are deep-copied), so editing it never changes a
    preset or a parent config.

    >>> deep_merge({"a": {"x": 1, "y": 2}, "b": 1}, {"a": {"y": 3}, "b": [4]})
    {'a': {'x': 1, 'y': 3}, 'b': [4]}
    """
    out = copy.deepcopy(dict(base))
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


__all__ = ["deep_merge"]
