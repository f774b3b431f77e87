"""Ignores SIGTERM and spins the CPU forever (must be SIGKILLed after the grace period)."""

import signal

signal.signal(signal.SIGTERM, signal.SIG_IGN)


def agent_main(problem: dict) -> list:
    x = 0
    while True:
        x += 1
