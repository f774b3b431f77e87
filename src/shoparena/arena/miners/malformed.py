"""Built-in faulty miner ``malformed``: returns a list whose steps are not ORO step records.

The envelope is SUCCESS (the contract only requires a list), but no step parses: the format score and the
success score are 0 and the judge sees no thinking.
"""


def agent_main(problem):
    return ["not a step", 42, {"completion": "no message here"}, None]
