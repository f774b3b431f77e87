"""The proxy socket is private and arena temp dirs never outlive their run (also a killed one)."""

from __future__ import annotations

import gc
import os
import stat
import subprocess
import sys
from pathlib import Path

from fastapi import FastAPI

from shoparena.arena.proxy import ProxyServer
from shoparena.arena.sandbox import Sandbox, SandboxConfig, peer_gid_for


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_proxy_socket_is_owner_only_and_removed_on_stop() -> None:
    server = ProxyServer(FastAPI(), peer_gid=None).start()
    try:
        assert stat.S_ISSOCK(server.socket_path.stat().st_mode)
        assert _mode(server.socket_path) == 0o600 and _mode(server.socket_dir) == 0o700
        assert server.socket_dir.name.startswith(f"shoparena-proxy-{os.getpid()}-")
    finally:
        server.stop()
    assert not server.socket_dir.exists()


def test_proxy_default_group_is_the_default_sandboxes_group() -> None:
    server = ProxyServer(FastAPI())
    try:
        expected = SandboxConfig().sandbox_uid_base - 1 if os.geteuid() == 0 else None
        assert server.peer_gid == expected == peer_gid_for(SandboxConfig())
    finally:
        server.stop()


def test_proxy_socket_shared_only_with_the_sandbox_group() -> None:
    gid = os.getegid()  # a group we may chown to without root
    server = ProxyServer(FastAPI(), peer_gid=gid).start()
    try:
        info = server.socket_path.stat()
        assert info.st_gid == gid and stat.S_IMODE(info.st_mode) == 0o660
        assert _mode(server.socket_dir) == 0o710  # no "other" bits anywhere
    finally:
        server.stop()


def test_sandbox_staging_is_removed_when_the_sandbox_is_dropped() -> None:
    box = Sandbox(SandboxConfig(timeout_s=5, bwrap=None))
    staging = box.staging
    assert staging.name.startswith(f"shoparena-sbx-{os.getpid()}-")
    del box
    gc.collect()
    assert not staging.exists()


KILLED = """
import os, signal
from fastapi import FastAPI
from shoparena.arena.proxy import ProxyServer
from shoparena.arena.sandbox import Sandbox, SandboxConfig, peer_gid_for
box = Sandbox(SandboxConfig(timeout_s=5, bwrap=None))
(box.staging / "p-x").mkdir()
(box.staging / "p-x" / "problem.json").write_text("{}")
server = ProxyServer(FastAPI()).start()
print(box.staging, server.socket_dir, flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_killed_runs_leftovers_are_removed_by_the_next_run() -> None:
    proc = subprocess.run([sys.executable, "-c", KILLED], capture_output=True, text=True, timeout=60)
    staging, socket_dir = (Path(p) for p in proc.stdout.split())
    assert staging.exists() and socket_dir.exists()  # SIGKILL: nothing could clean up
    box = Sandbox(SandboxConfig(timeout_s=5, bwrap=None))
    server = ProxyServer(FastAPI())
    try:
        assert not staging.exists() and not socket_dir.exists()
    finally:
        server.stop()
        box.close()
