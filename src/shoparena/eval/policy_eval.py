"""Evaluate a trained policy in one call: the pipeline's base and student evaluations and the benchmarks'
arms (``benchmarks/fidelity_bench.py``, ``student_curve.py``) go through :func:`evaluate_policy` with one
:class:`EvalSettings` (the pipeline's ``eval`` section is that model).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic.fields import FieldInfo

from shoparena.eval.config import EvalConfig
from shoparena.runs.config import config_fields

#: EvalConfig fields an evaluation of :func:`evaluate_policy` fills in itself (the policy, the suite, the
#: index, the run directory, the leak audit, the render profile): settings set none of them.
EVAL_STAGE_FIELDS = frozenset(
    {"policy", "suite", "index", "out", "train_corpus", "allow_leak", "render_profile"}
)


#: The fields of :attr:`EvalSettings.options`: every EvalConfig field but the settings' own and the
#: evaluation-filled ones.
EvalOptions = config_fields(
    EvalConfig,
    exclude=EVAL_STAGE_FIELDS | {"samples", "temperature", "max_tokens", "max_steps", "limit", "seed"},
    name="EvalOptions",
    doc="Further ``EvalConfig`` fields of an evaluation (typed; only the ones written are handed over).",
)


def eval_field(name: str, **overrides: Any) -> Any:
    """``EvalConfig``'s field ``name`` (type constraints and description) with ``overrides``: the settings
    declare no field of their own, only a default that differs."""
    return FieldInfo.merge_field_infos(EvalConfig.model_fields[name], **overrides)


class EvalSettings(BaseModel):
    """The settings of a policy's evaluation: ``EvalConfig``'s fields (:meth:`eval_config` builds it).

    Named here are the fields set often, with ``eval run``'s constraints and descriptions; the defaults
    that differ from ``eval run``'s, for a CPU day of small students, are ``max_tokens`` 200 (512),
    ``max_steps`` 6 (30) and, in ``options``, ``threads`` 2, ``concurrency`` 16 and ``max_batch`` 16
    (None, 4, 8). Every other EvalConfig field goes in ``options``; a key there that is a field of these
    settings or one the evaluation fills in is refused (it used to be overridden silently).
    """

    model_config = ConfigDict(extra="forbid")

    samples: int = eval_field("samples", default=1)
    temperature: float = eval_field("temperature", default=0.0)
    max_tokens: int = eval_field("max_tokens", default=200)
    max_steps: int = eval_field("max_steps", default=6)
    limit: int | None = eval_field("limit", default=None)
    seed: int = eval_field("seed", default=0)
    server: str | None = Field(
        default=None,
        description="OpenAI-compatible server (vLLM) of the policy: openai:URL#<model> instead of hf:DIR.",
    )
    # Two torch threads: the evaluations run alone, one after the other, each batching 16 episodes (a busy
    # host should pass threads 1: docs/fidelity.md measured 5.8 s vs 60 s for 6 unbatched episodes).
    options: EvalOptions = Field(  # type: ignore[valid-type]
        default_factory=lambda: EvalOptions.model_validate(
            {"threads": 2, "concurrency": 16, "max_batch": 16}
        ),
        description="Further EvalConfig fields as is (not this section's own nor the stage-filled ones).",
    )

    @field_validator("options", mode="before")
    @classmethod
    def _no_shadowed_keys(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        own = sorted(set(value) & (set(cls.model_fields) - {"options"}))
        if own:
            raise ValueError(f"{own}: set them on the eval section itself, not in options")
        filled = sorted(set(value) & EVAL_STAGE_FIELDS)
        if filled:
            raise ValueError(f"{filled}: the evaluation stages set these themselves")
        return value

    def eval_config(self, **stage: Any) -> EvalConfig:
        """The ``EvalConfig`` of one evaluation: ``options``, these settings' fields, then the ``stage``'s own
        fields (policy, suite, index, out, ...; ``executor``/``ray_address`` are defaults ``options`` may
        override)."""
        defaults = {key: stage.pop(key) for key in ("executor", "ray_address") if key in stage}
        named = self.model_dump(exclude={"server", "options"})
        return EvalConfig.model_validate({**defaults, **self.options.written(), **named, **stage})


class EvaluatedPolicy(BaseModel):
    """What one evaluation produced: its run directory, the policy spec, the run's label and the strict
    profile's overall estimates (``summary.json``)."""

    path: str
    policy: str
    label: str
    strict_overall: dict[str, Any]


def evaluate_policy(
    settings: EvalSettings,
    *,
    model: str,
    suite: str | Path,
    index: str | Path,
    out: str | Path,
    train_corpus: str | Path | None = None,
    allow_leak: bool = False,
    console: Any = None,
    executor: str = "process",
    ray_address: str | None = None,
    render_profile: str | None = None,
) -> EvaluatedPolicy:
    """Evaluate ``model`` (a folder, or a name the ``settings.server`` serves) on ``suite`` with
    ``settings`` (greedy + ``samples`` sampled episodes); resumable in ``out``.

    ``executor`` applies to a served model only (Ray workers as clients of one vLLM server): a local folder
    is evaluated in this process, where concurrent episodes share one batched generate instead of each Ray
    worker loading its own copy of the model.

    Raises:
        ModuleNotFoundError: an ``hf:`` policy without the ``train`` extra (transformers, torch).
    """
    from shoparena.eval.run import run_eval

    policy = f"openai:{settings.server}#{model}" if settings.server else f"hf:{model}"
    config = settings.eval_config(
        executor=executor if settings.server else "process",
        ray_address=ray_address,
        policy=policy,
        suite=Path(suite),
        index=Path(index),
        out=Path(out),
        train_corpus=Path(train_corpus) if train_corpus else None,
        allow_leak=allow_leak,
        render_profile=render_profile,
    )
    summary = run_eval(config, restart="changed").dump()
    overall = summary["profiles"]["strict"]["overall"]
    greedy = overall.get("greedy_asr") or overall.get("pass@1")
    if console is not None:
        console.print(
            f"{policy}: strict greedy ASR {greedy['value']:.3f} "
            f"[{greedy['ci_low']:.3f}, {greedy['ci_high']:.3f}] ({summary['label']})"
        )
    return EvaluatedPolicy(
        path=str(config.out), policy=policy, label=summary["label"], strict_overall=overall
    )


__all__ = [
    "EVAL_STAGE_FIELDS",
    "EvalOptions",
    "EvalSettings",
    "EvaluatedPolicy",
    "eval_field",
    "evaluate_policy",
]
