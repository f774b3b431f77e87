"""Run an in-process agent over a suite and write ORO ``output.jsonl`` envelopes, resumably.

Each finished problem is appended and fsynced at once (:class:`~shoparena.runs.envelopes.EnvelopeLog`), so
an interrupted run loses at most the episodes in flight; a rerun cuts a torn last line and skips every
``problem_id`` already in the output (every problem exactly once). The run-directory form
adds ``config.yaml``, ``manifest.json`` and ``summary.json`` next to ``output.jsonl``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field

from shoparena.env.environment import DEFAULT_MAX_STEPS, ShopEnv, TerminationReason
from shoparena.env.knowledge import KnowledgeBase, knowledge_path_for
from shoparena.formats.oro import to_oro_envelope
from shoparena.records.catalog import Product
from shoparena.records.problem import Intent, Problem
from shoparena.records.trajectory import Trajectory
from shoparena.runs.envelopes import EnvelopeLog
from shoparena.runs.layout import EnvelopeLogRun
from shoparena.runs.manifest import EpisodesManifest, Versions, load_or_new, new_run_id, write_manifest
from shoparena.search import SearchEngine

logger = logging.getLogger(__name__)


class EpisodeRunSummary(BaseModel):
    """What one :func:`run_episodes` call did."""

    model_config = ConfigDict(extra="forbid")

    run_id: str
    agent: str
    out_path: str
    problems: int = Field(description="Problems in the suite.")
    skipped: int = Field(description="Problems already in the output (resume).")
    written: int = Field(description="Envelopes written by this call.")
    statuses: dict[str, int] = Field(default_factory=dict, description="Envelope status counts (this call).")
    termination: dict[str, int] = Field(default_factory=dict, description="Termination reasons (this call).")
    mean_steps: float = 0.0
    elapsed_s: float = 0.0


def run_episode(
    agent: Any,
    problem: Problem,
    engine: SearchEngine,
    *,
    run_id: str = "",
    max_steps: int = DEFAULT_MAX_STEPS,
    knowledge: KnowledgeBase | None = None,
    tools: Sequence[str] | None = None,
    env: ShopEnv | None = None,
) -> Trajectory:
    """Play one episode of ``agent`` on ``problem``; an agent exception ends it as FAILED (agent_error).

    ``env``: a ShopEnv to reuse (one per worker thread; building one derives every tool schema, ~35 ms),
    in which case ``engine``, ``max_steps``, ``knowledge`` and ``tools`` are the env's own.
    """
    if env is None:
        env = ShopEnv(
            engine,
            tools=tools,
            knowledge=knowledge,
            max_steps=max_steps,
            agent_id=getattr(agent, "name", ""),
            run_id=run_id,
        )
    obs = env.reset(problem)
    try:
        while not obs.done:
            action = agent.act(obs, obs.tools)
            obs = env.step(action).observation
    except Exception as exc:  # the agent crashed: record it, keep the run going
        logger.warning("agent failed on %s: %s", problem.problem_id, exc)
        env.fail(TerminationReason.AGENT_ERROR, f"{type(exc).__name__}: {exc}")
    finally:
        close = getattr(agent, "close", None)
        if callable(close):
            close(obs.episode_id)
    return env.trajectory()


def run_episodes(
    agent: Any,
    problems: Sequence[Problem],
    engine: SearchEngine,
    out_path: str | Path,
    *,
    workers: int = 1,
    run_id: str | None = None,
    progress: bool = True,
    max_steps: int = DEFAULT_MAX_STEPS,
    knowledge: KnowledgeBase | None = None,
    tools: Sequence[str] | None = None,
    on_trajectory: Callable[[Trajectory], None] | None = None,
) -> EpisodeRunSummary:
    """Run ``agent`` on every problem not yet in ``out_path`` and append one ORO envelope per problem.

    Args:
        agent: An :class:`~shoparena.agents.base.Agent` (shared by the worker threads).
        problems: The suite.
        engine: Search backend (shared).
        out_path: ``output.jsonl`` to append to (created when missing).
        workers: Worker threads.
        run_id: Recorded on trajectories; a random one by default.
        progress: Show a Rich progress bar.
        max_steps: Step cap per episode.
        knowledge: Knowledge base for ``web_search`` (web problems); None = catalog-derived, built lazily
            when the suite has web problems.
        tools: Tool names to expose (None = the environment's default per intent).
        on_trajectory: Called with every finished trajectory (e.g. for scoring on the fly).

    Returns:
        Counts of what was skipped and written.
    """
    if workers < 1:
        raise ValueError(f"run_episodes.workers must be >= 1, got {workers}")
    started = time.perf_counter()
    out = Path(out_path)
    log = EnvelopeLog(out)  # cuts a torn last line left by a killed run before anything is appended
    run_id = run_id or new_run_id()
    done = log.done()
    seen: set[str] = set()
    todo = []
    for p in problems:
        if p.problem_id in done or p.problem_id in seen:
            continue
        seen.add(p.problem_id)
        todo.append(p)
    if knowledge is None and any(p.intent is Intent.WEB for p in todo):
        knowledge = suite_knowledge(engine)
    lock = threading.Lock()
    statuses: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    steps: list[int] = []

    def play(problem: Problem) -> Trajectory:
        return run_episode(
            agent, problem, engine, run_id=run_id, max_steps=max_steps, knowledge=knowledge, tools=tools
        )

    bar = None
    if progress and todo:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        bar = Progress(TextColumn("episodes"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
        task = bar.add_task("episodes", total=len(todo))
        bar.start()
    try:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            futures = [pool.submit(play, p) for p in todo]
            for future in as_completed(futures):
                traj = future.result()
                with lock:
                    log.append(to_oro_envelope(traj))
                    statuses[traj.status.value] += 1
                    reasons[str(traj.meta.get("termination_reason"))] += 1
                    steps.append(len(traj.steps))
                if on_trajectory is not None:
                    on_trajectory(traj)
                if bar is not None:
                    bar.advance(task)
    finally:
        if bar is not None:
            bar.stop()
    return EpisodeRunSummary(
        run_id=run_id,
        agent=str(getattr(agent, "name", type(agent).__name__)),
        out_path=str(out),
        problems=len(problems),
        skipped=len(problems) - len(todo),
        written=sum(statuses.values()),
        statuses=dict(statuses),
        termination=dict(reasons),
        mean_steps=round(sum(steps) / len(steps), 3) if steps else 0.0,
        elapsed_s=round(time.perf_counter() - started, 3),
    )


def suite_knowledge(
    engine: SearchEngine, suite_path: str | Path | None = None, extra: Sequence[str | Path] = ()
) -> KnowledgeBase | None:
    """The knowledge base for a suite's web problems: catalog-derived pages, plus the bank's sidecar
    ``<suite>.knowledge.jsonl`` when it exists beside the suite file, plus any ``extra`` JSONL page files.

    Returns None when there are no pages at all. The result is cached per engine and page files (path,
    size, modification time): a firehose asks once per race for the same pages, and building them is a
    BM25 index over every catalogue product (seconds per race otherwise).
    """
    sidecar = knowledge_path_for(suite_path) if suite_path is not None else None
    extras = [Path(path) for path in extra]
    # A sidecar that does not exist adds nothing: every race directory of a firehose has its own path.
    present = [sidecar] if sidecar is not None and sidecar.exists() else []
    key = tuple((str(f), *_file_stamp(f)) for f in [*present, *extras])
    with _KNOWLEDGE_LOCK:
        for cached_engine, cached_key, knowledge in _KNOWLEDGE_CACHE:
            if cached_engine is engine and cached_key == key:
                return knowledge
    knowledge = _build_knowledge(engine, [*present, *extras])
    with _KNOWLEDGE_LOCK:
        _KNOWLEDGE_CACHE.insert(0, (engine, key, knowledge))
        del _KNOWLEDGE_CACHE[_KNOWLEDGE_CACHE_SIZE:]
    return knowledge


#: (engine, page-file stamps, knowledge base), newest first; a few entries, as few engines live at once.
_KNOWLEDGE_CACHE: list[tuple[Any, tuple[tuple[Any, ...], ...], KnowledgeBase | None]] = []
_KNOWLEDGE_CACHE_SIZE = 4
_KNOWLEDGE_LOCK = threading.Lock()


def _file_stamp(path: Path) -> tuple[int, int]:
    try:
        stat = path.stat()
    except OSError:
        return (-1, -1)
    return (stat.st_size, stat.st_mtime_ns)


def _build_knowledge(engine: SearchEngine, page_files: Sequence[Path]) -> KnowledgeBase | None:
    from shoparena.env.knowledge import pages_from_catalog, read_pages

    pages = []
    iter_products = getattr(engine, "iter_products", None)
    if iter_products is not None:
        pages += pages_from_catalog(_bounded(iter_products()))
    for path in page_files:
        pages += read_pages(path)
    return KnowledgeBase(pages) if pages else None


def _bounded(products: Any, limit: int = 200_000) -> list[Product]:
    out: list[Product] = []
    for i, product in enumerate(products):
        if i >= limit:  # keep the offline KB bounded on full-size catalogs
            break
        out.append(product)
    return out


def run_episodes_dir(
    agent: Any,
    problems: Sequence[Problem],
    engine: SearchEngine,
    run_dir: str | Path,
    *,
    config: dict[str, Any],
    suite_hash: str = "",
    workers: int = 1,
    progress: bool = True,
    max_steps: int = DEFAULT_MAX_STEPS,
    knowledge: KnowledgeBase | None = None,
) -> EpisodeRunSummary:
    """The run-directory form of :func:`run_episodes`: ``config.yaml``, ``manifest.json``, ``output.jsonl``,
    ``summary.json``. Rerunning on the same directory resumes (the run id is kept).
    """
    root = Path(run_dir)
    root.mkdir(parents=True, exist_ok=True)
    layout = EnvelopeLogRun.at(root)
    manifest = load_or_new(root, EpisodesManifest, kind="episodes")
    layout.config_path.write_text(yaml.safe_dump(config, sort_keys=False))
    manifest = manifest.model_copy(
        update={
            "agent": str(getattr(agent, "name", type(agent).__name__)),
            "versions": Versions.current(),
            "suite_size": len(problems),
            "suite_hash": suite_hash,
        }
    )
    write_manifest(manifest, root)
    run_id = manifest.run_id
    summary = run_episodes(
        agent,
        problems,
        engine,
        layout.envelope_log,
        workers=workers,
        run_id=run_id,
        progress=progress,
        max_steps=max_steps,
        knowledge=knowledge,
    )
    layout.summary_path.write_text(summary.model_dump_json(indent=2))
    return summary


def suite_hash(problems: Sequence[Problem]) -> str:
    """sha256 over the problems' content hashes, in order."""
    import hashlib

    digest = hashlib.sha256()
    for p in problems:
        digest.update(p.content_hash.encode())
    return digest.hexdigest()


__all__ = [
    "EpisodeRunSummary",
    "run_episode",
    "run_episodes",
    "run_episodes_dir",
    "suite_hash",
    "suite_knowledge",
]
