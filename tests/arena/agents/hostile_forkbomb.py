"""Forks until the kernel refuses; children sleep so they keep counting."""

import os
import time


def agent_main(problem: dict) -> list:
    forked = 0
    error = ""
    try:
        for _ in range(5000):
            if os.fork() == 0:
                time.sleep(30)
                os._exit(0)
            forked += 1
    except OSError as err:
        error = type(err).__name__
    return [{"forked": forked, "error": error}]
