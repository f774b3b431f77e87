"""Infrastructure failures: an episode the harness could not run, as opposed to one the policy got wrong.

Stored in ``infra.jsonl`` beside the episodes (never as an episode), so a re-run retries it and no score
ever counts it as the policy's 0 (issue 23; tau2's ``INFRA_ERROR``, house style §4).
"""

from __future__ import annotations

from enum import Enum

from pydantic import BaseModel, ConfigDict, Field


class InfraReason(str, Enum):  # noqa: UP042 - serialises as its value
    """Why an episode could not be run."""

    SANDBOX_START = "sandbox_start"  # the sandbox never started the miner (bwrap setup failed)
    MODEL_UNREACHABLE = "model_unreachable"  # every inference call got a backend error (502/503)
    # the model server answered, but not with a completion, after its retries: another 5xx, a timeout, a
    # body that is not a chat completion, a rate limit or rejected credentials (a transport fault, never
    # the policy's output)
    MODEL_FAILED = "model_failed"
    MINER_CRASH = "miner_crash"  # the miner process died from a signal (segfault, OOM kill)
    RUNNER_ERROR = "runner_error"  # the runner itself raised while running the episode


class InfraFailure(BaseModel):
    """One ``infra.jsonl`` line: an attempt that failed for an infrastructure reason."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = 1
    problem_id: str
    sample_idx: int = Field(default=0, description="Rollout index (eval runs); 0 for arena problems.")
    reason: InfraReason
    message: str = Field(default="", description="What failed, one line (stderr tail, exception).")
    execution_time: float = 0.0


__all__ = ["InfraFailure", "InfraReason"]
