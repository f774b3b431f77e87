"""Training under a multi-process launcher (``torchrun``, ``accelerate launch``): one writer, the rest follow.

Every process runs :func:`shoparena.train.runner.train`. The main process (global rank 0) alone claims,
checks and writes the run directory; the others never open it for writing: they wait for the main process's
decision (:func:`from_main`) and get its outcome, or its refusal, which they raise as their own. The trainer
writes its checkpoints as it always does (the model and optimizer from the main process; each process its
``rng_state_<rank>.pth``, and its shard under FSDP).

Works with one process too (no launcher): every helper then does nothing but return its input. Importing
this module does not import torch.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from shoparena.runs.identity import RunDirError
from shoparena.train.config import ConfigError


@dataclass(frozen=True)
class Processes:
    """The training processes this one belongs to (from the launcher's environment and the trainer's
    ``PartialState``)."""

    count: int = 1
    rank: int = 0
    backend: str | None = None
    device: str = "cpu"
    launcher: str = "none"
    sharded: bool = False  # FSDP: each process holds a shard of the weights
    deepspeed: bool = False  # launched with a DeepSpeed config
    fsdp_ignored: bool = False  # an FSDP config on CPU processes, which accelerate trains with DDP

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    def describe(self, per_process_batch: int, accumulation: int) -> str:
        """One line: how many processes train, on what, and the global batch this makes."""
        plural = "es" if self.count != 1 else ""
        how = f"{self.launcher}, {self.backend} on {self.device}" if self.count > 1 else self.device
        batch = global_batch(per_process_batch, accumulation, self.count)
        line = (
            f"train: {self.count} process{plural} ({how}); global batch {batch} = {per_process_batch} per "
            f"process x {self.count} x {accumulation} accumulation step(s)"
        )
        if self.sharded:
            line += "; FSDP (weights sharded)"
        elif self.deepspeed:
            line += "; DeepSpeed"
        elif self.count > 1:
            line += "; DDP (full weights in every process)"
        if self.fsdp_ignored:
            line += (
                "; the FSDP config is not applied: accelerate shards with FSDP on GPUs only, CPU processes "
                "run DDP"
            )
        if self.count == 1 and self.launcher == "accelerate":
            line += (
                "; accelerate launch started one process (with --cpu it always does, whatever "
                "--num_processes says): for several CPU processes use torchrun --nproc_per_node N "
                "(docs/training.md)"
            )
        return line


def global_batch(per_process_batch: int, accumulation: int, processes: int) -> int:
    """Rows per optimizer step over all processes."""
    return per_process_batch * accumulation * processes


def launcher_name(env: dict[str, str] | None = None) -> str:
    """``torchrun``, ``accelerate launch via torchrun`` (its launcher for several processes), ``accelerate``
    (its one-process launcher, which ``--cpu`` always picks) or ``none``."""
    env = dict(os.environ) if env is None else env
    accelerate = "ACCELERATE_USE_CPU" in env or "ACCELERATE_MIXED_PRECISION" in env
    if "TORCHELASTIC_RUN_ID" in env or "LOCAL_WORLD_SIZE" in env:
        return "accelerate launch via torchrun" if accelerate else "torchrun"
    return "accelerate" if accelerate else "none"


def launched_rank(env: dict[str, str] | None = None) -> int:
    """This process's global rank as the launcher set it (0 without a launcher): what the CLI needs to
    print only once, before any process group exists."""
    env = dict(os.environ) if env is None else env
    try:
        return int(env.get("RANK", "0"))
    except ValueError:
        return 0


def _fsdp_requested(args: Any) -> bool:
    return os.environ.get("ACCELERATE_USE_FSDP", "false").lower() == "true" or bool(getattr(args, "fsdp", ""))


def processes_of(args: Any) -> Processes:
    """The processes of a training run configured by the TRL ``args``; under a launcher this starts the
    process group (gloo on CPU, NCCL on CUDA), exactly as the trainer would.

    Raises:
        ConfigError: the launcher started more processes than the trainer can join (no GPU and no
            ``use_cpu``: each process would train alone).
    """
    args.device  # noqa: B018 (sets up the distributed state, once per args)
    state = args.distributed_state
    count = state.num_processes if state is not None else 1
    launched = int(os.environ.get("WORLD_SIZE", "1") or 1)
    if launched > count:
        raise ConfigError(
            f"the launcher started {launched} processes but the trainer joins {count}: without a GPU set "
            f"use_cpu: true in the method's section (--set <method>.use_cpu=true) for the gloo backend"
        )
    if state is None or count <= 1:
        return Processes(device=args.device.type, launcher=launcher_name())
    # accelerate shards with FSDP only on GPU-type process groups; on CPU processes it runs DDP.
    on_cpu = state.distributed_type.value == "MULTI_CPU"
    return Processes(
        count=count,
        rank=state.process_index,
        backend=state.backend,
        device=state.device.type,
        launcher=launcher_name(),
        sharded=_fsdp_requested(args) and not on_cpu,
        fsdp_ignored=_fsdp_requested(args) and on_cpu,
        deepspeed=os.environ.get("ACCELERATE_USE_DEEPSPEED", "false").lower() == "true"
        or bool(getattr(args, "deepspeed", None)),
    )


class MainProcessError(RuntimeError):
    """The main process failed before training (not a refusal: a bug or an environment error)."""


_RAISED = {"RunDirError": RunDirError, "ConfigError": ConfigError}


def from_main(procs: Processes, decide: Any) -> Any:
    """Run ``decide()`` on the main process only and hand its result to every process.

    A :class:`RunDirError` or :class:`ConfigError` (or a subclass) of the main process is raised on every
    process with the same message (so each exits 2 instead of hanging on a collective); anything else
    becomes a :class:`MainProcessError` on the others.
    """
    if procs.count <= 1:
        return decide()
    from accelerate.utils import broadcast_object_list

    if procs.is_main:
        try:
            result = decide()
        except Exception as exc:
            # A refusal's subclass (RunLockedError: another launch holds --out) travels as its base class,
            # so every process exits 2 on it, not only the main one.
            name = next((n for n, kind in _RAISED.items() if isinstance(exc, kind)), type(exc).__name__)
            broadcast_object_list([("error", name, str(exc))])
            raise
        broadcast_object_list([("ok", result)])
        return result
    box: list[Any] = [None]
    broadcast_object_list(box)
    outcome = box[0]
    if outcome[0] == "ok":
        return outcome[1]
    _, name, message = outcome
    raise _RAISED.get(name, MainProcessError)(message if name in _RAISED else f"{name}: {message}")


def check_same_everywhere(procs: Processes, what: str, value: Any) -> None:
    """Raise on every process when ``value`` (e.g. the prepared data's hash) differs between processes.

    Raises:
        ConfigError: naming ``what`` and the processes that disagree with the main one.
    """
    if procs.count <= 1:
        return
    from accelerate.utils import gather_object

    values = gather_object([value])
    differ = [rank for rank, item in enumerate(values) if item != values[0]]
    if differ:
        raise ConfigError(
            f"{what} differs between processes: process(es) {differ} got {values[differ[0]]!r}, the main "
            f"process {values[0]!r} (each process must read the same inputs at the same paths)"
        )


def wait_for_all(procs: Processes) -> None:
    """A barrier (nothing with one process)."""
    if procs.count > 1:
        from accelerate import PartialState

        PartialState().wait_for_everyone()


def leave_process_group() -> None:
    """Wait for every process, then leave the process group. A gloo group left to interpreter exit can abort
    a process whose work is done ("terminate called without an active exception", seen once in CI)."""
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        dist.barrier()
        dist.destroy_process_group()


__all__ = [
    "MainProcessError",
    "Processes",
    "check_same_everywhere",
    "from_main",
    "global_batch",
    "launched_rank",
    "launcher_name",
    "leave_process_group",
    "processes_of",
    "wait_for_all",
]
