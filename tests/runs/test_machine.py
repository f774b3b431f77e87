"""Worker counts from the machine: CPU affinity and cgroup quota, available memory, overrides."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from shoparena.runs.machine import MIB, available_memory, default_workers, usable_cpus


def _cgroup(folder: Path, **files: str) -> Path:
    """A cgroup v2 folder with ``files`` (``cpu_max`` is ``cpu.max``)."""
    folder.mkdir()
    for name, text in files.items():
        (folder / name.replace("_", ".")).write_text(text)
    return folder


def test_cpus_are_the_affinity_mask_capped_by_a_cgroup_quota(tmp_path: Path, monkeypatch):
    monkeypatch.delenv("SHOPARENA_CPUS", raising=False)
    mask = len(os.sched_getaffinity(0))
    assert usable_cpus(_cgroup(tmp_path / "none")) == mask
    quota = _cgroup(tmp_path / "quota", cpu_max="150000 100000\n")
    assert usable_cpus(quota) == min(mask, 2)  # 1.5 CPUs of quota keep two busy part of the time
    unlimited = _cgroup(tmp_path / "unlimited", cpu_max="max 100000")
    assert usable_cpus(unlimited) == mask
    monkeypatch.setenv("SHOPARENA_CPUS", "7")
    assert usable_cpus(quota) == 7


def test_memory_is_the_smaller_of_meminfo_and_the_cgroup_limit(tmp_path: Path, monkeypatch):
    monkeypatch.delenv("SHOPARENA_MEMORY_MB", raising=False)
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:       8000000 kB\nMemAvailable:    4000000 kB\n")
    cgroup = _cgroup(tmp_path / "cg", memory_max=str(3 * 1024 * MIB), memory_current=str(1024 * MIB))
    assert available_memory(cgroup, meminfo) == 2 * 1024 * MIB
    (tmp_path / "cg" / "memory.max").write_text("max\n")
    assert available_memory(cgroup, meminfo) == 4_000_000 * 1024
    assert available_memory(tmp_path / "missing", tmp_path / "no-meminfo") is None
    monkeypatch.setenv("SHOPARENA_MEMORY_MB", "512")
    assert available_memory(cgroup, meminfo) == 512 * MIB


def test_default_workers_fill_the_cpus_within_memory():
    assert default_workers(MIB, cpus=4, memory_bytes=1024 * MIB) == 4
    assert default_workers(MIB, per_cpu=2, cpus=4, memory_bytes=1024 * MIB) == 8
    assert default_workers(300 * MIB, cpus=4, memory_bytes=1024 * MIB) == 3
    assert default_workers(4096 * MIB, cpus=4, memory_bytes=1024 * MIB) == 1  # never zero


def test_a_bad_override_is_one_clear_error(monkeypatch):
    monkeypatch.setenv("SHOPARENA_CPUS", "lots")
    with pytest.raises(ValueError, match="SHOPARENA_CPUS='lots': expected a positive integer"):
        usable_cpus()


@pytest.mark.parametrize("value", ["0", "-1", "abc", "1.5"])
@pytest.mark.parametrize("name", ["SHOPARENA_CPUS", "SHOPARENA_MEMORY_MB"])
def test_a_bad_environment_value_is_one_line_and_exit_2(name, value, monkeypatch, tmp_path) -> None:
    """Issue 52: SHOPARENA_CPUS / SHOPARENA_MEMORY_MB of 0, -1 or abc ended in a traceback."""
    from typer.testing import CliRunner

    from shoparena.cli.main import app
    from shoparena.runs.machine import EnvValueError

    monkeypatch.setenv(name, value)
    with pytest.raises(EnvValueError, match=name):
        default_workers(1)
    args = ["catalog", "synth", "--products", "3", "--out", str(tmp_path / "c.jsonl")]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert result.stderr.strip() == f"error: {name}={value!r}: expected a positive integer"
