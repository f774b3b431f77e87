"""The layout of an ``eval run`` directory: the one module that spells its names.

::

    identity.json  config.yaml  manifest.json  summary.json
    output.jsonl     one ORO envelope per finished episode (``runs.envelopes``)
    episodes.jsonl   one EpisodeRecord per finished episode, line i describing envelope i
    leak/            the leak audit against the training corpus
    proxy/           the trusted proxy logs of a ``miner:`` policy (``arena.layout``'s name)

``eval.run`` writes it through :class:`EvalRun`'s paths; readers (``eval compare``, the viewer, the report)
open it with :func:`shoparena.runs.layout.open_run` and read the typed records.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import Field

from shoparena.arena.episodes import EpisodeItem, envelope_log_episodes
from shoparena.arena.layout import PROXY_DIR
from shoparena.eval.config import EvalConfig, EvalConfigError
from shoparena.records.episode import ScoringInputs
from shoparena.records.eval import EpisodeRecord, EvalSummary, SuiteIdentity
from shoparena.runs.envelopes import ENVELOPE_LOG_NAME
from shoparena.runs.files import RunFileError, iter_records, read_json_record, read_yaml_record
from shoparena.runs.layout import EnvelopeLogRun, register_run_kind
from shoparena.runs.manifest import RunManifest

EPISODES_NAME = "episodes.jsonl"
LEAK_DIR = "leak"
#: The leak folder's cluster audit of the suite against the training corpus (``eval.leak``).
AUDIT_NAME = "audit.json"


class EvalManifest(RunManifest):
    """``manifest.json`` of an ``eval run`` directory."""

    kind: str = "eval"
    policy: dict[str, Any] = Field(default_factory=dict)
    suite: SuiteIdentity | None = None
    label: str = Field(default="unchecked", description="held_out, leaked or unchecked.")
    decoding: dict[str, Any] = Field(default_factory=dict)
    episodes_expected: int = 0
    episodes_finished: int = 0


@register_run_kind
class EvalRun(EnvelopeLogRun):
    """An ``eval run`` directory."""

    kinds = ("eval",)
    manifest_model = EvalManifest
    manifest: EvalManifest | None

    #: What an eval run writes at the top of its directory (``restart`` clears these and nothing else).
    OWN_OUTPUTS = (ENVELOPE_LOG_NAME, EPISODES_NAME, LEAK_DIR)

    @property
    def episodes_path(self) -> Path:
        return self.path / EPISODES_NAME

    @property
    def leak_dir(self) -> Path:
        return self.path / LEAK_DIR

    @property
    def proxy_dir(self) -> Path:
        """Where a ``miner:`` policy's trusted proxy logs go."""
        return self.path / PROXY_DIR

    def config(self) -> EvalConfig:
        return read_yaml_record(self.config_path, EvalConfig)

    def scoring_inputs(self) -> ScoringInputs | None:
        """The suite, index and similarity the run scored under, from its :class:`EvalConfig`."""
        if not self.config_path.is_file():
            return None
        config = self.config()
        return ScoringInputs(suite=str(config.suite), index=str(config.index), similarity=config.similarity)

    def read_episodes(self) -> Iterator[EpisodeItem]:
        """The run's envelopes as :class:`~shoparena.records.episode.Episode` records (or quarantine
        entries): what ``corpus build`` reads of an eval run."""
        return envelope_log_episodes(self)

    def summary(self) -> EvalSummary:
        """``summary.json`` as its record.

        Raises:
            EvalConfigError: no summary (not a finished eval run directory).
        """
        if not self.summary_path.is_file():
            raise EvalConfigError(
                f"{self.path}: no {self.summary_path.name} (not a finished eval run directory)"
            )
        return read_json_record(self.summary_path, EvalSummary)

    def episodes(self) -> list[EpisodeRecord]:
        """The per-episode records; a (problem, sample) that repeats is an error naming both lines."""
        path = self.need(self.episodes_path, "the run's per-episode outcomes; its score would be 0")
        records: list[EpisodeRecord] = []
        seen: dict[tuple[str, int], int] = {}
        for line_no, record in iter_records(path, EpisodeRecord):
            key = (record.problem_id, record.sample_idx)
            if key in seen:
                raise RunFileError(
                    f"{path}:{line_no}: problem_id: episode {key[0]} sample {key[1]} repeats line {seen[key]}"
                )
            seen[key] = line_no
            records.append(record)
        return records

    def read(self) -> tuple[EvalSummary, list[EpisodeRecord], EvalConfig]:
        """``(summary, episode records, config)`` of a finished run; reads only, never repairs."""
        summary, config = self.summary(), self.config()
        return summary, self.episodes(), config


__all__ = ["EPISODES_NAME", "LEAK_DIR", "EvalManifest", "EvalRun"]
