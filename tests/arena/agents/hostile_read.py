"""Tries to read host files named in the problem (the suite with ground truth, another run's output)."""


def agent_main(problem: dict) -> list:
    results = {}
    for path in problem["paths"]:
        try:
            with open(path, "rb") as fh:
                results[path] = f"read {len(fh.read())} bytes"
        except OSError as err:
            results[path] = f"blocked: {type(err).__name__}"
    return [{"results": results}]
