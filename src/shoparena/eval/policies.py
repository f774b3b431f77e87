"""Policies ``eval run`` can evaluate, behind one interface: play a list of episodes, report each one.

Each kind of spec is one :class:`PolicyKind` entry of :data:`POLICY_KINDS`, keyed by the registry's policy
kinds (:mod:`shoparena.records.actors`, role ``policy``: ``planner``, ``hf:DIR``, ``openai:URL#model``,
``miner:FILE``), which describes each one and writes its usage.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from shoparena.env.environment import ShopEnv
from shoparena.env.episodes import run_episode
from shoparena.env.knowledge import KnowledgeBase
from shoparena.eval.chat_agent import ChatAgent, Decoding, EpisodeTimeout, EpisodeUsage
from shoparena.eval.config import EvalConfig
from shoparena.formats.profiles import (
    DEFAULT_PROFILE,
    RenderProfileError,
    check_profile,
    profile_hash,
    read_render_stamp,
    template_hash,
)
from shoparena.formats.scan import MAX_CALLS_PER_STEP
from shoparena.records.actors import ActorRole, actor
from shoparena.records.infra import InfraFailure, InfraReason
from shoparena.records.problem import Problem
from shoparena.records.trajectory import EpisodeStatus, Trajectory, TrajectoryError

if TYPE_CHECKING:
    from shoparena.search import SearchEngine

logger = logging.getLogger(__name__)


@dataclass(slots=True, frozen=True)
class EpisodeSpec:
    """One episode to play: a problem, its sample index and its decoding."""

    problem: Problem
    sample_idx: int
    decoding: str  # "greedy" | "sampled"

    @property
    def key(self) -> tuple[str, int]:
        return (self.problem.problem_id, self.sample_idx)


@dataclass(slots=True)
class EpisodeResult:
    """A finished episode: its trajectory and what it cost."""

    trajectory: Trajectory
    usage: EpisodeUsage = field(default_factory=EpisodeUsage)
    wall_s: float = 0.0
    #: Set when the episode could not be run (no model server, runner error): stored apart, retried.
    infra: InfraFailure | None = None


OnDone = Callable[[EpisodeSpec, EpisodeResult], None]


class Policy(Protocol):
    """Plays episodes; ``run`` calls ``on_done`` once per episode (from any thread)."""

    name: str
    kind: str

    def run(self, episodes: Sequence[EpisodeSpec], on_done: OnDone, run_id: str = "") -> None: ...

    def describe(self) -> dict[str, Any]: ...

    def close(self) -> None: ...


def _timed_out(traj: Trajectory) -> Trajectory:
    if traj.error is not None and traj.error.message.startswith(EpisodeTimeout.__name__):
        traj.status = EpisodeStatus.TIMED_OUT
    return traj


class InProcessPolicy:
    """Episodes in a thread pool of ``config.concurrency`` over one shared search engine.

    Args:
        name: Recorded as the trajectories' agent id.
        kind: ``planner``, ``hf`` or ``openai``.
        make_agent: Builds the agent of one episode from its spec and deadline.
        config: The evaluation configuration.
        engine: The search engine.
        knowledge: The web-search knowledge base (web problems).
        info: Extra description recorded in the manifest.
    """

    def __init__(
        self,
        name: str,
        kind: str,
        make_agent: Callable[[EpisodeSpec, float], Any],
        config: EvalConfig,
        engine: SearchEngine,
        knowledge: KnowledgeBase | None,
        info: dict[str, Any] | None = None,
        closer: Callable[[], None] | None = None,
    ) -> None:
        self.name, self.kind = name, kind
        self.make_agent, self.config = make_agent, config
        self.engine, self.knowledge = engine, knowledge
        self.info = info or {}
        self._closer = closer
        self._local = threading.local()  # one ShopEnv per worker thread, reused across its episodes

    def _env(self, run_id: str) -> ShopEnv:
        env = getattr(self._local, "env", None)
        if env is None or env.run_id != run_id:
            env = ShopEnv(
                self.engine,
                knowledge=self.knowledge,
                max_steps=self.config.max_steps,
                agent_id=self.name,
                run_id=run_id,
                render_profile=self.config.render_profile or DEFAULT_PROFILE,
                max_calls_per_step=MAX_CALLS_PER_STEP,  # the env server's cap: one reply is bounded
            )
            self._local.env = env
        return env

    def play(self, spec: EpisodeSpec, run_id: str) -> EpisodeResult:
        started = time.monotonic()
        agent = self.make_agent(spec, started + self.config.episode_timeout_s)
        traj = run_episode(agent, spec.problem, self.engine, env=self._env(run_id))
        traj.rollout_idx = spec.sample_idx
        usage = getattr(agent, "usage", None) or EpisodeUsage()
        traj.inference_total, traj.inference_failure_count = usage.calls, usage.failed_calls
        wall = time.monotonic() - started
        infra = None
        if getattr(agent, "unreachable", None):
            infra = InfraFailure(
                problem_id=spec.problem.problem_id,
                sample_idx=spec.sample_idx,
                reason=getattr(agent, "infra_reason", None) or InfraReason.MODEL_UNREACHABLE,
                message=str(agent.unreachable)[:500],
                execution_time=round(wall, 3),
            )
        return EpisodeResult(_timed_out(traj), usage, wall, infra)

    def play_or_fail(self, spec: EpisodeSpec, run_id: str) -> EpisodeResult:
        """:meth:`play`; the runner's own exception is an infrastructure failure (``runner_error``)."""
        try:
            return self.play(spec, run_id)
        except Exception as exc:
            # One line: the failure is recorded in infra.jsonl and retried; the traceback is for debugging.
            logger.warning("episode %s failed: %s: %s", spec.key, type(exc).__name__, str(exc)[:200])
            logger.debug("episode %s failed", spec.key, exc_info=True)
            traj = Trajectory(
                run_id=run_id,
                problem_id=spec.problem.problem_id,
                rollout_idx=spec.sample_idx,
                query=spec.problem.query,
                status=EpisodeStatus.FAILED,
                error=TrajectoryError(type="RunnerError", message=f"{type(exc).__name__}: {exc}"),
            )
            failure = InfraFailure(
                problem_id=spec.problem.problem_id,
                sample_idx=spec.sample_idx,
                reason=InfraReason.RUNNER_ERROR,
                message=f"{type(exc).__name__}: {exc}"[:500],
            )
            return EpisodeResult(traj, infra=failure)

    def run(self, episodes: Sequence[EpisodeSpec], on_done: OnDone, run_id: str = "") -> None:
        def work(spec: EpisodeSpec) -> None:
            on_done(spec, self.play_or_fail(spec, run_id))

        with ThreadPoolExecutor(max_workers=self.config.concurrency, thread_name_prefix="eval") as pool:
            list(pool.map(work, episodes))

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, **self.info}

    def close(self) -> None:
        if self._closer is not None:
            self._closer()


def _decoding(config: EvalConfig, spec: EpisodeSpec) -> Decoding:
    sampled = spec.decoding == "sampled"
    return Decoding(
        temperature=config.temperature if sampled else 0.0,
        top_p=config.top_p if sampled else 1.0,
        max_tokens=config.max_tokens,
        thinking=config.thinking,
        seed=config.seed + spec.sample_idx if sampled else None,
    )


def chat_policy(
    backend: Any,
    config: EvalConfig,
    engine: SearchEngine,
    knowledge: KnowledgeBase | None,
    *,
    kind: str,
    name: str,
    model: str | None = None,
    info: dict[str, Any] | None = None,
    closer: Callable[[], None] | None = None,
) -> InProcessPolicy:
    """An in-process policy whose agent asks ``backend`` for every step."""

    def make(spec: EpisodeSpec, deadline: float) -> ChatAgent:
        return ChatAgent(
            backend,
            fmt=config.format,
            decoding=_decoding(config, spec),
            model=model,
            deadline=deadline,
            request_timeout_s=config.request_timeout_s,
            name=name,
            render_profile=config.render_profile or DEFAULT_PROFILE,
        )

    return InProcessPolicy(name, kind, make, config, engine, knowledge, info, closer)


def resolve_render_profile(config: EvalConfig) -> EvalConfig:
    """``config`` with the render profile an ``hf:`` policy was trained under (its render stamp).

    An explicit ``render_profile`` that differs from the stamp is refused unless ``allow_profile_mismatch``;
    a chat template edited since training is logged as a warning (the prompt tokens differ from training's).

    Raises:
        RenderProfileError: an unknown profile, a damaged stamp, or a mismatch (the message names both).
    """
    from transformers import AutoTokenizer

    if config.render_profile is not None:
        check_profile(config.render_profile)
    kind = policy_kind(config.policy)
    if kind is None or kind.name != "hf":
        return config
    folder = policy_folder(config.policy)
    stamp = read_render_stamp(folder) if folder.is_dir() else None
    if stamp is None:
        return config
    wanted = config.render_profile or stamp.profile
    if wanted != stamp.profile and not config.allow_profile_mismatch:
        raise RenderProfileError(
            f"{folder}: trained under render profile {stamp.profile!r}, asked to evaluate under {wanted!r} "
            "(pass allow_profile_mismatch to do it anyway)"
        )
    if stamp.profile_hash != profile_hash(stamp.profile):
        logger.warning("%s: render profile %r changed since training", folder, stamp.profile)
    try:
        current = template_hash(AutoTokenizer.from_pretrained(folder).chat_template)
    except (OSError, ValueError):
        current = stamp.template_hash
    if stamp.template_hash and current != stamp.template_hash:
        logger.warning(
            "%s: chat template %s differs from the one trained with (%s)",
            folder,
            current,
            stamp.template_hash,
        )
    return config.model_copy(update={"render_profile": wanted})


class MinerPolicy:
    """An arena agent file, run in the sandbox with the trusted proxy exactly as ``arena run`` does.

    One :class:`~shoparena.arena.agent_runner.AgentRunner` per sample index keeps its own resumable envelope
    log under ``RUN/miner/s<idx>/``; the miner file chooses its own decoding.
    """

    kind = "miner"

    def __init__(
        self, agent_file: Path, config: EvalConfig, engine: SearchEngine, backend: Any = None
    ) -> None:
        from shoparena.arena.layout import UNATTRIBUTED_NAME
        from shoparena.arena.proxy import ProxyConfig, ProxyServer, ProxyState, create_proxy_app
        from shoparena.arena.sandbox import Sandbox, SandboxConfig

        self.agent_file, self.config = agent_file, config
        self.name = agent_file.stem
        self.sandbox = Sandbox(SandboxConfig(timeout_s=config.episode_timeout_s))
        self.state = ProxyState(ProxyConfig(), unattributed_log=config.out / "miner" / UNATTRIBUTED_NAME)
        (config.out / "miner").mkdir(parents=True, exist_ok=True)
        self.server = ProxyServer(create_proxy_app(engine, backend, state=self.state)).start()

    def run(self, episodes: Sequence[EpisodeSpec], on_done: OnDone, run_id: str = "") -> None:
        from shoparena.arena.agent_runner import AgentRunner, ArenaProblem
        from shoparena.arena.layout import PROXY_DIR
        from shoparena.formats.oro import from_oro_envelope

        by_sample: dict[int, dict[str, EpisodeSpec]] = {}
        for spec in episodes:
            by_sample.setdefault(spec.sample_idx, {})[spec.problem.problem_id] = spec
        for sample_idx, specs in sorted(by_sample.items()):
            delivered: set[str] = set()

            def deliver(
                envelope: dict[str, Any],
                specs: dict[str, EpisodeSpec] = specs,
                delivered: set[str] = delivered,
                sample_idx: int = sample_idx,
            ) -> None:
                pid = str(envelope.get("problem_id"))
                if pid not in specs or pid in delivered:
                    return
                delivered.add(pid)
                traj = from_oro_envelope(envelope)
                traj.run_id, traj.rollout_idx, traj.agent_id = run_id, sample_idx, self.name
                usage = EpisodeUsage(calls=traj.inference_total, failed_calls=traj.inference_failure_count)
                on_done(specs[pid], EpisodeResult(traj, usage, float(envelope.get("execution_time") or 0.0)))

            def skipped(
                failure: InfraFailure, specs: dict[str, EpisodeSpec] = specs, sample_idx: int = sample_idx
            ) -> None:
                spec = specs.get(failure.problem_id)
                if spec is not None:
                    traj = Trajectory(run_id=run_id, problem_id=failure.problem_id, rollout_idx=sample_idx)
                    on_done(
                        spec, EpisodeResult(traj, infra=failure.model_copy(update={"sample_idx": sample_idx}))
                    )

            out_dir = self.config.out / "miner" / f"s{sample_idx}"
            runner = AgentRunner(
                f"{self.name}-s{sample_idx}",
                self.agent_file,
                out_dir,
                self.sandbox,
                proxy_state=self.state,
                proxy_socket=self.server.socket_path,
                proxy_log_dir=out_dir / PROXY_DIR,
                run_id=run_id or "eval",
                workers=self.config.concurrency,
                timeout_s=self.config.episode_timeout_s,
                run_timeout_s=None,
                on_envelope=deliver,
                on_infra=skipped,
            )
            problems = [ArenaProblem(s.problem.problem_id, s.problem.public_view()) for s in specs.values()]
            for envelope in runner.run(problems):  # envelopes a killed run wrote before we recorded them
                deliver(envelope)

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "file": str(self.agent_file),
            "backend": self.config.miner_backend,
            "decoding": "chosen by the miner file",
            "isolation": self.sandbox.report.model_dump(mode="json"),
        }

    def close(self) -> None:
        self.server.stop()
        self.sandbox.close()


def _planner(spec: str, config: EvalConfig, engine: SearchEngine, knowledge: Any, backend: Any) -> Policy:
    from shoparena.agents.planner import PlannerAgent

    agent = PlannerAgent()
    return InProcessPolicy(
        "planner",
        "planner",
        lambda _s, _d: agent,
        config,
        engine,
        knowledge,
        {"note": "rule-based baseline, not a language model"},
    )


def _miner(spec: str, config: EvalConfig, engine: SearchEngine, knowledge: Any, backend: Any) -> Policy:
    from shoparena.arena.miners import resolve_agent

    path = resolve_agent(spec.removeprefix("miner:"))
    if backend is None and config.miner_backend:
        from shoparena.llm.factory import backend_from_spec

        backend = backend_from_spec(config.miner_backend)
    return MinerPolicy(path, config, engine, backend)


def policy_folder(spec: str) -> Path:
    """The model folder of an ``hf:DIR`` (or ``transformers:DIR``) spec."""
    return Path(spec.strip().split(":", 1)[1].partition("#")[0])


#: What ``describe()`` says each ``--engine`` runs.
ENGINE_NAMES = {
    "transformers": "batched transformers generate (in process)",
    "ctranslate2": "CTranslate2 float32 (in process)",
    "ctranslate2-int8": "CTranslate2 int8 (in process)",
}


def hf_backend(
    folder: Path,
    *,
    engine: str = "transformers",
    max_batch: int = 8,
    max_tokens: int = 512,
    seed: int = 0,
    threads: int | None = None,
    prefix_cache: bool = True,
) -> Any:
    """The in-process chat backend of an ``hf:`` folder under an ``--engine`` (``eval run`` and ``serve``).

    ``prefix_cache``: transformers keeps the shared prefix and each episode's key/value cache between
    turns; CTranslate2 passes the shared prefix as its cached ``static_prompt``. False: neither.

    Raises:
        BackendError: the engine is not installed, or the folder cannot be loaded or converted.
    """
    if engine == "transformers":
        from shoparena.eval.batching import BatchedTransformersBackend

        return BatchedTransformersBackend(
            folder,
            max_batch=max_batch,
            default_max_tokens=max_tokens,
            seed=seed,
            threads=threads,
            prefix_cache=prefix_cache,
        )
    from shoparena.eval.ct2_engine import CTranslate2Backend, engine_compute_type

    return CTranslate2Backend(
        folder,
        compute_type=engine_compute_type(engine),
        max_batch=max_batch,
        default_max_tokens=max_tokens,
        seed=seed,
        threads=threads,
        prefix_cache=prefix_cache,
    )


def _hf(spec: str, config: EvalConfig, engine: SearchEngine, knowledge: Any, backend: Any) -> Policy:
    folder = policy_folder(spec)
    if backend is None:
        backend = hf_backend(
            folder,
            engine=config.engine,
            max_batch=config.max_batch,
            max_tokens=config.max_tokens,
            seed=config.seed,
            threads=config.threads,
            prefix_cache=config.prefix_cache,
        )
    closer = getattr(backend, "close", None)
    return chat_policy(
        backend,
        config,
        engine,
        knowledge,
        kind="hf",
        name=folder.name or str(folder),
        info={
            "model_dir": str(folder),
            "engine": ENGINE_NAMES[config.engine],
            "max_batch": config.max_batch,
            "threads": config.threads,
            "prefix_cache": config.prefix_cache,
        },
        closer=closer,
    )


def _openai(spec: str, config: EvalConfig, engine: SearchEngine, knowledge: Any, backend: Any) -> Policy:
    from shoparena.llm.factory import parse_backend_spec
    from shoparena.llm.openai_compat import BackoffPolicy, OpenAICompatibleBackend

    _, url, model = parse_backend_spec(spec)
    if backend is None:
        backend = OpenAICompatibleBackend(
            url,
            None,
            model,
            timeout=config.request_timeout_s,
            max_retries=config.request_retries,
            backoff=BackoffPolicy(initial_s=config.retry_backoff_s),
        )
    return chat_policy(
        backend,
        config,
        engine,
        knowledge,
        kind="openai",
        name=model or url,
        model=model,
        info={"url": url, "model": model},
    )


@dataclass(frozen=True)
class PolicyKind:
    """One kind of ``--policy`` spec.

    Attributes:
        name: The kind (``Policy.kind``, the run's ``describe()``), a policy kind of the registry.
        exact: Specs that are this kind as written (``planner``).
        prefixes: Spec prefixes that make this kind (``hf:``).
        build: ``(spec, config, engine, knowledge, backend) -> Policy``; ``backend``, when given (tests),
            replaces the one the spec would build.
    """

    name: str
    exact: tuple[str, ...]
    prefixes: tuple[str, ...]
    build: Callable[[str, EvalConfig, Any, KnowledgeBase | None, Any], Policy]

    def matches(self, spec: str) -> bool:
        return spec in self.exact or spec.startswith(self.prefixes)

    @property
    def usage(self) -> str:
        """How a spec of this kind is written (the registry's, for help and error messages)."""
        return actor(ActorRole.POLICY, self.name).usage

    @property
    def description(self) -> str:
        return actor(ActorRole.POLICY, self.name).description


POLICY_KINDS: dict[str, PolicyKind] = {
    kind.name: kind
    for kind in (
        PolicyKind("planner", ("planner",), (), _planner),
        PolicyKind("hf", (), ("hf:", "transformers:"), _hf),
        PolicyKind("openai", (), ("openai:", "http://", "https://"), _openai),
        PolicyKind("miner", (), ("miner:",), _miner),
    )
}


def policy_kind(spec: str) -> PolicyKind | None:
    """The kind of policy ``spec`` names (None: no kind)."""
    spec = spec.strip()
    return next((kind for kind in POLICY_KINDS.values() if kind.matches(spec)), None)


def build_policy(
    config: EvalConfig, engine: SearchEngine, knowledge: KnowledgeBase | None, *, backend: Any = None
) -> Policy:
    """The policy named by ``config.policy`` (its kind in :data:`POLICY_KINDS`).

    Args:
        config: The evaluation configuration.
        engine: The search engine.
        knowledge: Web-search pages.
        backend: A ready chat backend (tests); replaces the one the spec would build.

    Raises:
        ValueError: an unknown or malformed policy spec (the message names it).
    """
    kind = policy_kind(config.policy)
    if kind is None:
        usages = [k.usage for k in POLICY_KINDS.values()]
        expected = f"{', '.join(usages[:-1])} or {usages[-1]}"
        raise ValueError(f"--policy {config.policy!r}: expected {expected}")
    return kind.build(config.policy.strip(), config, engine, knowledge, backend)


__all__ = [
    "POLICY_KINDS",
    "EpisodeResult",
    "EpisodeSpec",
    "InProcessPolicy",
    "MinerPolicy",
    "Policy",
    "PolicyKind",
    "build_policy",
    "chat_policy",
    "policy_folder",
    "policy_kind",
    "resolve_render_profile",
]
