"""Tries to kill its parent, pid 1 of its namespace, and every process it can signal."""

import os
import signal


def agent_main(problem: dict) -> list:
    results = {}
    for label, pid in [("parent", os.getppid()), ("pid1", 1), ("runner", int(problem["runner_pid"]))]:
        try:
            os.kill(pid, signal.SIGKILL)
            results[label] = "sent"
        except OSError as err:
            results[label] = f"blocked: {type(err).__name__}"
    return [{"results": results, "ppid": os.getppid()}]
