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
import time
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field

from shoparena.arena.proxy import ProxyConfig, ProxyServer, ProxyState, create_proxy_app
from shoparena.arena.runner import AgentRunner, ArenaProblem, safe_name
from shoparena.arena.sandbox import Sandbox, SandboxConfig
from shoparena.formats._common import FormatError
from shoparena.formats.oro import from_oro_envelope
from shoparena.jsonl import read_jsonl_dicts
from shoparena.records.problem import Problem
from shoparena.records.trajectory import Trajectory
from shoparena.runs.manifest import (
    ArenaAgentRef,
    ArenaManifest,
    ArenaProxyInfo,
    FileRef,
    load_or_new,
    write_manifest,
)
from shoparena.scoring import get_similarity, score_run
from shoparena.suites.loaders import load_suite

logger = logging.getLogger(__name__)


class ArenaRunConfig(BaseModel):
    """Everything ``arena run`` needs (written resolved to ``config.yaml``)."""

    model_config = ConfigDict(extra="forbid")

    agents: list[Path] = Field(min_length=1)
    suite: Path
    index: Path | None = None
    out: Path
    backend: str | None = Field(default=None, description="LLM backend spec (shoparena.llm.factory).")
    workers: int = Field(default=3, ge=1)
    timeout_s: float = Field(default=300.0, gt=0)
    run_timeout_s: float | None = Field(default=1800.0, gt=0)
    run_id: str | None = None
    similarity: str = Field(default="lexical", description="Title similarity for scoring (offline default).")
    proxy: ProxyConfig = Field(default_factory=ProxyConfig)
    sandbox: SandboxConfig = Field(default_factory=SandboxConfig)


class AgentSummary(BaseModel):
    model_config = ConfigDict(extra="forbid")

    agent: str
    problems: int
    success: int
    failed: int
    timed_out: int
    scores: dict[str, dict[str, Any]] = Field(default_factory=dict)


class ArenaRunSummary(BaseModel):
    model_config = ConfigDict(extra="forbid")

    run_dir: str
    run_id: str
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
    problems: list[Problem], envelopes: list[dict[str, Any]], lookup: Any, similarity: str
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
    sim = get_similarity(similarity)
    scores: dict[str, dict[str, Any]] = {}
    for profile in ("shoppingbench", "strict"):
        result = score_run(problems, trajectories, lookup, profile=profile, similarity=sim)
        agg = result.aggregate
        scores[profile] = agg.model_dump(mode="json") if hasattr(agg, "model_dump") else dict(vars(agg))
    return scores, None


def run_arena(config: ArenaRunConfig, *, backend: Any = None, search: Any = None) -> ArenaRunSummary:
    """Run every agent on the suite in ``config.out`` (resuming what is already there).

    Args:
        config: The run configuration.
        backend: A ready ChatBackend (tests); else built from ``config.backend`` (None: inference → 503).
        search: A ready search engine (tests); else ``SearchIndex.open(config.index)``.

    Returns:
        Per-agent counts and scores.
    """
    out = config.out
    out.mkdir(parents=True, exist_ok=True)
    previous = load_or_new(out, ArenaManifest, kind="arena")
    run_id = config.run_id or previous.run_id
    resolved = config.model_copy(update={"run_id": run_id})
    (out / "config.yaml").write_text(yaml.safe_dump(resolved.model_dump(mode="json"), sort_keys=False))

    problems, loader_problems, notes = load_problems(config.suite)
    if search is None and config.index is not None:
        from shoparena.search import SearchIndex

        search = SearchIndex.open(config.index)
    if backend is None and config.backend:
        from shoparena.llm.factory import backend_from_spec

        backend = backend_from_spec(config.backend)
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
        ),
        notes=notes,
    )
    write_manifest(manifest, out)
    state = ProxyState(config.proxy, unattributed_log=out / "proxy" / "_unattributed.jsonl")
    (out / "proxy").mkdir(exist_ok=True)
    summaries: list[AgentSummary] = []
    server = ProxyServer(create_proxy_app(search, backend, state), peer_gid=sandbox.peer_gid).start()
    try:
        for name, agent_file in zip(names, config.agents, strict=True):
            started = time.monotonic()
            runner = AgentRunner(
                name,
                agent_file,
                out / "agents" / name,
                sandbox,
                proxy_state=state,
                proxy_socket=server.socket_path,
                proxy_log_dir=out / "proxy" / name,
                run_id=run_id,
                workers=config.workers,
                timeout_s=config.timeout_s,
                run_timeout_s=config.run_timeout_s,
            )
            runner.run(problems)
            envelopes = read_jsonl_dicts(out / "agents" / name / "output.jsonl")
            logger.info("%s: %d envelopes in %.1fs", name, len(envelopes), time.monotonic() - started)
            statuses = [e.get("status") for e in envelopes]
            scores, note = _score(loader_problems, envelopes, search, config.similarity)
            if note and note not in notes:
                notes.append(note)
            summaries.append(
                AgentSummary(
                    agent=name,
                    problems=len(envelopes),
                    success=statuses.count("SUCCESS"),
                    failed=statuses.count("FAILED"),
                    timed_out=statuses.count("TIMED_OUT"),
                    scores=scores,
                )
            )
    finally:
        server.stop()
        sandbox.close()
    summary = ArenaRunSummary(
        run_dir=str(out),
        run_id=run_id,
        agents=summaries,
        isolation_warnings=sandbox.report.warnings,
        notes=notes,
    )
    if any(s.scores for s in summaries):
        (out / "scores.json").write_text(json.dumps({s.agent: s.scores for s in summaries}, indent=2))
    manifest.notes = notes
    write_manifest(manifest, out)
    return summary
