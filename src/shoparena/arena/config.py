"""Configuration of an arena run, importable without FastAPI or the sandbox machinery (the CLI reads its
defaults from these fields at start-up)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from shoparena.arena.inference import InferenceLimits
from shoparena.arena.sandbox import SandboxConfig
from shoparena.runs.machine import MIB, default_workers

#: Resident memory of one sandbox (a Python agent process and its harness) for default worker counts.
SANDBOX_MEMORY_BYTES = 128 * MIB
#: Sandboxes per usable CPU by default: an agent mostly waits on the proxy (its model, its tools).
SANDBOXES_PER_CPU = 2


def default_sandboxes() -> int:
    """Parallel sandboxes of an arena run when none is set: two per usable CPU, within memory."""
    return default_workers(SANDBOX_MEMORY_BYTES, per_cpu=SANDBOXES_PER_CPU)


class ProxyConfig(BaseModel):
    """Proxy settings.

    Attributes:
        allowed_models: Inference model allowlist, checked against the served (mapped) model name; None
            accepts any model. A configured list is enforced with 403 + ``allowed_models``.
        served_model: The run's model: every inference request is sent to the backend as this model,
            whatever the agent named (logged as ``model``, the agent's choice as ``requested_model``);
            None passes the agent's model through.
        rate_per_s: Token-bucket refill rate per client (per problem token).
        burst: Token-bucket capacity.
        strict_nonces: Answer 403 to catalogue dispatches whose nonce is not ``valid``.
        require_nonces: With ``strict_nonces``, also reject dispatches without any nonce (``missing``).
        nonce_ttl_s: Nonce lifetime.
        max_body_bytes: Request body cap (413 above).
        inference: Generation limits and the per-call timeout (:mod:`shoparena.arena.inference`).
    """

    model_config = ConfigDict(extra="forbid")

    allowed_models: list[str] | None = None
    served_model: str | None = None
    inference: InferenceLimits = Field(default_factory=InferenceLimits)
    rate_per_s: float = Field(default=30.0, gt=0)
    burst: int = Field(default=50, ge=1)
    strict_nonces: bool = False
    require_nonces: bool = False
    nonce_ttl_s: float = Field(default=60.0, gt=0)
    max_body_bytes: int = Field(default=10 * 1024 * 1024, ge=1)


class ArenaRunConfig(BaseModel):
    """Everything ``arena run`` needs (written resolved to ``config.yaml``)."""

    model_config = ConfigDict(extra="forbid")

    agents: list[Path] = Field(min_length=1)
    suite: Path
    index: Path | None = None
    out: Path
    backend: str | None = Field(default=None, description="LLM backend spec (shoparena.llm.factory).")
    model: str | None = Field(
        default=None,
        description="The run's model: given to agents as SANDBOX_MODEL and served for every inference call, "
        "whatever model the agent names. Default: the backend spec's #model, else the backend's own name.",
    )
    workers: int | None = Field(
        default=None, ge=1, description="Parallel sandboxes (default: two per usable CPU, within memory)."
    )
    timeout_s: float = Field(default=300.0, gt=0, description="Per-problem timeout (s).")
    run_timeout_s: float | None = Field(default=1800.0, gt=0, description="Whole-run limit per agent (s).")
    run_id: str | None = None
    similarity: str = Field(default="lexical", description="Title similarity for scoring (offline default).")
    proxy: ProxyConfig = Field(default_factory=ProxyConfig)
    sandbox: SandboxConfig = Field(default_factory=SandboxConfig)


__all__ = ["SANDBOX_MEMORY_BYTES", "ArenaRunConfig", "ProxyConfig", "default_sandboxes"]
