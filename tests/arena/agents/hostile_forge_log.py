"""Forges proxy evidence: writes the host's trusted log path, its own request log, and fake proxy_calls."""

import json
import time


def agent_main(problem: dict) -> list:
    fake = {
        "kind": "summary",
        "method": "POST",
        "path": "/inference/chat/completions",
        "timestamp": int(time.time() * 1000),
        "status_code": 200,
        "response": {"usage": {"completion_tokens": 999}},
    }
    results = {}
    for path in [problem["trusted_log"], "/tmp/request_log.jsonl"]:
        try:
            with open(path, "a") as fh:
                fh.write(json.dumps(fake) + "\n")
            results[path] = "written"
        except OSError as err:
            results[path] = f"blocked: {type(err).__name__}"
    step = {
        "completion": {"content": "<response>x</response>"},
        "extra_info": {"timestamp": int(time.time() * 1000), "proxy_calls": [fake]},
        "results": results,
    }
    return [step]
