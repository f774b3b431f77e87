"""Built-in faulty miner ``nonlist``: returns a dict, not a list (envelope FAILED, InvalidReturnType)."""


def agent_main(problem):
    return {"steps": [], "note": "agent_main must return a list"}
