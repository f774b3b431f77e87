"""A hang guard for the linear-parsing tests: the old quadratic parsers ran minutes to hours on these inputs,
the linear ones milliseconds. A guard far above either is a hang check, not a speed assertion (speed is
measured in benchmarks/)."""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator

#: Seconds before a parse counts as hung (the linear parsers take well under a second on these inputs).
HANG_S = int(os.environ.get("SHOPARENA_TEST_HANG_S", "60"))


class Hung(AssertionError):
    """The guarded block ran past :data:`HANG_S`."""


@contextlib.contextmanager
def no_hang(seconds: int = HANG_S) -> Iterator[None]:
    """Fail the test (instead of hanging the suite) when the block runs past ``seconds``."""

    def _raise(signum, frame):
        raise Hung(f"ran past {seconds} s: quadratic (or worse) on this input")

    previous = signal.signal(signal.SIGALRM, _raise)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
