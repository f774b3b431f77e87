"""What a run hands to the corpus: one :class:`Episode` per trajectory it holds, and the
:class:`ScoringInputs` that score them.

An ``arena run`` directory (a firehose race), an ``eval run`` directory and a ``--from`` file of
trajectories each hand out episodes (``arena.episodes``): the parsed trajectory, the proxy's trusted log of
its problem (arena runs only), the judge's verdict and the harness truth of a firehose miner, and where it
was read. The corpus maps an episode to a :class:`~shoparena.records.corpus.CorpusRecord`; it reads no run
directory itself.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from shoparena.records.judge import JudgeVerdict
from shoparena.records.proxy_log import ProxyLogEntry
from shoparena.records.race import MinerTruth
from shoparena.records.trajectory import Trajectory


class ScoringInputs(BaseModel):
    """The suite, index and title similarity that score a run's trajectories (what a reader needs of its
    ``config.yaml``; a run's handle reads them from its own config model)."""

    model_config = ConfigDict(extra="ignore")

    suite: str | None = None
    index: str | None = None
    similarity: Literal["exact", "lexical", "embedding"] = "lexical"


class EpisodeOrigin(BaseModel):
    """Where an episode was read: the file and line, and for a run directory its run, race and agent."""

    model_config = ConfigDict(extra="forbid")

    source_format: str = Field(description="arena_run, or the format a file's line was read as.")
    source_path: str
    source_line: int
    run_id: str = Field(description="The episodes' run: RUN/AGENT (arena), RUN/eval, file-STEM (--from).")
    record: str = Field(description="How an error names the input record (``line 3 (id p1)``, ``agent/p1``).")
    arena_run_id: str | None = Field(default=None, description="The arena run's id (arena runs only).")
    race_id: str | None = Field(default=None, description="The race that ran it (firehose races).")
    agent: str | None = None
    agent_sha256: str | None = Field(default=None, description="The agent file's hash the manifest lists.")
    dataset: str | None = Field(default=None, description="A file line's ``source.dataset``.")


class Episode(BaseModel):
    """One trajectory with the evidence its run keeps about it."""

    model_config = ConfigDict(extra="forbid")

    trajectory: Trajectory
    problem_id: str
    rollout_idx: int = Field(default=0, description="The n-th episode of this problem in its run.")
    origin: EpisodeOrigin
    trusted_log: list[ProxyLogEntry] | None = Field(
        default=None,
        description="The proxy's log of this problem (its summary entries); None outside arena runs, where "
        "the evidence is the agent-written ``extra_info.proxy_calls``.",
    )
    log_problem: str | None = Field(
        default=None, description="Why the trusted log is missing or unreadable (lost evidence)."
    )
    verdict: JudgeVerdict | None = None
    miner: MinerTruth | None = Field(default=None, description="A firehose miner's harness truth.")
    chat_messages: list[Any] | None = Field(
        default=None, description="A chat row's messages as written (the message rule reads them)."
    )


__all__ = ["Episode", "EpisodeOrigin", "ScoringInputs"]
