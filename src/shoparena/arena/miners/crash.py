"""Built-in faulty miner ``crash``: ``agent_main`` raises (envelope FAILED, error type MinerCrash)."""


class MinerCrash(RuntimeError):
    """Raised on purpose so the envelope's error type is recognisable."""


def agent_main(problem):
    raise MinerCrash(f"built-in crash miner fails on purpose ({problem.get('problem_id')})")
