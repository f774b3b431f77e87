"""Tries to write outside its private /tmp (host paths, the system, the sandbox root)."""


def agent_main(problem: dict) -> list:
    results = {}
    for path in [*problem["paths"], "/usr/pwned", "/pwned", "/sandbox/agent.py", "/tmp/allowed.txt"]:
        try:
            with open(path, "w") as fh:
                fh.write("pwned")
            results[path] = "written"
        except OSError as err:
            results[path] = f"blocked: {type(err).__name__}"
    return [{"results": results}]
