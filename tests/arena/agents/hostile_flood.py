"""Floods stdout and stderr, then returns normally."""

import sys


def agent_main(problem: dict) -> list:
    chunk = "x" * 65536
    for _ in range(int(problem.get("chunks", 160))):
        sys.stdout.write(chunk)
        sys.stderr.write(chunk)
    return [{"completion": {"content": "<response>flooded</response>"}, "extra_info": {}}]
