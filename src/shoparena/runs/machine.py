"""What this machine offers to a worker count: the CPUs this process may use and the memory available.

Every command with a worker count (``arena firehose``, ``arena run``, ``arena race``, ``catalog synth``,
``episodes run``, the pipeline) leaves it unset by default and takes :func:`default_workers` of its own unit:
as many units as usable CPUs times the units a CPU keeps busy, no more than the available memory holds at
the unit's budget, at least one. A flag or config field overrides it. docs/scale.md lists each command's
units and budgets.

"Usable CPUs" is the smallest of the CPU affinity mask (``taskset``, a container's cpuset) and a cgroup v2
CPU quota (``cpu.max``, rounded up); "available memory" the smaller of ``MemAvailable`` and what a cgroup
v2 memory limit leaves (``memory.max`` less ``memory.current``). ``SHOPARENA_CPUS`` and
``SHOPARENA_MEMORY_MB`` replace either reading (a shared host, a test).
"""

from __future__ import annotations

import math
import os
from pathlib import Path

_CGROUP = Path("/sys/fs/cgroup")
MIB = 1024 * 1024


class EnvValueError(ValueError):
    """An environment variable with a value the program cannot use (one line naming it; exit 2 at the CLI)."""


def _env_int(name: str) -> int | None:
    value = os.environ.get(name, "").strip()
    if not value:
        return None
    try:
        number = int(value)
    except ValueError:
        raise EnvValueError(f"{name}={value!r}: expected a positive integer") from None
    if number < 1:
        raise EnvValueError(f"{name}={value!r}: expected a positive integer")
    return number


def _cgroup_cpu_quota(root: Path = _CGROUP) -> int | None:
    try:
        text = (root / "cpu.max").read_text()
        quota, period = text.split()[:2]
    except (OSError, ValueError):
        return None
    if quota == "max":
        return None
    try:
        return max(1, math.ceil(int(quota) / int(period)))
    except (ValueError, ZeroDivisionError):
        return None


def usable_cpus(cgroup: Path = _CGROUP) -> int:
    """CPUs this process may run on (``SHOPARENA_CPUS`` if set)."""
    override = _env_int("SHOPARENA_CPUS")
    if override is not None:
        return override
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    quota = _cgroup_cpu_quota(cgroup)
    return max(1, min(cpus, quota) if quota else cpus)


def _meminfo_available(meminfo: Path = Path("/proc/meminfo")) -> int | None:
    try:
        text = meminfo.read_text()
        for line in text.split("\n"):
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def _cgroup_memory_left(root: Path = _CGROUP) -> int | None:
    try:
        limit = (root / "memory.max").read_text().strip()
        if limit == "max":
            return None
        return max(0, int(limit) - int((root / "memory.current").read_text().strip()))
    except (OSError, ValueError):
        return None


def available_memory(cgroup: Path = _CGROUP, meminfo: Path = Path("/proc/meminfo")) -> int | None:
    """Bytes of memory a new process can take without swapping (``SHOPARENA_MEMORY_MB`` if set); None:
    unknown (no ``/proc/meminfo``)."""
    override = _env_int("SHOPARENA_MEMORY_MB")
    if override is not None:
        return override * MIB
    readings = [m for m in (_meminfo_available(meminfo), _cgroup_memory_left(cgroup)) if m is not None]
    return min(readings) if readings else None


def default_workers(unit_memory_bytes: int, *, per_cpu: int = 1, cpus: int | None = None,
                    memory_bytes: int | None = None) -> int:  # fmt: skip
    """Units to run at once: ``per_cpu`` per usable CPU, as many as the available memory holds at
    ``unit_memory_bytes`` each, at least one.

    Args:
        unit_memory_bytes: What one unit (a process, a sandbox) needs resident.
        per_cpu: Units one CPU keeps busy (more than one for units that mostly wait).
        cpus: Usable CPUs (default: :func:`usable_cpus`).
        memory_bytes: Available memory (default: :func:`available_memory`; unknown: no memory limit).
    """
    if unit_memory_bytes < 1 or per_cpu < 1:
        raise ValueError("unit_memory_bytes and per_cpu must be >= 1")
    by_cpu = (cpus if cpus is not None else usable_cpus()) * per_cpu
    memory = memory_bytes if memory_bytes is not None else available_memory()
    by_memory = by_cpu if memory is None else memory // unit_memory_bytes
    return max(1, min(by_cpu, by_memory))


__all__ = ["MIB", "EnvValueError", "available_memory", "default_workers", "usable_cpus"]
