"""The layout of an ``arena run`` directory (a firehose race is one): the one module that spells its names.

::

    manifest.json  config.yaml  scores.json  incentives.json  race.json  weights.json  race_suite.json
    agents/<agent>/output.jsonl  judge.jsonl  miner.json  infra.jsonl  logs/
    proxy/<agent>/<problem>.jsonl  proxy/_unattributed.jsonl

Writers (``arena.run_directory``, ``arena.agent_runner``, ``arena.firehose``, ``arena.race_stage``,
``arena.run_judging``) take the paths from :class:`ArenaRun`; readers (corpus ingest, judging, the viewer, the
pipeline) open the directory with :func:`shoparena.runs.layout.open_run` and read through the typed accessors.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from shoparena.jsonl import LineWriter, read_jsonl_dicts
from shoparena.records.judge import JudgeVerdict
from shoparena.records.race import ArenaRunFile, MinerTruth, RaceDocument, WeightsDocument
from shoparena.records.unicode import dump_json
from shoparena.runs.envelopes import envelope_log_path
from shoparena.runs.files import iter_records, read_json_record, read_yaml_record
from shoparena.runs.layout import RunHandle, register_run_kind
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


__all__ = [
    "AGENTS_DIR",
    "ArenaRun",
    "open_arena_run",
    "proxy_log_name",
    "race_path",
    "race_suite_path",
    "safe_name",
    "weights_path",
]
