"""Dies from a signal when problem['mode'] is 'segv' (a crashed process, not an answer); else answers."""

import os
import signal


def agent_main(problem: dict):
    if problem.get("mode") == "segv":
        os.kill(os.getpid(), signal.SIGSEGV)
    return [{"completion": {"content": "<response>ok</response>"}}]
