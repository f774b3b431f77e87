"""``shoparena arena firehose``: what a subnet day looks like, as ordinary arena run directories.

Per race r (``OUT/race-NNN/``, an ``arena run`` directory): the public suite rotates over the given
problem-bank partitions (race r uses partition r mod P and draws ``problems_per_race`` problems with
seed ``seed + r``); a population of miner versions runs in the sandbox; the rubric judge scores every SUCCESS
trajectory (``judge_run``); qualifiers, the race ranking and ORO weights are computed on the judged scores
(``race.json``, ``weights.json``). Each agent folder gets ``miner.json`` with the harness truth (miner kind,
teacher), which the corpus records copy but its filter never reads.

Population (default, per race; docs/corpus.md): 3 agentic miners on teachers of different quality, 2
sub-task miners, 1 shortcut, 1 forger (replays its first nonce), 2 faulty (crash, malformed): 33 % agentic,
22 % sub-task, 11 % no-LLM, 11 % forged, 22 % faulty. Teachers are the rule-based planner behind the chat
protocol with seeded error rates (a wrong final pick) and different search strategies (planner options),
selected by the model name each miner file sends.

Executors (``executor``): ``process`` runs the races in this process, or ``parallel_races`` at once in as
many processes; ``ray`` submits one Ray task per unfinished race (each reserving ``workers`` CPUs), so races
spread over a cluster's nodes. The unit is the race, not the problem, because a race is one arena run: one
proxy (trusted call logs, nonce state, rate buckets) and one sandbox serve all its agents' problems, and
judging, the race ranking and the weights need every agent's envelopes of that race. Within a race the
problems run on ``workers`` parallel sandboxes. Unset, ``workers`` and ``parallel_races`` come from the
machine (:func:`machine_defaults`: one race process per usable CPU, four sandboxes each, within the
available memory). Either way the race directory is written the same way by the same code (docs/scale.md),
so a run started on one executor resumes on the other: ``race.json`` marks a finished race, and an
interrupted race resumes per agent from its ``output.jsonl``.
"""

from __future__ import annotations

import hashlib
import json
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from shoparena.arena.config import SANDBOX_MEMORY_BYTES
from shoparena.arena.layout import FIREHOSE_CONFIG_NAME, ArenaRun
from shoparena.arena.miners import miner_path
from shoparena.env.knowledge import knowledge_path_for, place_pages
from shoparena.runs.identity import Restart, RunIdentity, RunKind, claim_run_dir
from shoparena.runs.infra import pending_infra, read_infra, stop_if_all_infra
from shoparena.runs.machine import MIB, available_memory, default_workers, usable_cpus

TEACHER_PREFIX = "teacher/"


class Teacher(BaseModel):
    """A teacher policy: the planner with options and a seeded rate of wrong final picks."""

    model_config = ConfigDict(extra="forbid")

    error_rate: float = Field(default=0.0, ge=0.0, le=1.0)
    planner_options: dict[str, Any] = Field(default_factory=dict)


#: One search per item with the item's own words, weighing only the top five results, no inspection round:
#: short trajectories a small student can imitate (docs/training.md, "decisive teachers").
DECISIVE_OPTIONS: dict[str, Any] = {
    "view_per_item": 0,
    "max_shops": 1,
    "extra_rounds": 0,
    "search_forms": 1,
    "top_k": 5,
    "verbatim": True,
}
#: The decisive teacher with baskets built item by item (``teacher/regular``, below).
REGULAR_OPTIONS: dict[str, Any] = {
    **DECISIVE_OPTIONS,
    "max_shops": 2,
    "shop_anchor": True,
    "one_search_per_step": True,
    # A web request's catalogue search is the page's brand and the request (``W1 U1`` in the compact
    # profile): copies, where the parsed product name is not (docs/training.md, "web requests").
    "web_brand_request": True,
}

DEFAULT_TEACHERS: dict[str, Teacher] = {
    "careful": Teacher(error_rate=0.0),
    "quick": Teacher(error_rate=0.1, planner_options={"view_per_item": 3, "max_shops": 2}),
    "sloppy": Teacher(
        error_rate=0.35, planner_options={"view_per_item": 2, "max_shops": 1, "extra_rounds": 0}
    ),
    "decisive": Teacher(error_rate=0.0, planner_options=DECISIVE_OPTIONS),
    # The decisive teacher with baskets built item by item: one search per step, and a same-shop basket
    # searches its first item, then the others inside the shop of that item's pick (the shop handle stands
    # on the pick's result line), so every action is read off the page; fewer baskets succeed (0.76 vs 0.93
    # strict on the quickstart training pool) but a 2-layer student can imitate each step (docs/fidelity.md).
    "regular": Teacher(error_rate=0.0, planner_options=REGULAR_OPTIONS),
    # The regular teacher restating its basket at every further search (``recommend_product`` with the
    # picks so far, after the next search): the final basket is the previous one plus one id.
    "running": Teacher(error_rate=0.0, planner_options={**REGULAR_OPTIONS, "running_basket": True}),
    # The regular teacher keeping a to-do list: each search step's think lists the items still to search
    # (the compact profile shows it as ``items: U3,U4``).
    "planned": Teacher(error_rate=0.0, planner_options={**REGULAR_OPTIONS, "plan_items": True}),
}

#: (miner name, kind, teacher) per version in a race; kind is the harness truth.
DEFAULT_POPULATION: list[tuple[str, str, str]] = [
    ("agentic-careful", "agentic", "careful"),
    ("agentic-quick", "agentic", "quick"),
    ("agentic-sloppy", "agentic", "sloppy"),
    ("subtask-careful", "subtask", "careful"),
    ("subtask-sloppy", "subtask", "sloppy"),
    ("shortcut", "shortcut", ""),
    ("forger", "forger", "careful"),
    ("crash", "faulty", ""),
    ("malformed", "faulty", ""),
]


class FirehoseConfig(BaseModel):
    """Everything ``arena firehose`` needs (written to ``OUT/firehose.json``)."""

    model_config = ConfigDict(extra="forbid")

    suites: list[Path] = Field(min_length=1, description="Problem-bank partitions, rotated per race.")
    index: Path = Field(description="Search index directory.")
    out: Path = Field(description="Output folder (one arena run directory per race; resumable).")
    races: int = Field(default=1, ge=1, description="Number of races.")
    problems_per_race: int = Field(default=20, ge=1, description="Problems of the bank drawn per race.")
    seed: int = Field(
        default=0, description="Seed of the problem draws (race r draws with seed + r) and of the teachers."
    )
    workers: int | None = Field(
        default=None,
        ge=1,
        description="Sandboxes at once within a race (default: from the machine, 4 within memory).",
    )
    parallel_races: int | None = Field(
        default=None,
        ge=1,
        description="Races at once with the process executor, each in its own process (own proxy, own GIL; "
        "default: from the machine, one per usable CPU within memory; docs/scale.md).",
    )
    timeout_s: float = Field(default=30.0, gt=0, description="Per-problem timeout (s).")
    teachers: dict[str, Teacher] = Field(default_factory=lambda: dict(DEFAULT_TEACHERS))
    population: list[tuple[str, str, str]] = Field(default_factory=lambda: list(DEFAULT_POPULATION))
    executor: Literal["process", "ray"] = Field(
        default="process",
        description="Where races run: process (here, one after another) | ray (one Ray task per race).",
    )
    ray_address: str | None = Field(
        default=None, description="Running Ray cluster (default: RAY_ADDRESS, else a local ray.init)."
    )


#: Resident memory a race process needs beside its sandboxes (proxy, judge, teachers, index handle, the
#: knowledge base of web problems); docs/scale.md.
RACE_MEMORY_BYTES = 768 * MIB
#: Sandboxes per race by default: they mostly wait on their race's proxy, so four overlap the waits of one
#: race process that keeps about one core busy (docs/benchmarks.md, firehose).
SANDBOXES_PER_RACE = 4


def machine_defaults(config: FirehoseConfig, *, cpus: int | None = None, memory_bytes: int | None = None
                     ) -> FirehoseConfig:  # fmt: skip
    """``config`` with unset ``workers`` and ``parallel_races`` taken from the machine: one race process
    per usable CPU with :data:`SANDBOXES_PER_RACE` sandboxes each, as many as the available memory holds
    (:func:`shoparena.runs.machine.default_workers`); set fields are kept. Neither changes a race's
    outcomes (``tests/arena/test_firehose_defaults.py``), so neither is part of the firehose's identity."""
    if config.workers is not None and config.parallel_races is not None:
        return config
    memory = memory_bytes if memory_bytes is not None else available_memory()
    workers = config.workers
    if workers is None:
        fits = None if memory is None else (memory - RACE_MEMORY_BYTES) // SANDBOX_MEMORY_BYTES
        workers = max(1, min(SANDBOXES_PER_RACE, SANDBOXES_PER_RACE if fits is None else fits))
    races = config.parallel_races
    if races is None:
        races = default_workers(
            RACE_MEMORY_BYTES + workers * SANDBOX_MEMORY_BYTES, cpus=cpus, memory_bytes=memory
        )
    return config.model_copy(update={"workers": workers, "parallel_races": races})


class TeacherPool:
    """A chat backend that serves each request with the teacher named by its model (``teacher/<name>``)."""

    def __init__(self, teachers: dict[str, Teacher], seed: int = 0) -> None:
        from shoparena.llm.planner_backend import PlannerBackend

        self.teachers = teachers
        self.seed = seed
        self.backends = {n: PlannerBackend(**t.planner_options) for n, t in teachers.items()}
        self.default = next(iter(self.backends))

    def complete(self, request: Any) -> Any:
        name = str(request.model or "")
        name = name[len(TEACHER_PREFIX) :] if name.startswith(TEACHER_PREFIX) else self.default
        backend = self.backends.get(name) or self.backends[self.default]
        response = backend.complete(request)
        teacher = self.teachers.get(name)
        if teacher is None or teacher.error_rate <= 0:
            return response
        first_user = next((m.get("content") for m in request.messages if m.get("role") == "user"), "")
        digest = hashlib.sha256(f"{self.seed}:{name}:{first_user}".encode()).digest()
        if int.from_bytes(digest[:4], "big") / 2**32 >= teacher.error_rate:
            return response
        calls = []
        for call in response.tool_calls:
            if call["function"]["name"] == "recommend_product":
                call = json.loads(json.dumps(call))
                args = json.loads(call["function"]["arguments"] or "{}")
                ids = str(args.get("product_ids") or "").split(",")
                args["product_ids"] = ",".join(reversed(ids)) if len(ids) > 1 else f"{ids[0]}0"
                call["function"]["arguments"] = json.dumps(args)
            calls.append(call)
        return response.model_copy(update={"tool_calls": calls})


def _miner_source(kind: str, teacher: str) -> str:
    base = {"agentic": "agentic", "forger": "agentic", "subtask": "subtask"}.get(kind)
    if base is None:
        return ""
    text = miner_path(base).read_text(encoding="utf-8")
    model_line = 'MODEL = os.environ.get("SANDBOX_MODEL") or "deepseek-ai/DeepSeek-V3.2-TEE"'
    text = text.replace(model_line, f'MODEL = "{TEACHER_PREFIX}{teacher}"')
    if kind == "forger":
        text = text.replace("nonces.get(call_id), call_id)", "_replay(nonces.get(call_id)), call_id)")
        text += (
            "\n\n_FIRST = []\n\n\ndef _replay(nonce):\n"
            "    # Forger: reuse the first nonce for later dispatches (replayed / mismatch at the proxy).\n"
            "    if nonce and not _FIRST:\n        _FIRST.append(nonce)\n"
            "    return _FIRST[0] if _FIRST else nonce\n"
        )
    return text


def write_miners(config: FirehoseConfig) -> dict[str, Path]:
    """The population's miner files under ``OUT/miners`` (name → path)."""
    folder = config.out / "miners"
    folder.mkdir(parents=True, exist_ok=True)
    files: dict[str, Path] = {}
    for name, kind, teacher in config.population:
        source = _miner_source(kind, teacher)
        path = folder / f"{name}.py"
        if source:
            path.write_text(source, encoding="utf-8")
        else:
            builtin = {"shortcut": "shortcut"}.get(kind, name if name in ("crash", "malformed") else "crash")
            path.write_text(miner_path(builtin).read_text(encoding="utf-8"), encoding="utf-8")
        files[name] = path
    return files


def _race_suite(config: FirehoseConfig, race: int, race_dir: Path) -> Path:
    from shoparena.suites.loaders import load_suite, write_oro_suite

    partition = config.suites[race % len(config.suites)]
    problems, _ = load_suite(partition)
    count = min(config.problems_per_race, len(problems))
    picked = sorted(random.Random(config.seed + race).sample(range(len(problems)), count))
    path = ArenaRun.at(race_dir).race_suite_path
    write_oro_suite([problems[i] for i in picked], path)
    # The race's web problems search the partition's pages (the proxy reads the race suite's sidecar).
    place_pages(knowledge_path_for(partition), path)
    return path


def _race_and_weights(race_dir: Path, race_id: str, report: Any, race: int) -> None:
    from shoparena.arena.race_rules import (
        Qualifier,
        Race,
        RaceConfig,
        RaceStatus,
        resolve_race,
        select_qualifiers,
    )
    from shoparena.arena.weights import WeightConfig, compute_weights, weights_document
    from shoparena.records.race import RaceDocument
    from shoparena.runs.files import write_json_record

    # ORO's validator weights; a firehose race has no incumbent, so its race ranks are ORO's order anyway.
    cfg, wcfg = RaceConfig(), WeightConfig()
    candidates = [
        Qualifier(hotkey=a.agent, agent_version_id=a.agent_version_id, qualifying_score=a.final("judge"))
        for a in report.agents
    ]
    qualifying = select_qualifiers(candidates, cfg, None)
    completed = datetime(2026, 1, 1, tzinfo=UTC) + timedelta(hours=race)
    uid_map = {h: i for i, h in enumerate(sorted(c.hotkey for c in candidates if c.hotkey), start=1)}
    outcome = weights = None
    if qualifying.status is RaceStatus.CANCELLED:
        result = Race(race_id=race_id, status=RaceStatus.CANCELLED, qualifiers=qualifying.rejected)
    else:
        raced = [q.model_copy(update={"race_score": q.qualifying_score}) for q in qualifying.qualifiers]
        result = Race(
            race_id=race_id, status=RaceStatus.RACE_COMPLETE, qualifiers=raced, completed_at=completed
        )
        outcome = resolve_race(result, None, cfg)
        result = result.model_copy(update={"qualifiers": outcome.ranking})
        weights = compute_weights(result, uid_map, config=wcfg)
    doc = RaceDocument(race=result, qualifying=qualifying, outcome=outcome)
    layout = ArenaRun.at(race_dir)
    write_json_record(layout.race_path, doc)
    layout.weights_path.write_bytes(weights_document(result, weights, uid_map, wcfg))


#: Sandbox uids per race block: concurrent races on one node (Ray) use disjoint uids, so ``RLIMIT_NPROC``
#: never counts another race's processes.
_UID_BLOCKS = 64


def run_race(config: FirehoseConfig, race: int, *, search: Any = None, backend: Any = None) -> Path:
    """Run, judge, rank and weight race ``race`` in ``OUT/race-NNN`` (resuming a partial one)."""
    from shoparena.arena.run_directory import ArenaRunConfig, run_arena
    from shoparena.arena.run_judging import judge_run
    from shoparena.arena.sandbox import SandboxConfig
    from shoparena.records.race import MinerTruth
    from shoparena.runs.files import write_json_record

    config = machine_defaults(config)
    assert config.workers is not None  # set by machine_defaults
    race_dir = config.out / f"race-{race:03d}"
    race_dir.mkdir(parents=True, exist_ok=True)
    files = {name: config.out / "miners" / f"{name}.py" for name, _, _ in config.population}
    suite = _race_suite(config, race, race_dir)
    race_id = f"race-{config.seed}-{race:03d}"
    uid_base = SandboxConfig().sandbox_uid_base + (race % _UID_BLOCKS) * config.workers
    summary = run_arena(
        ArenaRunConfig(
            agents=[files[n] for n, _, _ in config.population],
            suite=suite,
            index=config.index,
            out=race_dir,
            workers=config.workers,
            timeout_s=config.timeout_s,
            run_id=race_id,
            sandbox=SandboxConfig(
                grace_s=1, memory_bytes=1024**3, tmp_bytes=16 * 1024**2, sandbox_uid_base=uid_base
            ),
        ),
        backend=backend or TeacherPool(config.teachers, seed=config.seed),
        search=search,
    )
    # A race in which no miner ran (no sandbox, no model server) stops here, not in a later stage.
    pending = [
        f
        for a in summary.agents
        for f in pending_infra(read_infra(ArenaRun.at(race_dir).agent_dir(a.agent)), [])
    ]
    stop_if_all_infra(f"firehose {race_dir.name}", sum(a.problems for a in summary.agents), pending)
    for name, kind, teacher in config.population:
        truth = MinerTruth(
            kind=kind, teacher=teacher, hotkey_hash=hashlib.sha256(f"hotkey:{name}".encode()).hexdigest()[:16]
        )
        write_json_record(ArenaRun.at(race_dir).miner_path(name), truth, indent=0)
    report = judge_run(race_dir)
    _race_and_weights(race_dir, race_id, report, race)
    return race_dir


_SEARCH_CACHE: dict[str, Any] = {}


def _race_task(item: tuple[str, int]) -> str:
    """One race on a (Ray) worker: the config travels as JSON, the index is opened once per worker."""
    from shoparena.search import SearchIndex

    config_json, race = item
    config = FirehoseConfig.model_validate_json(config_json)
    key = str(config.index)
    if key not in _SEARCH_CACHE:
        _SEARCH_CACHE[key] = SearchIndex.open(config.index)
    return str(run_race(config, race, search=_SEARCH_CACHE[key]))


def firehose_identity(config: FirehoseConfig) -> RunIdentity:
    """What the races are a function of: the suites' and index's content and every setting but the race
    count (more races extend a firehose, the first ones stay the same) and where they run."""
    settings = config.model_dump(
        mode="json",
        exclude={"suites", "index", "out", "races", "workers", "parallel_races", "executor", "ray_address"},
    )
    inputs: dict[str, Path | None] = {f"suites.{i}": p for i, p in enumerate(config.suites)}
    # A suite's web pages are part of its content: other pages, other web episodes.
    inputs |= {
        f"knowledge.{i}": knowledge_path_for(p)
        for i, p in enumerate(config.suites)
        if knowledge_path_for(p).is_file()
    }
    inputs["index"] = config.index
    return RunIdentity.of(RunKind.FIREHOSE, settings, inputs)


def run_firehose(
    config: FirehoseConfig, *, search: Any = None, progress: Any = None, restart: Restart = False
) -> list[Path]:
    """Run every race not already complete (``race.json`` present); returns the race directories.

    Args:
        config: The firehose; ``config.executor`` picks where the races run.
        search: A ready search engine for the ``process`` executor (tests); Ray workers open ``config.index``.
        progress: Called with a line of text after each race.
        restart: Start ``config.out`` over (its races and miners are removed first).

    Raises:
        RunDirError: ``config.out`` holds another kind of run or a firehose over other suites, index or
            settings (unless ``restart``), or is, holds or lies in an input; nothing is written.
    """
    # Absolute paths: a Ray worker (another process, maybe another node) must find the same files.
    config = machine_defaults(config).model_copy(
        update={
            "suites": [p.resolve() for p in config.suites],
            "index": config.index.resolve(),
            "out": config.out.resolve(),
        }
    )
    races = [p.name for p in config.out.glob("race-*")] if config.out.is_dir() else []
    claim = claim_run_dir(
        config.out,
        firehose_identity(config),
        own=[FIREHOSE_CONFIG_NAME, "miners", *races],
        input_paths=[*config.suites, config.index],
        restart=restart,
    )
    try:
        return _run_firehose(config, search, progress)
    finally:
        claim.release()


def _run_firehose(config: FirehoseConfig, search: Any, progress: Any) -> list[Path]:
    assert config.workers is not None and config.parallel_races is not None  # set by machine_defaults
    (config.out / FIREHOSE_CONFIG_NAME).write_text(config.model_dump_json(indent=2), encoding="utf-8")
    write_miners(config)
    dirs = [config.out / f"race-{race:03d}" for race in range(config.races)]
    todo = [race for race in range(config.races) if not ArenaRun.at(dirs[race]).finished_race()]
    finished = config.races - len(todo)

    def advance() -> None:
        nonlocal finished
        finished += 1
        if progress is not None:
            progress(f"race {finished}/{config.races} done")

    if config.executor == "ray" and todo:
        from shoparena.arena.executor import RayExecutor

        # A local ray.init gets every CPU; a race reserves ``workers``: cpu_count // workers run at once.
        executor = RayExecutor(usable_cpus(), address=config.ray_address)
        payload = config.model_dump_json()
        for _ in executor.imap(_race_task, [(payload, r) for r in todo], cpus_per_task=config.workers):
            advance()
        return dirs
    if config.parallel_races > 1 and len(todo) > 1:
        from shoparena.arena.executor import ProcessExecutor

        # The proxy, the teachers and the judges of a race share one interpreter lock: a race keeps about
        # one core busy, so a second core needs a second race (docs/benchmarks.md, firehose).
        payload = config.model_dump_json()
        for _ in ProcessExecutor(config.parallel_races).imap(_race_task, [(payload, r) for r in todo]):
            advance()
        return dirs
    if todo and search is None:
        from shoparena.search import SearchIndex

        search = SearchIndex.open(config.index)
    backend = TeacherPool(config.teachers, seed=config.seed)
    for race in todo:
        run_race(config, race, search=search, backend=backend)
        advance()
    return dirs


__all__ = [
    "DEFAULT_POPULATION",
    "DEFAULT_TEACHERS",
    "FirehoseConfig",
    "Teacher",
    "TeacherPool",
    "machine_defaults",
    "run_firehose",
    "run_race",
]
