"""``shoparena arena run``: several agents on one suite in one resumable run directory.

Layout of ``RUNDIR``::

    config.yaml                      resolved configuration
    manifest.json                    versions, suite hash, agent hashes, isolation mechanisms + warnings
    agents/<name>/output.jsonl       ORO envelopes, appended as problems complete
    agents/<name>/sandbox.jsonl      exit codes, stderr tails, dropped output bytes
    agents/<name>/logs/              capped stdout/stderr per problem
    proxy/<name>/<problem>.jsonl     the proxy's trusted call log
    scores.json                      both scoring profiles (when a search index is given)
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field

from shoparena.arena.agent_runner import AgentRunner, ArenaProblem
from shoparena.arena.config import ArenaRunConfig, default_sandboxes
from shoparena.arena.layout import ArenaRun, safe_name
from shoparena.arena.proxy import ProxyServer, ProxyState, create_proxy_app
from shoparena.arena.sandbox import Sandbox
from shoparena.formats._common import FormatError
from shoparena.formats.oro import from_oro_envelope
from shoparena.records.problem import Problem
from shoparena.records.trajectory import Trajectory
from shoparena.runs.infra import infra_counts, pending_infra, read_infra
from shoparena.runs.manifest import (
    ArenaAgentRef,
    ArenaManifest,
    ArenaProxyInfo,
    FileRef,
    load_or_new,
    write_manifest,
)
from shoparena.scoring.bench import ScoringBench
from shoparena.scoring.lookup import ProductLookup
from shoparena.suites.loaders import load_suite

logger = logging.getLogger(__name__)


class AgentSummary(BaseModel):
    model_config = ConfigDict(extra="forbid")

    agent: str
    problems: int
    success: int
    failed: int
    timed_out: int
    no_model_reply: int = Field(
        default=0, description="Problems that made inference calls of which none got a model reply."
    )
    inference_total: int = 0
    inference_failed: int = 0
    infra_failed: int = Field(
        default=0,
        description="Problems not run for an infrastructure reason (infra.jsonl); retried on re-run.",
    )
    infra: dict[str, int] = Field(default_factory=dict, description="infra_failed by reason.")
    failures: dict[str, int] = Field(
        default_factory=dict,
        description="FAILED and TIMED_OUT problems by their envelope's error (`type: message`), "
        "commonest first.",
    )
    scores: dict[str, dict[str, Any]] = Field(default_factory=dict)


class ArenaRunSummary(BaseModel):
    model_config = ConfigDict(extra="forbid")

    run_dir: str
    run_id: str
    model: str | None = None
    agents: list[AgentSummary]
    isolation_warnings: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)


def load_problems(suite: Path) -> tuple[list[ArenaProblem], list[Problem], list[str]]:
    """(public problems, loader Problems for scoring, notes)."""
    notes: list[str] = []
    problems, summary = load_suite(suite)
    if summary.quarantined:
        notes.append(f"suite loader quarantined {summary.quarantined} problem(s)")
    return [ArenaProblem(p.problem_id, p.public_view()) for p in problems], problems, notes


def failure_reasons(envelopes: list[dict[str, Any]]) -> dict[str, int]:
    """FAILED / TIMED_OUT envelopes counted by their error (``type: message``), commonest first: why a miner
    failed, as ``arena run`` shows it (the whole record stays in ``output.jsonl``)."""
    reasons: Counter[str] = Counter()
    for envelope in envelopes:
        if envelope.get("status") not in ("FAILED", "TIMED_OUT"):
            continue
        error = envelope.get("error") if isinstance(envelope.get("error"), dict) else {}
        kind, message = str(error.get("type") or "unknown"), str(error.get("message") or "").strip()
        reasons[f"{kind}: {message}" if message else kind] += 1
    return dict(reasons.most_common())


def _agent_names(agents: list[Path]) -> list[str]:
    names: list[str] = []
    for path in agents:
        base = safe_name(path.stem)
        name, n = base, 2
        while name in names:
            name, n = f"{base}-{n}", n + 1
        names.append(name)
    return names


def _score(
    problems: list[Problem], envelopes: list[dict[str, Any]], lookup: ProductLookup | None, similarity: str
) -> tuple[dict[str, dict[str, Any]], str | None]:
    if lookup is None:
        return {}, "scoring skipped: needs a search index"

    def read(env: dict[str, Any]) -> Any:
        try:
            return from_oro_envelope(env)
        except FormatError as err:
            # Malformed agent steps cost that problem (no recommendation), never the whole run's scoring.
            return Trajectory(problem_id=env.get("problem_id"), meta={"format_error": str(err)})

    trajectories = [read(env) for env in envelopes]
    bench = ScoringBench(problems, lookup, similarity)
    scores: dict[str, dict[str, Any]] = {}
    for scoring_profile in ("shoppingbench", "strict"):
        agg = bench.score_run(trajectories, scoring_profile, problems).aggregate
        scores[scoring_profile] = (
            agg.model_dump(mode="json") if hasattr(agg, "model_dump") else dict(vars(agg))
        )
    return scores, None


def run_model(config: ArenaRunConfig, backend: Any) -> str | None:
    """The run's model: ``config.model``, else the spec's ``#model``, else the backend's name (or None)."""
    if config.model:
        return config.model
    if config.backend:
        from shoparena.llm.factory import spec_model_name

        return spec_model_name(config.backend)
    return getattr(backend, "model_name", None)


def prepare_backend(backend: Any) -> None:
    """Load the backend's model once, before the proxy accepts calls (a failure stops the run here).

    Raises:
        RuntimeError: The model could not be loaded (the message names the backend and the cause).
    """
    load = getattr(backend, "load", None)
    if load is None:
        return
    try:
        load()
    except Exception as err:
        raise RuntimeError(f"backend {backend!r} failed to load its model: {err}") from err


def _agent_summary(
    layout: ArenaRun, name: str, problems: list[Problem], search: ProductLookup | None, similarity: str
) -> tuple[AgentSummary, str | None]:
    """One agent's counts and scores from its envelopes (problems not run for an infrastructure reason
    are left out of its scores), with a note when scoring was skipped."""
    envelopes = layout.envelopes(name)
    statuses = [e.get("status") for e in envelopes]
    no_reply = sum(
        bool(e.get("inference_total")) and e.get("inference_failure_count") == e.get("inference_total")
        for e in envelopes
    )
    done = {(str(e.get("problem_id")), 0) for e in envelopes}
    infra = pending_infra(read_infra(layout.agent_dir(name)), done)
    unrun = {f.problem_id for f in infra}
    # An infrastructure failure is not the miner's 0: scored over the problems that did run.
    scored = [p for p in problems if p.problem_id not in unrun]
    scores, note = _score(scored, envelopes, search, similarity)
    summary = AgentSummary(
        agent=name,
        problems=len(envelopes),
        success=statuses.count("SUCCESS"),
        failed=statuses.count("FAILED"),
        timed_out=statuses.count("TIMED_OUT"),
        no_model_reply=no_reply,
        inference_total=sum(int(e.get("inference_total") or 0) for e in envelopes),
        inference_failed=sum(int(e.get("inference_failure_count") or 0) for e in envelopes),
        infra_failed=len(infra),
        infra=infra_counts(infra),
        failures=failure_reasons(envelopes),
        scores=scores,
    )
    return summary, note


#: ``progress(agent, done, total, statuses)``: after each envelope an agent's runner writes (and once when
#: the agent starts, with the problems already recorded); ``statuses`` counts this agent's envelopes so far.
ProgressCallback = Callable[[str, int, int, dict[str, int]], None]


def _progress_hook(
    progress: ProgressCallback | None, name: str, recorded: list[dict[str, Any]], total: int
) -> Callable[[dict[str, Any]], None] | None:
    """The runner's ``on_envelope`` that reports ``name``'s progress (called once now for the resume)."""
    if progress is None:
        return None
    statuses = Counter(str(e.get("status")) for e in recorded)
    progress(name, len(recorded), total, dict(statuses))
    lock = threading.Lock()  # the runner's worker threads call back

    def on_envelope(envelope: dict[str, Any]) -> None:
        with lock:
            statuses[str(envelope.get("status"))] += 1
            progress(name, sum(statuses.values()), total, dict(statuses))

    return on_envelope


def run_arena(
    config: ArenaRunConfig,
    *,
    backend: Any = None,
    search: Any = None,
    progress: ProgressCallback | None = None,
) -> ArenaRunSummary:
    """Run every agent on the suite in ``config.out`` (resuming what is already there).

    Args:
        config: The run configuration.
        backend: A ready ChatBackend (tests); else built from ``config.backend`` (None: inference → 503).
        search: A ready search engine (tests); else ``SearchIndex.open(config.index)``.
        progress: Called per agent as its problems finish (``arena run`` prints it).

    Returns:
        Per-agent counts and scores.
    """
    out = config.out
    out.mkdir(parents=True, exist_ok=True)
    layout = ArenaRun.at(out)
    previous = load_or_new(out, ArenaManifest, kind="arena")
    run_id = config.run_id or previous.run_id
    resolved = config.model_copy(update={"run_id": run_id, "workers": config.workers or default_sandboxes()})
    config = resolved
    layout.config_path.write_text(yaml.safe_dump(resolved.model_dump(mode="json"), sort_keys=False))

    problems, loader_problems, notes = load_problems(config.suite)
    if search is None and config.index is not None:
        from shoparena.search import SearchIndex

        search = SearchIndex.open(config.index)
    own_backend = backend is None and bool(config.backend)
    if own_backend:
        from shoparena.llm.factory import backend_from_spec

        backend = backend_from_spec(config.backend)
    if backend is not None:
        prepare_backend(backend)
    model = run_model(config, backend)
    proxy_config = config.proxy
    if model and not proxy_config.served_model:
        proxy_config = proxy_config.model_copy(update={"served_model": model})
    agent_env = proxy_config.inference.agent_env(model, config.timeout_s)
    sandbox = Sandbox(config.sandbox.model_copy(update={"timeout_s": config.timeout_s}))
    names = _agent_names(config.agents)
    manifest = ArenaManifest(
        run_id=run_id,
        created=previous.created,
        inputs={"suite": FileRef.of(config.suite)},
        suite_problems=len(problems),
        agents={n: ArenaAgentRef.of(p) for n, p in zip(names, config.agents, strict=True)},
        isolation=sandbox.report.model_dump(mode="json"),
        proxy=ArenaProxyInfo(
            allowed_models=config.proxy.allowed_models,
            strict_nonces=config.proxy.strict_nonces,
            backend=config.backend,
            served_model=proxy_config.served_model,
            inference=proxy_config.inference.model_dump(mode="json"),
        ),
        notes=notes,
    )
    write_manifest(manifest, out)
    state = ProxyState(proxy_config, unattributed_log=layout.unattributed_log)
    layout.proxy_root.mkdir(exist_ok=True)
    summaries: list[AgentSummary] = []
    knowledge = None
    if search is not None and any(str(p.public.get("category", "")).lower() == "web" for p in problems):
        from shoparena.env.episodes import suite_knowledge

        knowledge = suite_knowledge(search, config.suite)
    app = create_proxy_app(search, backend, state, knowledge)
    server = ProxyServer(app, peer_gid=sandbox.peer_gid).start()
    try:
        for name, agent_file in zip(names, config.agents, strict=True):
            started = time.monotonic()
            on_envelope = _progress_hook(progress, name, layout.envelopes(name), len(problems))
            runner = AgentRunner(
                name,
                agent_file,
                layout.agent_dir(name),
                sandbox,
                proxy_state=state,
                proxy_socket=server.socket_path,
                proxy_log_dir=layout.proxy_dir(name),
                run_id=run_id,
                workers=config.workers,
                timeout_s=config.timeout_s,
                run_timeout_s=config.run_timeout_s,
                agent_env=agent_env,
                on_envelope=on_envelope,
            )
            runner.run(problems)
            summary, note = _agent_summary(layout, name, loader_problems, search, config.similarity)
            logger.info("%s: %d envelopes in %.1fs", name, summary.problems, time.monotonic() - started)
            if note and note not in notes:
                notes.append(note)
            summaries.append(summary)
    finally:
        server.stop()
        sandbox.close()
        if own_backend and hasattr(backend, "close"):
            backend.close()  # no generation thread may outlive the run (clean interpreter exit)
    summary = ArenaRunSummary(
        run_dir=str(out),
        run_id=run_id,
        model=model,
        agents=summaries,
        isolation_warnings=sandbox.report.warnings,
        notes=notes,
    )
    if any(s.scores for s in summaries):
        layout.scores_path.write_text(json.dumps({s.agent: s.scores for s in summaries}, indent=2))
    manifest.notes = notes
    write_manifest(manifest, out)
    return summary
