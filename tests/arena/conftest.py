"""Fixtures for the arena tests (helpers live in arena_helpers.py)."""

from arena_helpers import make_proxy, sandbox

__all__ = ["make_proxy", "sandbox"]
