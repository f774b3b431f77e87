"""Tries to reach a TCP listener on the host's loopback (outside the sandbox)."""

import socket


def agent_main(problem: dict) -> list:
    outcome = "connected"
    try:
        with socket.create_connection(("127.0.0.1", int(problem["target_port"])), timeout=2) as sock:
            sock.sendall(b"escaped")
    except OSError as err:
        outcome = f"blocked: {type(err).__name__}"
    return [{"outcome": outcome}]
