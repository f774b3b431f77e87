"""Built-in faulty miner ``hang``: never returns (envelope TIMED_OUT, error type TimeoutError)."""

import time


def agent_main(problem):
    while True:
        time.sleep(3600)
