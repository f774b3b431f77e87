"""Train a policy on a corpus view in one call: the pipeline's SFT stage and the benchmarks' arms
(``benchmarks/fidelity_bench.py``, ``kto_pilot.py``) go through :func:`train_policy`; :func:`base_model_path`
is the base model as evaluation loads it.

The run's settings reach :func:`shoparena.train.config.load_config` as typed values (``update``), never as
``key=value`` strings: ``trainer: {run_name: "2024"}`` reaches TRL as the string it was.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

if TYPE_CHECKING:
    from shoparena.train.config import TrainConfig

#: A count or a rate as the trainer computed it (an int stays an int).
Number = int | float


class TrainedPolicy(BaseModel):
    """What one training run produced: its directory, the final model folder, the last loss and step, and
    what became of the corpus rows (``summary.json``'s ``data``)."""

    path: str
    final: str
    train_loss: Number | None
    global_step: int | None
    rows: dict[str, Any]


@contextmanager
def torch_threads(threads: int | None) -> Iterator[None]:
    """Torch's intra-op thread count set to ``threads`` for the block (None: left as it is)."""
    if threads is None:
        yield
        return
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def policy_config(
    *,
    method: str,
    preset: str | Path,
    model: str,
    corpus: str | Path,
    select: str,
    trainer: Mapping[str, Any],
    max_rows: int | None = None,
    sample_seed: int | None = None,
) -> TrainConfig:
    """The :class:`TrainConfig` :func:`train_policy` trains with: ``preset`` for ``method`` with the model,
    the corpus view's rows and the ``trainer`` fields laid over it as typed values.

    Raises:
        ConfigError: naming the preset and the field.
    """
    from shoparena.train.config import load_config

    data: dict[str, Any] = {"corpus": str(corpus), "select": select}
    if max_rows is not None:
        data["max_rows"] = max_rows
    if sample_seed is not None:
        data["sample_seed"] = sample_seed
    return load_config(preset, method, update={"model": model, "data": data, "trainer": dict(trainer)})


def train_policy(
    *,
    method: str,
    preset: str,
    model: str,
    corpus: str | Path,
    select: str,
    trainer: dict[str, Any],
    out: str | Path,
    max_rows: int | None = None,
    sample_seed: int | None = None,
    threads: int | None = None,
    say: Callable[[str], Any] | None = None,
) -> TrainedPolicy:
    """Train ``model`` on a corpus view with ``shoparena.train`` (SFT, GRPO or KTO); resumable in ``out``.

    ``trainer``: TRL config fields over the preset's (TRL's dataclass validates them); ``max_rows`` keeps N
    selected rows: the first N, or a seeded uniform sample with ``sample_seed``; ``threads``: torch intra-op
    threads while it trains (None: torch's default); ``say``: called with the training's own lines
    (processes and batch; what became of the rows: used, truncated, dropped).

    Raises:
        ModuleNotFoundError: the ``train`` extra (torch, TRL) is not installed.
    """
    from shoparena.train.layout import TrainRun
    from shoparena.train.runner import train

    config = policy_config(
        method=method,
        preset=preset,
        model=model,
        corpus=corpus,
        select=select,
        trainer=trainer,
        max_rows=max_rows,
        sample_seed=sample_seed,
    )
    with torch_threads(threads):
        summary = train(config, out, progress=True, restart="changed", say=say)
    return TrainedPolicy(
        path=str(out),
        final=str(TrainRun.at(out).final_dir),
        train_loss=summary.get("train_loss"),
        global_step=summary.get("global_step"),
        rows=summary.get("data", {}),
    )


def base_model_path(name: str, served: bool) -> str:
    """The base model as evaluation loads it: a built local folder for tiny/student-cpu/smollm2, the name
    itself when a server serves it (or for a folder or hub id)."""
    if served:
        return name
    from shoparena.train.models import resolve_model

    return resolve_model(name)


__all__ = ["TrainedPolicy", "base_model_path", "policy_config", "torch_threads", "train_policy"]
