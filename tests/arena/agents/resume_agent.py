"""Takes a moment per problem so a test can kill the run in the middle."""

import time


def agent_main(problem: dict) -> list:
    time.sleep(0.4)
    return [{"completion": {"content": "<response>ok</response>"}, "extra_info": {}}]
