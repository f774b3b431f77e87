"""In-sandbox bootstrap: run one miner file on one problem and send the result to the runner.

Executed as a script (``python -I -S _harness.py CONFIG_JSON``) inside the sandbox, so it is
**stdlib only** and imports nothing from shoparena. It:

1. applies the in-namespace rlimits (``RLIMIT_NPROC`` when the runner could not use a dedicated host uid);
2. starts a TCP→Unix forwarder on ``127.0.0.1:<ephemeral>`` to the proxy socket mounted in the sandbox and
   points ``SANDBOX_PROXY_URL`` at it (the network namespace has nothing else);
3. imports the agent file under a synthetic module name registered in ``sys.modules`` before execution;
4. calls ``agent_main(problem)`` and writes one JSON document to the result pipe the runner owns.

The pipe carries only what ``agent_main`` could return anyway; status, timing, problem id and inference
counts are decided by the runner, which also writes every envelope itself.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import resource
import socket
import sys
import threading
from typing import Any

MODULE_NAME = "shoparena_miner_agent"


def _pump(src: socket.socket, dst: socket.socket) -> None:
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for sock, how in ((dst, socket.SHUT_WR), (src, socket.SHUT_RD)):
            with contextlib.suppress(OSError):
                sock.shutdown(how)


def _serve(listener: socket.socket, unix_path: str) -> None:
    while True:
        try:
            client, _ = listener.accept()
        except OSError:
            return
        try:
            upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            upstream.connect(unix_path)
        except OSError:
            client.close()
            continue
        for a, b in ((client, upstream), (upstream, client)):
            threading.Thread(target=_pump, args=(a, b), daemon=True).start()


def start_forwarder(unix_path: str) -> int:
    """Listen on 127.0.0.1:0 and relay each connection to ``unix_path``; returns the port."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    threading.Thread(target=_serve, args=(listener, unix_path), daemon=True).start()
    return int(listener.getsockname()[1])


def _error(kind: str, exc: BaseException) -> dict[str, Any]:
    import traceback  # only on failure: keeps the happy path's startup short

    return {
        "kind": kind,
        "error": {"type": type(exc).__name__, "message": str(exc)},
        "traceback": traceback.format_exc()[-4000:],
    }


def run(config: dict[str, Any]) -> dict[str, Any]:
    """Load the agent and run it; returns the result document (never raises except SystemExit)."""
    if config.get("nproc"):
        resource.setrlimit(resource.RLIMIT_NPROC, (int(config["nproc"]), int(config["nproc"])))
    if config.get("proxy_socket"):
        port = start_forwarder(config["proxy_socket"])
        os.environ["SANDBOX_PROXY_URL"] = f"http://127.0.0.1:{port}"
    for path in reversed(config.get("sys_path", [])):
        sys.path.insert(0, path)
    with open(config["problem"], encoding="utf-8") as fh:
        problem = json.load(fh)
    problem.pop("reward", None)  # defence in depth: the runner already strips ground truth
    os.environ["PROBLEM_DATA"] = json.dumps(problem)
    try:
        spec = importlib.util.spec_from_file_location(MODULE_NAME, config["agent"])
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load agent file {config['agent']}")
        module = importlib.util.module_from_spec(spec)
        # Registered before exec so dataclasses with postponed annotations resolve their module.
        sys.modules[MODULE_NAME] = module
        spec.loader.exec_module(module)
        agent_main = getattr(module, "agent_main", None)
        if not callable(agent_main):
            raise AttributeError("agent file defines no callable agent_main")
    except Exception as exc:
        return _error("load_error", exc)
    try:
        value = agent_main(problem)
    except Exception as exc:
        return _error("exception", exc)
    if not isinstance(value, list):
        return {"kind": "invalid_return", "type": type(value).__name__}
    return {"kind": "return", "dialogue": value}


def main() -> None:
    config = json.loads(sys.argv[1])
    result_fd = int(config["result_fd"])
    # The agent's own subprocesses must not inherit the result pipe.
    os.set_inheritable(result_fd, False)
    result = run(config)
    try:
        data = json.dumps(result, default=repr).encode()
    except (TypeError, ValueError) as exc:
        data = json.dumps(_error("unserialisable", exc)).encode()
    with os.fdopen(result_fd, "wb") as out:
        out.write(data)
    sys.stdout.flush()
    sys.stderr.flush()
    # Agent threads (non-daemon) must not keep the sandbox alive once the result is out.
    os._exit(0)


if __name__ == "__main__":
    main()
