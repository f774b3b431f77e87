"""Run one agent file over a list of problems: N workers, one sandbox per problem, resumable envelopes."""

from __future__ import annotations

import json
import logging
import queue
import signal
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shoparena.arena.layout import LOGS_DIR, PROXY_DIR, SANDBOX_LOG_NAME, proxy_log_name, safe_name
from shoparena.arena.proxy import ProxyState
from shoparena.arena.proxy_log import is_chat_call, read_trusted_log
from shoparena.arena.sandbox import Sandbox, SandboxResult
from shoparena.jsonl import append_line
from shoparena.records.infra import InfraFailure, InfraReason
from shoparena.records.proxy_log import ProxyLogEntry
from shoparena.runs.envelopes import EnvelopeLog, apply_executor_defaults, envelope_log_path, make_envelope
from shoparena.runs.infra import append_infra

logger = logging.getLogger(__name__)

STDERR_TAIL = 500


@dataclass(slots=True)
class ArenaProblem:
    """A problem as the runner hands it out: its id and the public dict the agent sees."""

    problem_id: str
    public: dict[str, Any]

    @property
    def query(self) -> str:
        return str(self.public.get("query", ""))


def inference_counts(calls: list[ProxyLogEntry]) -> tuple[int, int]:
    """(inference calls, failed ones) from the trusted log: a call fails unless the backend answered 200."""
    inference = [c for c in calls if c.is_summary and is_chat_call(c)]
    return len(inference), sum(c.status_code != 200 for c in inference)


#: Signals that kill a process from outside its own logic (a crash or the OOM killer, not an answer).
CRASH_SIGNALS = frozenset(
    {signal.SIGSEGV, signal.SIGBUS, signal.SIGILL, signal.SIGABRT, signal.SIGFPE, signal.SIGKILL}
)
#: Proxy answers that mean the model server could not be reached (no backend, connection or server error).
UNREACHABLE_CODES = frozenset({502, 503})


def infra_failure(
    problem: ArenaProblem, outcome: SandboxResult, calls: list[ProxyLogEntry]
) -> InfraFailure | None:
    """The infrastructure failure behind ``outcome``, or None when the miner itself answered (or timed out).

    Told apart from what the miner controls: bwrap's own status (the command never started), a kill by a
    crash signal with no result, and a model server that answered every inference call with 502/503.
    """

    def failure(reason: InfraReason, message: str) -> InfraFailure:
        return InfraFailure(
            problem_id=problem.problem_id,
            reason=reason,
            message=" ".join(message.split())[:500],
            execution_time=round(outcome.execution_time, 3),
        )

    if outcome.timed_out:
        return None
    stderr = outcome.stderr.decode("utf-8", "replace")[-STDERR_TAIL:]
    if outcome.started is False:
        return failure(InfraReason.SANDBOX_START, stderr or f"sandbox exited {outcome.exit_code}")
    code = outcome.exit_code
    sig = -code if code is not None and code < 0 else (code - 128 if code and code > 128 else None)
    if outcome.result is None and sig in CRASH_SIGNALS:
        return failure(InfraReason.MINER_CRASH, f"miner killed by {signal.Signals(sig).name}: {stderr}")
    inference = [c for c in calls if c.is_summary and is_chat_call(c)]
    if inference and all(c.status_code in UNREACHABLE_CODES for c in inference):
        codes = sorted({c.status_code for c in inference})
        return failure(
            InfraReason.MODEL_UNREACHABLE,
            f"all {len(inference)} inference call(s) answered {codes}: the model server is unreachable",
        )
    return None


def envelope_from_result(
    problem: ArenaProblem,
    outcome: SandboxResult,
    *,
    timeout_s: float,
    calls: list[ProxyLogEntry],
) -> dict[str, Any]:
    """Decide status and error from what the sandbox produced and the trusted log (never from the agent).

    Inference counts come from the proxy's trusted log. A run whose every inference call failed or timed out
    is not a SUCCESS even when the agent returned steps: it is FAILED with ``InferenceFailed``, since no
    model reply ever reached the agent.
    """
    inference_total, inference_failed = inference_counts(calls)
    common = {"inference_total": inference_total, "inference_failure_count": inference_failed}
    pid, elapsed = problem.problem_id, outcome.execution_time
    result = outcome.result
    if outcome.timed_out:
        return make_envelope(
            pid,
            "TIMED_OUT",
            elapsed,
            error={"type": "TimeoutError", "message": f"Execution exceeded timeout of {timeout_s:g}s"},
            **common,
        )
    if result is None:
        message = (
            outcome.result_error or f"Process exited with code {outcome.exit_code} but produced no result"
        )
        return make_envelope(pid, "FAILED", elapsed, error={"type": "NoResult", "message": message}, **common)
    kind = result.get("kind")
    if kind == "return" and inference_total and inference_failed == inference_total:
        return make_envelope(
            pid,
            "FAILED",
            elapsed,
            error={
                "type": "InferenceFailed",
                "message": f"all {inference_total} inference call(s) failed or timed out "
                "(proxy trusted log); no model reply reached the agent",
            },
            **common,
        )
    if kind == "return" and isinstance(result.get("dialogue"), list):
        dialogue = apply_executor_defaults(
            result["dialogue"],
            query=problem.query,
            problem_id=pid,
            execution_time=elapsed,
            trusted_calls=[call.to_dict() for call in calls],
        )
        return make_envelope(pid, "SUCCESS", elapsed, dialogue=dialogue, **common)
    if kind == "invalid_return":
        return make_envelope(
            pid,
            "FAILED",
            elapsed,
            error={
                "type": "InvalidReturnType",
                "message": f"agent_main returned {result.get('type')}, expected a list of steps",
            },
            **common,
        )
    error = result.get("error") if isinstance(result.get("error"), dict) else {}
    return make_envelope(
        pid,
        "FAILED",
        elapsed,
        error={"type": str(error.get("type", "AgentError")), "message": str(error.get("message", ""))},
        **common,
    )


class AgentRunner:
    """Runs one agent over problems, appending envelopes to ``out_dir/output.jsonl`` as each completes.

    Args:
        agent_name: Name used for directories and the nonce run identity.
        agent_file: The miner file.
        out_dir: ``agents/<name>`` (``output.jsonl``, ``sandbox.jsonl``, ``logs/``).
        sandbox: The launcher.
        proxy_state: Proxy state to register per-problem tokens in; None runs without a proxy.
        proxy_socket: The proxy's Unix socket.
        proxy_log_dir: Where the proxy writes ``<problem>.jsonl`` trusted logs for this agent.
        run_id: Evaluation run id (part of each problem's nonce identity).
        workers: Parallel sandboxes.
        timeout_s: Per-problem limit.
        run_timeout_s: Limit for the whole agent run; problems not started in time become TIMED_OUT.
        agent_env: Extra environment for every agent process (the run's model and inference limits).
        on_envelope: Callback after each envelope is written (progress display).
        on_infra: Callback after an infrastructure failure is recorded (no envelope is written for it).
    """

    def __init__(
        self,
        agent_name: str,
        agent_file: Path,
        out_dir: Path,
        sandbox: Sandbox,
        *,
        proxy_state: ProxyState | None = None,
        proxy_socket: Path | None = None,
        proxy_log_dir: Path | None = None,
        run_id: str = "local",
        workers: int = 3,
        timeout_s: float = 300.0,
        run_timeout_s: float | None = 1800.0,
        agent_env: dict[str, str] | None = None,
        on_envelope: Callable[[dict[str, Any]], None] | None = None,
        on_infra: Callable[[InfraFailure], None] | None = None,
    ) -> None:
        if workers < 1:
            raise ValueError("AgentRunner.workers must be >= 1")
        self.agent_name, self.agent_file, self.out_dir = agent_name, agent_file, out_dir
        self.sandbox, self.proxy_state, self.proxy_socket = sandbox, proxy_state, proxy_socket
        self.proxy_log_dir = proxy_log_dir or out_dir / PROXY_DIR
        self.run_id, self.workers, self.timeout_s, self.run_timeout_s = (
            run_id,
            workers,
            timeout_s,
            run_timeout_s,
        )
        self.agent_env = dict(agent_env or {})
        self.on_envelope, self.on_infra = on_envelope, on_infra
        self.log = EnvelopeLog(envelope_log_path(out_dir))
        (out_dir / LOGS_DIR).mkdir(parents=True, exist_ok=True)

    def run(self, problems: list[ArenaProblem]) -> list[dict[str, Any]]:
        """Run every problem not yet in ``output.jsonl``; returns all envelopes in file order."""
        done = self.log.done()
        todo = [p for p in problems if p.problem_id not in done]
        if len(todo) < len(problems):
            logger.info(
                "%s: resuming, %d of %d problems already recorded",
                self.agent_name,
                len(problems) - len(todo),
                len(problems),
            )
        deadline = time.monotonic() + self.run_timeout_s if self.run_timeout_s else None
        slots: queue.Queue[int] = queue.Queue()
        for slot in range(self.workers):
            slots.put(slot)

        def work(problem: ArenaProblem) -> None:
            slot = slots.get()
            try:
                envelope = self._one(problem, slot, deadline)
            except Exception as exc:  # the runner's own failure: not the miner's, retried on resume
                logger.exception("%s/%s: runner error", self.agent_name, problem.problem_id)
                envelope = InfraFailure(
                    problem_id=problem.problem_id,
                    reason=InfraReason.RUNNER_ERROR,
                    message=f"{type(exc).__name__}: {exc}"[:500],
                )
            finally:
                slots.put(slot)
            if isinstance(envelope, InfraFailure):
                # No envelope: the problem stays pending, so the same command run again retries it.
                logger.warning(
                    "%s/%s: infrastructure failure (%s): %s",
                    self.agent_name,
                    problem.problem_id,
                    envelope.reason.value,
                    envelope.message[:200],
                )
                append_infra(self.out_dir, envelope)
                if self.on_infra:
                    self.on_infra(envelope)
                return
            if self.log.append(envelope) and self.on_envelope:
                self.on_envelope(envelope)

        pool = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix=f"arena-{self.agent_name}")
        try:
            list(pool.map(work, todo))
        finally:
            # On SIGTERM/Ctrl-C only the problems in flight finish; the rest are left for the resume.
            pool.shutdown(wait=True, cancel_futures=True)
        return self.log.read()

    def _one(self, problem: ArenaProblem, slot: int, deadline: float | None) -> dict[str, Any] | InfraFailure:
        timeout = self.timeout_s
        if deadline is not None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return make_envelope(
                    problem.problem_id,
                    "TIMED_OUT",
                    0.0,
                    error={
                        "type": "TimeoutError",
                        "message": f"Run exceeded its limit of {self.run_timeout_s:g}s "
                        "before this problem started",
                    },
                )
            timeout = min(timeout, remaining)
        name = safe_name(problem.problem_id)
        log_path = self.proxy_log_dir / proxy_log_name(problem.problem_id)
        ident = None
        env = {
            **self.agent_env,
            "INFERENCE_STATS_FILE": "/tmp/inference_stats.jsonl",
            "REQUEST_LOG_FILE": "/tmp/request_log.jsonl",
            "SANDBOX_OUTPUT_FILE": "/tmp/output.jsonl",
        }
        if self.proxy_state is not None:
            ident = self.proxy_state.register(
                f"{self.run_id}/{self.agent_name}/{problem.problem_id}",
                self.agent_name,
                problem.problem_id,
                log_path,
            )
            env["CHUTES_ACCESS_TOKEN"] = ident.token
        try:
            outcome = self.sandbox.run_agent(
                self.agent_file,
                problem.public,
                slot=slot,
                timeout_s=timeout,
                env=env,
                proxy_socket=self.proxy_socket if ident else None,
            )
        finally:
            if ident is not None and self.proxy_state is not None:
                self.proxy_state.unregister(ident.token)
                # Calls still in flight (a killed agent's) are cancelled and logged before the log is read.
                self.proxy_state.wait_idle(ident)
        calls = read_trusted_log(log_path)
        self._side_files(problem, name, outcome)
        infra = infra_failure(problem, outcome, calls)
        if infra is not None:
            return infra
        return envelope_from_result(problem, outcome, timeout_s=timeout, calls=calls)

    def _side_files(self, problem: ArenaProblem, name: str, outcome: SandboxResult) -> None:
        logs = self.out_dir / LOGS_DIR
        (logs / f"{name}.stdout").write_bytes(outcome.stdout)
        (logs / f"{name}.stderr").write_bytes(outcome.stderr)
        meta = {
            "problem_id": problem.problem_id,
            "exit_code": outcome.exit_code,
            "timed_out": outcome.timed_out,
            "execution_time": round(outcome.execution_time, 3),
            "stdout_bytes_dropped": outcome.stdout_dropped,
            "stderr_bytes_dropped": outcome.stderr_dropped,
            "stderr_tail": outcome.stderr.decode("utf-8", "replace")[-STDERR_TAIL:],
            "result_error": outcome.result_error,
            "traceback": (outcome.result or {}).get("traceback"),
        }
        append_line(self.out_dir / SANDBOX_LOG_NAME, json.dumps(meta), fsync=False)
