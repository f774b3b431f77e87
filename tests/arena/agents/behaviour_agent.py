"""Chooses a behaviour from problem['mode'] to exercise every envelope outcome."""

import os
import sys
import time


def agent_main(problem: dict):
    mode = problem.get("mode", "ok")
    if mode == "raise":
        raise KeyError("boom")
    if mode == "dict":
        return {"not": "a list"}
    if mode == "exit":
        sys.stdout.flush()
        os._exit(3)
    if mode == "sleep":
        time.sleep(60)
    if mode == "env":
        keep = (
            "SANDBOX_PROXY_URL",
            "CHUTES_ACCESS_TOKEN",
            "PROBLEM_DATA",
            "INFERENCE_STATS_FILE",
            "REQUEST_LOG_FILE",
            "SANDBOX_OUTPUT_FILE",
        )
        return [
            {
                "env": {k: os.environ.get(k) for k in keep},
                "uid": os.getuid(),
                "cwd": os.getcwd(),
                "root": sorted(os.listdir("/")),
                "module": __name__,
                "problem": problem,
            }
        ]
    return [{"completion": {"content": "<response>ok</response>"}, "extra_info": {"proxy_calls": ["forged"]}}]
