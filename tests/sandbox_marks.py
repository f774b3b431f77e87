"""``needs_bwrap``: skip a test where the bubblewrap sandbox is unusable (arena and corpus tests use it).

A module of its own, imported only by the tests that need it: deciding the mark starts a sandbox probe.
"""

from __future__ import annotations

import shutil

import pytest


def bwrap_usable() -> bool:
    from shoparena.arena.sandbox import Sandbox, SandboxConfig

    if shutil.which("bwrap") is None:
        return False
    return Sandbox(SandboxConfig(timeout_s=10)).report.backend == "bwrap"


needs_bwrap = pytest.mark.skipif(not bwrap_usable(), reason="bubblewrap sandbox unavailable on this machine")
