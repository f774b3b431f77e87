"""Stop an eval run after N episodes, as a kill would, for the resume tests."""

from __future__ import annotations

import pytest

from shoparena.eval.run import run_eval


class Killed(Exception):
    pass


def run_until_killed(config, after: int) -> None:
    """Run ``config`` and raise out of it once ``after`` episodes have been recorded."""
    seen = []

    def kill(record) -> None:
        seen.append(record)
        if len(seen) == after:
            raise Killed

    with pytest.raises(Killed):
        run_eval(config, on_episode=kill)
