"""Shared bits of the local-model tests (a uniquely named module: several test folders have a conftest)."""

from __future__ import annotations

import importlib.util

_NEEDED = ("torch", "transformers", "tokenizers")
MISSING = [name for name in _NEEDED if importlib.util.find_spec(name) is None]
SKIP_REASON = (
    f"{', '.join(MISSING)} not installed: local-model tests need the train extra "
    "(pip install 'shoparena[train]')"
)

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "find_product",
            "description": "Search the catalog.",
            "parameters": {
                "type": "object",
                "properties": {"q": {"type": "string"}, "page": {"type": "integer"}},
                "required": ["q", "page"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "terminate",
            "description": "End the episode.",
            "parameters": {"type": "object", "properties": {"status": {"type": "string"}}},
        },
    },
]
