"""The layout of an ``arena run`` directory (a firehose race is one): the one module that spells its names.

::

    manifest.json  config.yaml  scores.json  incentives.json  race.json  weights.json  race_suite.json
    agents/<agent>/output.jsonl  judge.jsonl  miner.json  infra.jsonl  logs/
    proxy/<agent>/<problem>.jsonl  proxy/_unattributed.jsonl

Writers (``arena.run_directory``, ``arena.agent_runner``, ``arena.firehose``, ``arena.race_stage``,
``arena.run_judging``) take the paths from :class:`ArenaRun`; readers (judging, the viewer, the pipeline) open
the directory with :func:`shoparena.runs.layout.open_run` and read through the typed accessors. The corpus
opens a run directory with :func:`open_episode_run` and reads its episodes
(:class:`~shoparena.records.episode.Episode`) and their :class:`~shoparena.records.episode.ScoringInputs`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from shoparena.arena.episodes import (
    EpisodeItem,
    content_quarantine,
    envelope_log_episodes,
    line_quarantine,
    trusted_log,
)
from shoparena.formats._common import FormatError
from shoparena.formats.io import parse_trajectory_value
from shoparena.jsonl import LineWriter, iter_raw_lines, read_jsonl_dicts
from shoparena.records.corpus import Quarantined
from shoparena.records.episode import Episode, EpisodeOrigin, ScoringInputs
from shoparena.records.judge import JudgeVerdict
from shoparena.records.race import ArenaRunFile, MinerTruth, RaceDocument, WeightsDocument
from shoparena.records.unicode import dump_json
from shoparena.runs.envelopes import envelope_log_path
from shoparena.runs.files import RunFileError, iter_records, read_json_record, read_yaml_record
from shoparena.runs.layout import EnvelopeLogRun, RunHandle, open_run, register_run_kind
from shoparena.runs.manifest import ArenaManifest

AGENTS_DIR = "agents"
PROXY_DIR = "proxy"
LOGS_DIR = "logs"
JUDGE_NAME = "judge.jsonl"
MINER_NAME = "miner.json"
RACE_NAME = "race.json"
WEIGHTS_NAME = "weights.json"
SCORES_NAME = "scores.json"
INCENTIVES_NAME = "incentives.json"
RACE_SUITE_NAME = "race_suite.json"
UNATTRIBUTED_NAME = "_unattributed.jsonl"
#: An agent folder's sandbox log: exit codes, stderr tails, dropped output bytes (``agent_runner``).
SANDBOX_LOG_NAME = "sandbox.jsonl"
#: A race directory's ranked leaderboard (``race_stage``).
LEADERBOARD_NAME = "leaderboard.json"
#: A firehose directory's resolved ``FirehoseConfig``.
FIREHOSE_CONFIG_NAME = "firehose.json"


def safe_name(text: str) -> str:
    """A file-name-safe version of an id or agent name."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", text)[:120] or "_"


def proxy_log_name(problem_id: str) -> str:
    """The trusted proxy log's file name of one problem (in its agent's proxy folder)."""
    return f"{safe_name(problem_id)}.jsonl"


def race_path(directory: str | Path) -> Path:
    """``race.json`` of a race directory (a firehose race, or the race stage's output)."""
    return Path(directory) / RACE_NAME


def weights_path(directory: str | Path) -> Path:
    """``weights.json`` beside a race's ``race.json``."""
    return Path(directory) / WEIGHTS_NAME


def race_suite_path(directory: str | Path) -> Path:
    """The problems a race drew (``race_suite.json``)."""
    return Path(directory) / RACE_SUITE_NAME


@register_run_kind
class ArenaRun(RunHandle):
    """An ``arena run`` directory (``arena run``, a firehose race, the race stage's inputs)."""

    kinds = ("arena",)
    manifest_model = ArenaManifest
    manifest: ArenaManifest | None

    # --- paths ---------------------------------------------------------------------------------------------

    @property
    def agents_dir(self) -> Path:
        return self.path / AGENTS_DIR

    def agent_dir(self, agent: str) -> Path:
        return self.agents_dir / agent

    def output_path(self, agent: str) -> Path:
        """The agent's envelope log."""
        return envelope_log_path(self.agent_dir(agent))

    def logs_dir(self, agent: str) -> Path:
        return self.agent_dir(agent) / LOGS_DIR

    def judge_path(self, agent: str) -> Path:
        return self.agent_dir(agent) / JUDGE_NAME

    def miner_path(self, agent: str) -> Path:
        return self.agent_dir(agent) / MINER_NAME

    @property
    def proxy_root(self) -> Path:
        return self.path / PROXY_DIR

    @property
    def unattributed_log(self) -> Path:
        return self.proxy_root / UNATTRIBUTED_NAME

    def proxy_dir(self, agent: str) -> Path:
        return self.proxy_root / agent

    def proxy_log_path(self, agent: str, problem_id: str) -> Path:
        """The trusted proxy log of one problem of one agent."""
        return self.proxy_dir(agent) / proxy_log_name(problem_id)

    @property
    def race_path(self) -> Path:
        """``race.json``: written when a race finished (firehose, race stage)."""
        return race_path(self.path)

    @property
    def weights_path(self) -> Path:
        return weights_path(self.path)

    @property
    def scores_path(self) -> Path:
        return self.path / SCORES_NAME

    @property
    def incentives_path(self) -> Path:
        return self.path / INCENTIVES_NAME

    @property
    def race_suite_path(self) -> Path:
        return race_suite_path(self.path)

    # --- typed reads ---------------------------------------------------------------------------------------

    def agent_folders(self) -> list[str]:
        """Every agent folder under ``agents/``, sorted (listed in the manifest or not)."""
        if not self.agents_dir.is_dir():
            return []
        return sorted(p.name for p in self.agents_dir.iterdir() if p.is_dir())

    def agents(self) -> list[str]:
        """The agents in race order: the manifest's list, or every folder when there is no manifest."""
        if self.manifest is not None and self.manifest.agents:
            return list(self.manifest.agents)
        return self.agent_folders()

    def has_config(self) -> bool:
        return self.config_path.is_file()

    def config(self) -> ArenaRunFile:
        """What readers need of ``config.yaml`` (suite, index, similarity)."""
        return read_yaml_record(self.config_path, ArenaRunFile)

    def scoring_inputs(self) -> ScoringInputs | None:
        """The suite, index and similarity that score the run's trajectories (None: no ``config.yaml``)."""
        if not self.has_config():
            return None
        config = self.config()
        return ScoringInputs(suite=config.suite, index=config.index, similarity=config.similarity)

    def read_episodes(self, notes: list[str] | None = None) -> Iterator[EpisodeItem]:
        """Every envelope of every agent → one :class:`~shoparena.records.episode.Episode` (with the trusted
        log of its problem, its judge verdict and the agent's harness truth) or one quarantine entry; an agent
        folder the manifest does not list is quarantined line by line. ``notes`` gets what is missing.

        Raises:
            RunFileError: a listed agent without its envelope log, a verdict line that is not a
                ``JudgeVerdict``, a torn ``race.json`` or ``miner.json``.
        """
        race_doc = self.race()  # written by `arena firehose` (and the race stage)
        race = race_doc.race.race_id if race_doc is not None else None
        agents, unlisted = self._listed_agents()
        if not agents and not unlisted and notes is not None:
            notes.append(f"{self.path}: no agents (no agents/ folder): nothing ingested")
        for agent in unlisted:
            yield from self._unlisted(agent)
        for agent in agents:
            yield from self._agent_episodes(agent, race)

    def _listed_agents(self) -> tuple[list[str], list[str]]:
        """(agents the manifest lists, agent folders it does not list). Without a manifest, every folder."""
        folders = self.agent_folders()
        if self.manifest is None:
            return folders, []
        listed = list(self.manifest.agents)
        for agent in listed:
            log = self.output_path(agent)
            if not log.is_file():
                raise RunFileError(f"{self.manifest_path}: agents.{agent}: listed, but {log} does not exist")
        return listed, [a for a in folders if a not in self.manifest.agents]

    def _unlisted(self, agent: str) -> Iterator[Quarantined]:
        source = self.output_path(agent)
        if not source.is_file():
            return
        for line_no, _ in iter_raw_lines(source):
            yield Quarantined(
                source=str(source),
                line=line_no,
                record=f"{agent} line {line_no}",
                field="agent",
                reason=f"agent {agent!r} is not listed in {self.manifest_path}",
            )

    def _agent_episodes(self, agent: str, race: str | None) -> Iterator[EpisodeItem]:
        """Every envelope of one agent with its trusted log, verdict and harness truth, or its quarantine."""
        truth = self.miner_truth(agent)
        verdicts = self.verdicts(agent)
        agent_ref = self.manifest.agents.get(agent) if self.manifest is not None else None
        counts: dict[str, int] = {}
        source = self.output_path(agent)
        if not source.exists():
            return
        for line_no, raw in iter_raw_lines(source):
            try:
                obj = orjson.loads(raw)
            except orjson.JSONDecodeError:
                yield line_quarantine(source, line_no, "", "invalid JSON")
                continue
            pid = obj.get("problem_id") if isinstance(obj, dict) else None
            if not isinstance(pid, str) or not pid:
                yield line_quarantine(source, line_no, "problem_id", "missing or not a string")
                continue
            origin = EpisodeOrigin(
                source_format="arena_run",
                source_path=str(source),
                source_line=line_no,
                run_id=f"{self.run_id}/{agent}",
                record=f"{agent}/{pid}",
                arena_run_id=self.run_id,
                race_id=race,
                agent=agent,
                agent_sha256=agent_ref.sha256 if agent_ref else None,
            )
            try:
                traj = parse_trajectory_value(obj, line_no=line_no)
            except FormatError as exc:
                yield content_quarantine(origin, exc)
                continue
            log, log_problem = trusted_log(self.proxy_log_path(agent, pid))
            idx = counts.get(pid, 0)
            counts[pid] = idx + 1
            yield Episode(
                trajectory=traj,
                problem_id=pid,
                rollout_idx=idx,
                origin=origin,
                trusted_log=log,
                log_problem=log_problem,
                verdict=verdicts.get(pid),
                miner=truth,
            )

    def envelopes(self, agent: str) -> list[dict[str, Any]]:
        """The agent's envelopes as dicts (missing file: none)."""
        return read_jsonl_dicts(self.output_path(agent))

    def verdicts(self, agent: str) -> dict[str, JudgeVerdict]:
        """The agent's judge verdicts by problem id (not judged: empty)."""
        path = self.judge_path(agent)
        if not path.is_file():
            return {}
        return {str(v.problem_id): v for _, v in iter_records(path, JudgeVerdict)}

    def miner_truth(self, agent: str) -> MinerTruth | None:
        """The harness truth of a firehose miner (None outside a firehose)."""
        path = self.miner_path(agent)
        return read_json_record(path, MinerTruth) if path.exists() else None

    def race(self) -> RaceDocument | None:
        """``race.json`` (None: the race has not finished, or this is a plain ``arena run``)."""
        return read_json_record(self.race_path, RaceDocument) if self.race_path.exists() else None

    def weights(self) -> WeightsDocument | None:
        return read_json_record(self.weights_path, WeightsDocument) if self.weights_path.exists() else None

    def finished_race(self) -> bool:
        return self.race_path.exists()

    def write_verdicts(self, agent: str, verdicts: list[JudgeVerdict]) -> Path:
        """Replace the agent's ``judge.jsonl`` with ``verdicts`` (one line each, in the order given)."""
        path = self.judge_path(agent)
        with LineWriter(path) as out:
            for verdict in verdicts:
                out.write(dump_json(verdict))
        return path


def open_arena_run(path: str | Path) -> ArenaRun:
    """An arena run directory with its manifest, or without one when it has none (an older or hand-made
    run: the agents are then its folders).

    Raises:
        ManifestError: a manifest that is torn or of another kind.
    """
    run = ArenaRun.at(path)
    return ArenaRun.open(path) if run.has_manifest() else run


#: A run directory that holds episodes: an arena run, or a run whose trajectories are one envelope log.
EpisodeRun = ArenaRun | EnvelopeLogRun


def open_episode_run(path: str | Path, notes: list[str]) -> EpisodeRun:
    """A run directory that holds episodes, opened once: an arena run (a firehose race; one without a
    manifest is read by its folders, noted in ``notes``) or a run whose trajectories are one envelope log
    (an ``eval run``, as the handle its kind opens as).

    Raises:
        ManifestError: a torn manifest. RunFileError: another kind of run directory.
    """
    run = ArenaRun.at(path)
    if not run.has_manifest():  # torn or foreign: an error below, not a guess from the folder names
        notes.append(f"{run.manifest_path}: missing; run id from the folder name, agents/ listed")
        return run
    handle = open_run(path)
    if handle.kind == "eval" and isinstance(handle, EnvelopeLogRun):
        return handle
    if not isinstance(handle, ArenaRun):
        raise RunFileError(
            f"{handle.manifest_path}: kind: a {handle.kind!r} run directory; corpus build reads "
            "arena runs (firehose races) and eval runs"
        )
    return handle


def run_episodes(run: EpisodeRun, notes: list[str]) -> Iterator[EpisodeItem]:
    """The episodes of a run opened by :func:`open_episode_run`."""
    return run.read_episodes(notes) if isinstance(run, ArenaRun) else envelope_log_episodes(run)


__all__ = [
    "AGENTS_DIR",
    "ArenaRun",
    "EpisodeRun",
    "open_arena_run",
    "open_episode_run",
    "proxy_log_name",
    "race_path",
    "race_suite_path",
    "run_episodes",
    "safe_name",
    "weights_path",
]
