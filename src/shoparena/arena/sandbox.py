"""Run one miner file on one problem in a fresh, isolated process (arena spec §3), without Docker.

Isolation uses bubblewrap (``bwrap``):

- namespaces: user, pid, net, ipc, uts, cgroup (``--unshare-all``); ``--die-with-parent``, ``--new-session``;
- identity: uid/gid 1000 inside; when the runner is root it also switches to a dedicated unprivileged host
  uid per worker slot (``sandbox_uid_base + slot``) so ``RLIMIT_NPROC`` is enforced (the kernel never
  enforces it for host root) and slots never count each other's processes;
- filesystem: an empty root with read-only ``/usr`` (+ merged-usr symlinks), the interpreter prefix,
  the agent file, the problem JSON, the SDK package and the harness; a private size-capped tmpfs ``/tmp``;
  fresh ``/proc`` and ``/dev``. Suites, run directories and other problems are simply not mounted;
- network: a new network namespace (loopback only). The proxy's Unix socket is bind-mounted in, and the
  harness's forwarder exposes it as ``http://127.0.0.1:<port>``: the proxy is the only reachable peer;
- rlimits (``preexec``): AS, NOFILE, CPU, FSIZE, CORE, and NPROC (NPROC inside the namespace when the runner
  cannot switch host uid);
- lifetime: SIGTERM to every sandbox process at the timeout, SIGKILL 5 s later; killing bwrap tears down
  the whole pid namespace.

Where a mechanism is unavailable the runner degrades **loudly**: a warning is logged and recorded in
:class:`IsolationReport`, which the run manifest stores. ``require_isolation=True`` turns that into an error.
"""

from __future__ import annotations

import compileall
import contextlib
import json
import logging
import os
import py_compile
import resource
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from shoparena.runs.stale import private_tempdir

logger = logging.getLogger(__name__)

HARNESS = Path(__file__).with_name("_harness.py")
SDK_DIR = Path(__file__).resolve().parent.parent / "agent_sdk"
SANDBOX_ROOT = "/sandbox"
GRACE_S = 5.0


class SandboxConfig(BaseModel):
    """Sandbox limits and isolation knobs.

    Attributes:
        timeout_s: Per-problem wall-clock limit (ORO: 300 s).
        grace_s: Time between SIGTERM and SIGKILL.
        memory_bytes: ``RLIMIT_AS`` per process.
        nproc: ``RLIMIT_NPROC`` (ORO: ``--pids-limit 256``).
        nofile: ``RLIMIT_NOFILE``.
        fsize_bytes: ``RLIMIT_FSIZE`` (largest file the agent can write).
        cpu_s: ``RLIMIT_CPU`` seconds; None derives ``timeout_s + grace_s + 5``.
        tmp_bytes: Size of the private ``/tmp`` tmpfs.
        output_cap_bytes: Bytes of stdout and of stderr kept (the rest is drained and counted).
        result_cap_bytes: Largest accepted result document.
        bwrap: Path or name of bubblewrap; None disables it (degraded mode, with a warning).
        python: Interpreter used inside the sandbox; None picks the runner's if the sandbox can read it,
            else ``/usr/bin/python3``.
        sandbox_uid_base: First host uid for worker slots when the runner is root.
        require_isolation: Raise instead of degrading when isolation is unavailable.
    """

    model_config = ConfigDict(extra="forbid")

    timeout_s: float = Field(default=300.0, gt=0)
    grace_s: float = Field(default=GRACE_S, ge=0)
    memory_bytes: int = Field(default=4 * 1024**3, ge=64 * 1024**2)
    nproc: int = Field(default=256, ge=4)
    nofile: int = Field(default=1024, ge=32)
    fsize_bytes: int = Field(default=256 * 1024**2, ge=1024)
    cpu_s: int | None = Field(default=None, ge=1)
    tmp_bytes: int = Field(default=256 * 1024**2, ge=1024**2)
    output_cap_bytes: int = Field(default=1024**2, ge=1024)
    result_cap_bytes: int = Field(default=64 * 1024**2, ge=1024)
    bwrap: str | None = "bwrap"
    python: str | None = None
    sandbox_uid_base: int = Field(default=61000, ge=1000)
    require_isolation: bool = False


class IsolationReport(BaseModel):
    """Mechanisms in effect and the warnings raised while probing them (stored in the manifest)."""

    model_config = ConfigDict(extra="forbid")

    backend: str = Field(description="'bwrap' or 'none' (degraded).")
    mechanisms: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    python: str = ""
    bwrap_version: str | None = None


@dataclass(slots=True)
class SandboxResult:
    """What one sandboxed execution produced (the runner turns it into an envelope)."""

    result: dict[str, Any] | None
    exit_code: int | None
    timed_out: bool
    execution_time: float
    stdout: bytes = b""
    stderr: bytes = b""
    stdout_dropped: int = 0
    stderr_dropped: int = 0
    result_error: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    #: False when bwrap never ran the command (its own setup failed: an infrastructure failure, not the
    #: miner's); None in degraded mode, where that cannot be told.
    started: bool | None = None


def _world_accessible(path: Path) -> bool:
    """True when a uid with no special rights can reach and read ``path``."""
    try:
        real = path.resolve()
        for parent in [*reversed(real.parents)]:
            if not os.stat(parent).st_mode & stat.S_IXOTH:
                return False
        return bool(os.stat(real).st_mode & stat.S_IROTH)
    except OSError:
        return False


def _supports_status_fd(bwrap: str) -> bool:
    """bwrap >= 0.5 has ``--json-status-fd``; older ones would refuse every launch with it."""
    try:
        out = subprocess.run([bwrap, "--help"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return False
    return "--json-status-fd" in out.stdout + out.stderr


def _stage_runtime(staging: Path) -> tuple[Path, Path]:
    """Copy the agent SDK and the harness into ``staging`` (world-readable); return (sys.path root, harness).

    Bound from the checkout they would depend on its parents' permissions: under a 0700 directory the
    sandbox uid cannot reach them and every miner fails before it starts (issue 23).
    """
    root = staging / "lib"
    target = root / "shoparena" / "agent_sdk"
    # No shoparena/__init__.py: a namespace package, so only the SDK is importable inside.
    shutil.copytree(
        SDK_DIR, target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"), dirs_exist_ok=True
    )
    harness = staging / "harness.py"
    shutil.copyfile(HARNESS, harness)
    # Bytecode compiled once here: the sandbox's read-only mount would make every process compile the
    # SDK anew (a sandbox runs this interpreter; another one ignores the cpython-<version> files).
    compileall.compile_dir(
        target, quiet=1, legacy=False, invalidation_mode=py_compile.PycInvalidationMode.TIMESTAMP
    )
    cache = target / "__pycache__"
    for path in (root, root / "shoparena", target, *([cache] if cache.is_dir() else [])):
        os.chmod(path, 0o755)
    for path in (*target.iterdir(), *(cache.iterdir() if cache.is_dir() else ()), harness):
        if path.is_file():
            os.chmod(path, 0o644)
    return root, harness


def _pick_python(config: SandboxConfig, switch_uid: bool) -> tuple[str, str | None]:
    """(interpreter path, prefix to bind or None when it is under /usr)."""
    candidate = config.python or os.path.realpath(sys.executable)
    if switch_uid and not _world_accessible(Path(candidate)):
        fallback = "/usr/bin/python3"
        if config.python:
            raise RuntimeError(f"SandboxConfig.python {candidate} is not readable by the sandbox uid")
        candidate = fallback
    real = os.path.realpath(candidate)
    if real.startswith("/usr/"):
        return real, None
    prefix = str(Path(real).parent.parent)  # <prefix>/bin/python3.x
    return real, prefix


def peer_gid_for(config: SandboxConfig) -> int | None:
    """The supplementary group sandboxes carry when the runner is root (they run as other host uids):
    ``sandbox_uid_base - 1``; only it may reach the proxy socket. None when sandboxes run as our uid."""
    return config.sandbox_uid_base - 1 if os.geteuid() == 0 else None


class Sandbox:
    """Launches sandboxed harness processes; probe once, then call :meth:`run` from worker threads.

    Args:
        config: Limits and knobs.
        staging_dir: Host directory holding per-problem files handed to the sandbox (world-traversable,
            outside the run directory). A temp dir when None.
    """

    def __init__(self, config: SandboxConfig | None = None, staging_dir: Path | None = None) -> None:
        self.config = config or SandboxConfig()
        self._own_staging = staging_dir is None
        # Named after our pid and removed at exit; a killed run's staging is removed by the next run.
        self.staging = Path(staging_dir or private_tempdir("sbx", owner=self))
        self.staging.mkdir(parents=True, exist_ok=True)
        os.chmod(self.staging, 0o711)
        self.sdk_root, self.harness = _stage_runtime(self.staging)
        self.switch_uid = os.geteuid() == 0
        self.python, self.python_prefix = _pick_python(self.config, self.switch_uid)
        self.bwrap_path = shutil.which(self.config.bwrap) if self.config.bwrap else None
        self._status_fd = self.bwrap_path is not None and _supports_status_fd(self.bwrap_path)
        self.report = self._probe()

    @property
    def peer_gid(self) -> int | None:
        """The group that may reach the proxy socket when sandboxes run under their own host uids."""
        return peer_gid_for(self.config)

    # -- probing ---------------------------------------------------------------------------------
    def _probe(self) -> IsolationReport:
        warnings: list[str] = []
        mechanisms = [
            "fresh-process-per-problem",
            "rlimits(AS,NOFILE,CPU,FSIZE,CORE,NPROC)",
            "runner-owned-result-pipe",
            "runner-written-envelopes",
            "proxy-side-trusted-log",
        ]
        version = None
        if self.bwrap_path is None:
            warnings.append(
                "bubblewrap not available: agents run WITHOUT filesystem, network or pid isolation"
            )
        else:
            try:
                version = (
                    subprocess.run(
                        [self.bwrap_path, "--version"], capture_output=True, text=True, timeout=10
                    ).stdout.strip()
                    or None
                )
                probe = self.run_raw(["-c", "import socket,os; print(os.getuid())"], slot=0, timeout_s=20)
                if probe.exit_code != 0 or probe.stdout.strip() != b"1000":
                    warnings.append(
                        f"bubblewrap probe failed (exit {probe.exit_code}): "
                        f"{probe.stderr.decode(errors='replace')[-300:]}; running WITHOUT isolation"
                    )
                    self.bwrap_path = None
            except (OSError, subprocess.SubprocessError) as err:
                warnings.append(f"bubblewrap probe error {err!r}; running WITHOUT isolation")
                self.bwrap_path = None
        if self.bwrap_path:
            mechanisms += [
                "bwrap",
                "user-namespace(uid 1000)",
                "pid-namespace",
                "net-namespace(proxy-only)",
                "ipc/uts/cgroup-namespaces",
                "read-only-system",
                "private-tmpfs(size-capped)",
                "die-with-parent",
                "new-session",
            ]
            if self.switch_uid:
                mechanisms.append("dedicated-host-uid-per-slot")
            else:
                mechanisms.append("nproc-set-inside-namespace")
        else:
            mechanisms.append("proxy-url-only(no-net-namespace)")
        if self.switch_uid and not self.bwrap_path:
            mechanisms.append("dedicated-host-uid-per-slot")
        if self.config.require_isolation and warnings:
            raise RuntimeError("sandbox isolation unavailable: " + "; ".join(warnings))
        for warning in warnings:
            logger.warning("SANDBOX DEGRADED: %s", warning)
        return IsolationReport(
            backend="bwrap" if self.bwrap_path else "none",
            mechanisms=mechanisms,
            warnings=warnings,
            python=self.python,
            bwrap_version=version,
        )

    # -- launching -------------------------------------------------------------------------------
    def _preexec(self, nproc_outside: bool) -> Any:
        cfg = self.config
        cpu = cfg.cpu_s or int(cfg.timeout_s + cfg.grace_s + 5)

        def apply() -> None:
            limits = [
                (resource.RLIMIT_AS, cfg.memory_bytes),
                (resource.RLIMIT_NOFILE, cfg.nofile),
                (resource.RLIMIT_CPU, cpu),
                (resource.RLIMIT_FSIZE, cfg.fsize_bytes),
                (resource.RLIMIT_CORE, 0),
            ]
            if nproc_outside:
                limits.append((resource.RLIMIT_NPROC, cfg.nproc))
            for which, value in limits:
                resource.setrlimit(which, (value, value))

        return apply

    def _bwrap_argv(
        self, binds: list[tuple[str, str]], env: dict[str, str], status_fd: int | None = None
    ) -> list[str]:
        argv = [
            self.bwrap_path or "bwrap",
            *(["--json-status-fd", str(status_fd)] if status_fd is not None else []),
            "--unshare-all",
            "--uid",
            "1000",
            "--gid",
            "1000",
            "--die-with-parent",
            "--new-session",
            "--hostname",
            "sandbox",
            "--ro-bind",
            "/usr",
            "/usr",
        ]
        for name in ("bin", "lib", "lib32", "lib64", "libx32", "sbin"):
            target = Path("/") / name
            if target.is_symlink():
                argv += ["--symlink", os.readlink(target), f"/{name}"]
            elif target.is_dir():
                argv += ["--ro-bind", str(target), f"/{name}"]
        if self.python_prefix:
            argv += ["--ro-bind", self.python_prefix, self.python_prefix]
        argv += [
            "--proc",
            "/proc",
            "--dev",
            "/dev",
            "--size",
            str(self.config.tmp_bytes),
            "--tmpfs",
            "/tmp",
            "--dir",
            SANDBOX_ROOT,
        ]
        for src, dst in binds:
            argv += ["--ro-bind", src, dst]
        argv += ["--remount-ro", "/", "--chdir", "/tmp", "--clearenv"]
        for key, value in env.items():
            argv += ["--setenv", key, value]
        return argv

    def run_raw(
        self,
        py_args: list[str],
        *,
        slot: int,
        timeout_s: float,
        env: dict[str, str] | None = None,
        binds: list[tuple[str, str]] | None = None,
        pass_fds: tuple[int, ...] = (),
        result_fd: int | None = None,
    ) -> SandboxResult:
        """Run ``python -I -S <py_args>`` in the sandbox (or degraded) and collect everything.

        Args:
            py_args: Interpreter arguments.
            slot: Worker slot (selects the host uid when the runner is root).
            timeout_s: Wall-clock limit; SIGTERM then SIGKILL after ``grace_s``.
            env: Environment inside the sandbox (nothing else is inherited).
            binds: Extra read-only ``(host, sandbox)`` binds.
            pass_fds: Descriptors inherited by the harness.
            result_fd: Read end of the result pipe (closed here).
        """
        env = {
            "PATH": "/usr/bin:/bin",
            "HOME": "/tmp",
            "LANG": "C.UTF-8",
            "PYTHONDONTWRITEBYTECODE": "1",
            **(env or {}),
        }
        use_bwrap = self.bwrap_path is not None
        status_r = status_w = None
        if use_bwrap:
            if self._status_fd:
                # bwrap writes {"exit-code": N} there only once the command itself ran and exited.
                status_r, status_w = os.pipe()
                pass_fds = (*pass_fds, status_w)
            argv = [*self._bwrap_argv(binds or [], env, status_w), self.python, "-I", "-S", *py_args]
            popen_env: dict[str, str] = {}
        else:
            argv = [self.python, "-I", "-S", *py_args]
            popen_env = env
        kwargs: dict[str, Any] = {}
        if self.switch_uid:
            uid = self.config.sandbox_uid_base + slot
            kwargs.update(user=uid, group=uid, extra_groups=[self.peer_gid])
        started = time.monotonic()
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=popen_env,
            pass_fds=pass_fds,
            start_new_session=True,
            preexec_fn=self._preexec(nproc_outside=self.switch_uid),
            **kwargs,
        )
        for fd in pass_fds:
            os.close(fd)
        cap = self.config.output_cap_bytes
        out, err, res = _Capture(proc.stdout, cap), _Capture(proc.stderr, cap), None
        if result_fd is not None:
            res = _Capture(os.fdopen(result_fd, "rb"), self.config.result_cap_bytes)
        status = _Capture(os.fdopen(status_r, "rb"), 64 * 1024) if status_r is not None else None
        timed_out = False
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
            self._terminate(proc)
        elapsed = time.monotonic() - started
        # Whatever survived the harness (degraded mode, stray children) dies with the process group.
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGKILL)
        for capture in (out, err, res, status):
            if capture is not None:
                capture.join(timeout=5)
        result, result_error = None, None
        if res is not None and res.data:
            if res.dropped:
                result_error = f"result larger than {self.config.result_cap_bytes} bytes"
            else:
                try:
                    result = json.loads(res.data)
                except ValueError as exc:
                    result_error = f"unreadable result: {exc}"
        return SandboxResult(
            result=result if isinstance(result, dict) else None,
            exit_code=proc.returncode,
            timed_out=timed_out,
            execution_time=elapsed,
            stdout=out.data,
            stderr=err.data,
            stdout_dropped=out.dropped,
            stderr_dropped=err.dropped,
            result_error=result_error,
            started=None if status is None else b'"exit-code"' in status.data,
        )

    def _terminate(self, proc: subprocess.Popen[bytes]) -> None:
        """SIGTERM every process of the sandbox, wait ``grace_s``, then SIGKILL bwrap and its tree."""
        targets = _descendants(proc.pid)
        sandboxed = targets if self.bwrap_path else [proc.pid, *targets]
        for pid in sandboxed:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGTERM)
        try:
            proc.wait(timeout=self.config.grace_s)
            return
        except subprocess.TimeoutExpired:
            pass
        for pid in [proc.pid, *_descendants(proc.pid)]:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()

    def run_agent(
        self,
        agent_file: Path,
        problem: dict[str, Any],
        *,
        slot: int,
        timeout_s: float,
        env: dict[str, str],
        proxy_socket: Path | None,
    ) -> SandboxResult:
        """Run ``agent_main(problem)`` from ``agent_file`` once."""
        work = Path(tempfile.mkdtemp(prefix="p-", dir=self.staging))
        try:
            os.chmod(work, 0o711)
            agent_copy = work / "agent.py"
            shutil.copyfile(agent_file, agent_copy)
            problem_file = work / "problem.json"
            problem_file.write_text(json.dumps(problem), encoding="utf-8")
            for path in (agent_copy, problem_file):
                os.chmod(path, 0o644)
            read_fd, write_fd = os.pipe()
            if self.bwrap_path:
                sdk_root = f"{SANDBOX_ROOT}/lib"
                binds = [
                    (str(agent_copy), f"{SANDBOX_ROOT}/agent.py"),
                    (str(problem_file), f"{SANDBOX_ROOT}/problem.json"),
                    (str(self.sdk_root / "shoparena" / "agent_sdk"), f"{sdk_root}/shoparena/agent_sdk"),
                    (str(self.harness), f"{SANDBOX_ROOT}/harness.py"),
                ]
                if proxy_socket is not None:
                    binds.append((str(proxy_socket), f"{SANDBOX_ROOT}/proxy.sock"))
                hconf = {
                    "agent": f"{SANDBOX_ROOT}/agent.py",
                    "problem": f"{SANDBOX_ROOT}/problem.json",
                    "sys_path": [sdk_root],
                    "result_fd": write_fd,
                    "proxy_socket": f"{SANDBOX_ROOT}/proxy.sock" if proxy_socket else None,
                    "nproc": None if self.switch_uid else self.config.nproc,
                }
                script = f"{SANDBOX_ROOT}/harness.py"
            else:
                binds = []
                hconf = {
                    "agent": str(agent_copy),
                    "problem": str(problem_file),
                    "sys_path": [str(self.sdk_root)],
                    "result_fd": write_fd,
                    "proxy_socket": str(proxy_socket) if proxy_socket else None,
                    "nproc": None if self.switch_uid else self.config.nproc,
                }
                script = str(self.harness)
            return self.run_raw(
                [script, json.dumps(hconf)],
                slot=slot,
                timeout_s=timeout_s,
                env=env,
                binds=binds,
                pass_fds=(write_fd,),
                result_fd=read_fd,
            )
        finally:
            shutil.rmtree(work, ignore_errors=True)

    def close(self) -> None:
        if self._own_staging:
            shutil.rmtree(self.staging, ignore_errors=True)


class _Capture:
    """Reads a stream on a thread, keeping at most ``cap`` bytes and draining (counting) the rest."""

    def __init__(self, stream: Any, cap: int) -> None:
        self._stream, self._cap = stream, cap
        self._chunks: list[bytes] = []
        self.kept = 0
        self.dropped = 0
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        try:
            while True:
                chunk = (
                    self._stream.read1(65536) if hasattr(self._stream, "read1") else self._stream.read(65536)
                )
                if not chunk:
                    break
                room = self._cap - self.kept
                if room > 0:
                    self._chunks.append(chunk[:room])
                    self.kept += min(room, len(chunk))
                self.dropped += max(0, len(chunk) - max(room, 0))
        except (OSError, ValueError):
            pass
        finally:
            with contextlib.suppress(OSError):
                self._stream.close()

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)

    @property
    def data(self) -> bytes:
        return b"".join(self._chunks)


def _descendants(root: int) -> list[int]:
    """Host pids of every live descendant of ``root`` (read from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                raw = fh.read()
        except OSError:
            continue
        ppid = int(raw[raw.rfind(b")") + 2 :].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    found, stack = [], [root]
    while stack:
        for child in children.get(stack.pop(), []):
            found.append(child)
            stack.append(child)
    return found
