"""TRL's config classes, extended with the few shoparena fields (imported lazily: needs the train extra).

Defaults changed on purpose: activation (gradient) checkpointing is off (TRL turns it on;
12-33 % slower on small models); SFT uses the model's own cross-entropy instead of TRL's tiled LM head
(``fused_lm_head``); GRPO defaults to Dr. GRPO (``loss_type="dr_grpo"``,
``scale_rewards="none"``, ``beta=0``) with the per-step budget of ShoppingBench (1024 tokens) as
``max_completion_length``.
"""

from __future__ import annotations

import dataclasses
import typing
from dataclasses import dataclass, field
from typing import Any

from trl import GRPOConfig, KTOConfig, SFTConfig

from shoparena.train import methods
from shoparena.train.config import ConfigError, TrainConfig


def _weights_dtype_field() -> Any:
    return field(
        default="auto",
        metadata={
            "help": "Dtype the weights are loaded and trained in: auto = bfloat16 with bf16 (the GPU "
            "recipe), else float32; float32 with bf16 = mixed precision (bf16 autocast, fp32 master "
            "weights), for students trained from scratch, whose small updates bf16 weights would round away."
        },
    )


def weights_dtype(args: Any) -> str:
    """The dtype to load the model in for training ``args`` (see ``weights_dtype``)."""
    value = getattr(args, "weights_dtype", "auto")
    if value == "auto":
        return "bfloat16" if getattr(args, "bf16", False) else "float32"
    if value not in ("float32", "bfloat16"):
        raise ValueError(f"weights_dtype must be auto, float32 or bfloat16, got {value!r}")
    return value


@dataclass
class ShopSFTConfig(SFTConfig):
    """``SFTConfig``; the loss mask is built by shoparena (trainable assistant turns only): ``data.py``."""

    weights_dtype: str = _weights_dtype_field()
    activation_checkpointing: bool | None = field(
        default=False, metadata={"help": "Off: faster for small models."}
    )
    sparse_lm_head: bool = field(
        default=False,
        metadata={
            "help": "Apply the LM head only at positions with a label (the trainable assistant tokens): the "
            "same loss, without the vocabulary projection of prompt and tool tokens. For small students "
            "whose output layer is a large share of the work."
        },
    )
    fused_lm_head: bool = field(
        default=False,
        metadata={
            "help": "TRL's tiled LM head (log-probs, entropy and token accuracy without materialising the "
            "logits): saves memory on large vocabularies, but recomputes the head in backward. Off: the "
            "model's own cross-entropy (same loss; no entropy/accuracy metrics), ~2x faster SFT steps for "
            "the tiny model on CPU (benchmarks/train_bench.py). The GPU preset turns it on."
        },
    )


@dataclass
class ShopGRPOConfig(GRPOConfig):
    """``GRPOConfig`` with Dr. GRPO defaults and the shoparena reward switches."""

    loss_type: str = field(default="dr_grpo", metadata={"help": "Dr. GRPO: constant-normalised token sum."})
    scale_rewards: str = field(default="none", metadata={"help": "No std scaling (Dr. GRPO)."})
    beta: float = field(default=0.0, metadata={"help": "No KL term, no reference model."})
    max_completion_length: int | None = field(default=1024, metadata={"help": "The per-step budget."})
    weights_dtype: str = _weights_dtype_field()
    activation_checkpointing: bool | None = field(
        default=False, metadata={"help": "Off: faster for small models."}
    )
    max_prompt_tokens: int | None = field(
        default=None,
        metadata={
            "help": "Offline: drop longer step prompts (None: the tokenizer's context minus the completion)."
        },
    )
    grpo_mode: str = field(
        default="offline",
        metadata={
            "help": "offline: one step from teacher states (ToolRL reward); online: multi-turn in ShopEnv."
        },
    )
    outcome_weight: float = field(
        default=1.0, metadata={"help": "Online: weight of the strict outcome (0/1)."}
    )
    step_weight: float = field(
        default=0.5,
        metadata={"help": "Online: weight of per-step teacher agreement (mean R_correct/3, [-1, 1])."},
    )

    def __post_init__(self) -> None:
        if self.grpo_mode not in ("offline", "online"):
            raise ValueError(f"grpo_mode must be 'offline' or 'online', got {self.grpo_mode!r}")
        super().__post_init__()


@dataclass
class ShopKTOConfig(KTOConfig):
    """``KTOConfig`` with the label granularity switch (default ``trajectory``, see docs/training.md)."""

    kto_granularity: str = field(default="trajectory", metadata={"help": "trajectory | step"})
    weights_dtype: str = _weights_dtype_field()
    activation_checkpointing: bool | None = field(
        default=False, metadata={"help": "Off: faster for small models."}
    )

    def __post_init__(self) -> None:
        if self.kto_granularity not in ("trajectory", "step"):
            raise ValueError(f"kto_granularity must be 'trajectory' or 'step', got {self.kto_granularity!r}")
        super().__post_init__()


def config_class(method: str) -> type:
    """The TRL config class of training method ``method`` (its entry in :data:`.methods.METHODS`)."""
    return globals()[methods.method(method).config_class]


def _check_trainer_values(cls: type, cfg: TrainConfig) -> None:
    """Each ``trainer`` value against its TRL field's type, and the ranges TRL leaves open: the dataclasses
    check neither, so ``learning_rate: fast`` would fail only in the optimiser, after the data is prepared,
    and ``max_steps: -3`` would silently train by epochs."""
    from pydantic import TypeAdapter, ValidationError

    try:
        hints = typing.get_type_hints(cls)
    except Exception:  # an annotation that does not resolve here: leave the values to TRL
        hints = {}
    for key, value in cfg.trainer.items():
        hint = hints.get(key)
        if hint is None:
            continue
        try:
            adapter = TypeAdapter(hint)
        except Exception:  # a type pydantic cannot build a validator for: TRL checks it itself
            continue
        try:
            adapter.validate_python(value)
        except ValidationError as exc:
            raise ConfigError(f"{cfg.method}.{key}: {value!r}: {exc.errors()[0]['msg']}") from None
    steps = cfg.trainer.get("max_steps")
    if isinstance(steps, int) and steps != -1 and steps < 1:
        raise ConfigError(f"{cfg.method}.max_steps: {steps}: must be at least 1 (or -1: train by epochs)")


def check_trainer(cfg: TrainConfig) -> None:
    """The ``trainer`` section's keys and values against the method's TRL config, without building it (no
    device checks): what ``pipeline run --dry-run`` and :func:`build_trl_config` both run first.

    Raises:
        ConfigError: an unknown field, a value of the wrong type, or ``max_steps`` out of range (named).
    """
    cls = config_class(cfg.method)
    known = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(cfg.trainer) - known)
    if unknown:
        raise ConfigError(f"{cfg.method}: unknown {cls.__mro__[1].__name__} field(s) {unknown}")
    _check_trainer_values(cls, cfg)


def build_trl_config(cfg: TrainConfig, output_dir: str, **forced: Any) -> Any:
    """Instantiate the method's TRL config from the ``trainer`` section.

    Raises:
        ConfigError: an unknown or invalid TRL field (named).
    """
    cls = config_class(cfg.method)
    check_trainer(cfg)
    kwargs = {"report_to": "none", **cfg.trainer, **forced, "output_dir": output_dir}
    try:
        return cls(**kwargs)
    except (ValueError, TypeError) as exc:
        raise ConfigError(f"{cfg.method}: {exc}") from exc
