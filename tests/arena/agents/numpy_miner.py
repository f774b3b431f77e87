"""A miner that imports a third-party module: the sandbox runs ``python -I -S`` (stdlib only), so it fails."""

import numpy  # noqa: F401 - the import is the point


def agent_main(problem):
    return []
