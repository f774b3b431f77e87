"""The configuration of ``shoparena eval run`` (written resolved to ``RUN/config.yaml``)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from shoparena.formats.profiles import DEFAULT_PROFILE
from shoparena.records.problem import Problem

logger = logging.getLogger(__name__)

#: Fields that may differ when a run directory is resumed (they do not change any episode's outcome).
RESUMABLE_CHANGES = frozenset(
    {
        "concurrency",
        "allow_leak",
        "bootstrap",
        "progress",
        "request_timeout_s",
        "request_retries",
        "retry_backoff_s",
        "threads",
        "max_batch",
        "prefix_cache",
        "executor",
        "ray_address",
    }
)


class EvalConfig(BaseModel):
    """One evaluation: a policy on a suite, ``samples`` episodes per problem, scored under both profiles."""

    model_config = ConfigDict(extra="forbid")

    policy: str = Field(description="hf:DIR, openai:URL#model, planner, or miner:FILE|NAME.")
    suite: Path = Field(description="Suite file (ORO JSON or ShoppingBench JSONL).")
    index: Path = Field(description="Search index directory of the suite's catalog.")
    out: Path = Field(description="Run directory (re-running the same command resumes it).")
    samples: int = Field(default=1, ge=1, description="Episodes per problem (n of pass@k).")
    temperature: float = Field(default=0.0, ge=0.0, description="0 = greedy decoding.")
    top_p: float = Field(default=1.0, gt=0.0, le=1.0, description="Nucleus sampling mass.")
    max_tokens: int = Field(default=512, ge=1, description="New-token cap per model turn.")
    max_steps: int = Field(default=30, ge=1, description="Step cap per episode (upstream 30).")
    seed: int = Field(default=0, description="Base seed (per episode: seed + sample index).")
    format: Literal["native", "tagged"] = Field(default="native", description="Prompt/answer format.")
    thinking: bool = Field(
        default=False, description="Chat-template thinking switch (Qwen3 enable_thinking)."
    )
    render_profile: str | None = Field(
        default=None,
        description="Render profile (upstream | compact); None: the one the hf: policy was trained under "
        "(its render stamp), else upstream.",
    )
    allow_profile_mismatch: bool = Field(
        default=False,
        description="Evaluate under render_profile although the policy was trained under another.",
    )
    concurrency: int = Field(default=4, ge=1, description="Episodes in flight at once.")
    greedy_episode: bool = Field(
        default=True, description="With sampling, also play one greedy episode per problem (greedy ASR)."
    )
    limit: int | None = Field(default=None, ge=1, description="Only the first N problems of the suite.")
    kb: list[Path] = Field(
        default_factory=list, description="Extra web_search pages (JSONL); SUITE.knowledge.jsonl is used too."
    )
    train_corpus: Path | None = Field(default=None, description="Corpus dir: audit the suite for leaks.")
    allow_leak: bool = Field(default=False, description="Report a leaking suite anyway, labelled leaked.")
    similarity: str = Field(default="lexical", description="Title similarity backend for scoring.")
    miner_backend: str | None = Field(
        default=None, description="LLM backend behind the proxy for miner: policies (e.g. planner, hf:DIR)."
    )
    episode_timeout_s: float = Field(default=900.0, gt=0, description="Per-episode limit (TIMED_OUT).")
    request_timeout_s: float = Field(default=600.0, gt=0, description="Per model-call limit.")
    request_retries: int = Field(
        default=3, ge=0, description="openai: retries of a call that failed in transport (5xx, timeout)."
    )
    retry_backoff_s: float = Field(
        default=1.0, ge=0, description="openai: first backoff delay, doubling per retry (capped at 30 s)."
    )
    max_batch: int = Field(default=8, ge=1, description="hf: sequences generated together.")
    engine: Literal["transformers", "ctranslate2", "ctranslate2-int8"] = Field(
        default="transformers",
        description="hf: generation engine: batched transformers (torch), or CTranslate2 float32 (same "
        "greedy tokens) or int8 (quantised; pip install 'shoparena[ct2]').",
    )
    prefix_cache: bool = Field(
        default=True,
        description="hf: keep the shared prefix and each episode's key/value cache between turns, computing "
        "only new prompt tokens (off: every prompt computed whole).",
    )
    executor: Literal["process", "ray"] = Field(
        default="process", description="Episodes in this process, or one Ray task per problem."
    )
    ray_address: str | None = Field(default=None, description="Existing Ray cluster (None: local ray.init).")
    threads: int | None = Field(
        default=None, ge=1, description="hf: torch CPU threads (None: torch's default; 1 on a busy host)."
    )
    bootstrap: int = Field(default=2000, ge=100, description="Bootstrap resamples for intervals.")
    progress: bool = Field(default=True, description="Show a Rich progress bar.")

    @property
    def decoding_mode(self) -> str:
        return "sampled" if self.temperature > 0 else "greedy"

    def episode_plan(self) -> list[tuple[int, str]]:
        """``(sample_idx, decoding)`` of every episode a problem gets.

        Greedy runs play ``samples`` greedy episodes (pass@k over them measures run-to-run noise); sampled
        runs play ``samples`` sampled episodes plus, with ``greedy_episode``, one greedy episode last.
        """
        plan = [(i, self.decoding_mode) for i in range(self.samples)]
        if self.temperature > 0 and self.greedy_episode:
            plan.append((self.samples, "greedy"))
        return plan

    def decoding_record(self) -> dict[str, object]:
        """The decoding settings stated with every number (distillation spec §7)."""
        return {
            "mode": self.decoding_mode,
            "temperature": self.temperature,
            "top_p": self.top_p,
            "max_tokens": self.max_tokens,
            "thinking": self.thinking,
            "seed": self.seed,
            "n": self.samples,
            "greedy_episode": self.temperature > 0 and self.greedy_episode,
            "format": self.format,
            "max_steps": self.max_steps,
            "render_profile": self.render_profile or DEFAULT_PROFILE,
        }




class EvalConfigError(ValueError):
    """The run directory holds a different evaluation (or the config is unusable)."""


def load_problems(config: EvalConfig) -> list[Problem]:
    """The suite's problems (first ``limit``); the loader's quarantine is logged, an empty suite refused."""
    from shoparena.suites.loaders import load_suite

    problems, summary = load_suite(config.suite)
    if getattr(summary, "quarantined", 0):
        logger.warning("%s: %d problem(s) quarantined by the loader", config.suite, summary.quarantined)
    if config.limit is not None:
        problems = problems[: config.limit]
    if not problems:
        raise EvalConfigError(f"suite {config.suite}: no problems to evaluate")
    return problems


__all__ = ["RESUMABLE_CHANGES", "EvalConfig", "EvalConfigError", "load_problems"]
