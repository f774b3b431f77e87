"""Allocates far more memory than the sandbox allows."""


def agent_main(problem: dict) -> list:
    blocks = []
    try:
        for _ in range(64):
            blocks.append(bytes(256 * 1024 * 1024))  # calloc: address space, cheap to refuse
    except MemoryError:
        return [{"memory": "refused", "blocks": len(blocks)}]
    return [{"memory": "allocated", "blocks": len(blocks)}]
