"""The fidelity run's design (``benchmarks/configs/fidelity.yaml``) as a typed record, and its tables.

Kept apart from ``fidelity_bench.py`` (which runs it) so the design's checks and the table code are tested
offline in seconds (``tests/benchmarks/test_fidelity_design.py``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from shoparena.corpus.views import SELECTIONS
from shoparena.runs.config import deep_merge

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DESIGN = ROOT / "benchmarks" / "configs" / "fidelity.yaml"
#: The paired differences the paper's argument needs (issue 33): each must be in a design's ``pairs``.
REQUIRED_PAIRS = (
    ("sft-raw", "sft-filtered"),
    ("sft-synthetic", "sft-filtered"),
    ("sft-filtered", "sft-recovered"),
    ("sft-filtered", "grpo"),
    ("sft-filtered", "kto"),
)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class ArmSpec(_Strict):
    """One arm: an optional training step (from the base, or from another arm's model) and an evaluation."""

    method: Literal["sft", "grpo", "kto"] | None = Field(None, description="None: evaluate the start model.")
    select: str = "kept"
    start: str | None = Field(None, alias="from", description="Start from this arm's model (default: base).")
    corpus: Literal["firehose", "synthetic"] = "firehose"
    suite: Literal["heldout", "leaked"] = Field(
        "heldout", description="leaked: the corpus's own train problems (allow_leak), labelled leaked."
    )
    trainer: dict[str, Any] | None = Field(
        None, description="TRL fields (SFT arms: the pipeline's sft.trainer)."
    )

    @model_validator(mode="after")
    def _known_selection(self) -> ArmSpec:
        if self.select not in SELECTIONS:
            raise ValueError(f"select {self.select!r}: not one of {', '.join(SELECTIONS)}")
        return self


class PassAtK(_Strict):
    samples: int = Field(ge=1)
    temperature: float = Field(gt=0)
    limit: int = Field(ge=1)
    arms: list[str] = Field(default_factory=list)


class SyntheticSpec(_Strict):
    agent: str = "planner"
    max_steps: int = Field(30, ge=1)


class FidelityDesign(_Strict):
    """``benchmarks/configs/fidelity.yaml``."""

    pipeline: dict[str, Any]
    quick: dict[str, Any] = Field(default_factory=dict)
    equal_rows: str | None = Field(
        "kept", description="SFT arms train on as many rows as this selection has."
    )
    sample_seed: int = 0
    synthetic: SyntheticSpec = Field(default_factory=SyntheticSpec)
    pass_at_k: PassAtK
    quick_pass_at_k: PassAtK
    arms: dict[str, ArmSpec]
    quick_arms: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="--quick: fields merged over these arms (e.g. fewer GRPO steps)."
    )
    pairs: list[tuple[str, str]]

    @model_validator(mode="after")
    def _arms_exist(self) -> FidelityDesign:
        names = set(self.arms)
        for name, arm in self.arms.items():
            if arm.start is not None and arm.start not in names:
                raise ValueError(f"arms.{name}.from: no arm {arm.start!r}")
            if arm.start == name:
                raise ValueError(f"arms.{name}.from: an arm cannot start from itself")
        referenced = (
            [x for pair in self.pairs for x in pair] + self.pass_at_k.arms + self.quick_pass_at_k.arms
        )
        unknown = sorted(set(referenced) - names)
        if unknown:
            raise ValueError(f"pairs / pass_at_k name unknown arms {unknown}")
        stray = sorted(set(self.quick_arms) - names)
        if stray:
            raise ValueError(f"quick_arms name unknown arms {stray}")
        if self.equal_rows is not None and self.equal_rows not in SELECTIONS:
            raise ValueError(f"equal_rows {self.equal_rows!r}: not one of {', '.join(SELECTIONS)}")
        return self

    def pipeline_config(self, quick: bool) -> dict[str, Any]:
        """The pipeline section, with the ``quick`` overlay merged in for ``--quick``."""
        return deep_merge(self.pipeline, self.quick) if quick else dict(self.pipeline)

    def arms_for(self, quick: bool) -> dict[str, ArmSpec]:
        """The arms, with the ``quick_arms`` overlays merged in for ``--quick``."""
        if not quick:
            return dict(self.arms)
        return {
            name: ArmSpec.model_validate(
                deep_merge(arm.model_dump(by_alias=True, exclude_none=True), self.quick_arms.get(name, {}))
            )
            for name, arm in self.arms.items()
        }

    def sampled(self, quick: bool) -> PassAtK:
        return self.quick_pass_at_k if quick else self.pass_at_k

    def missing_pairs(self) -> list[tuple[str, str]]:
        """The issue's required pairs this design does not compare."""
        have = {tuple(p) for p in self.pairs}
        return [p for p in REQUIRED_PAIRS if p not in have]


def load_design(path: str | Path = DEFAULT_DESIGN) -> FidelityDesign:
    """The design file as a :class:`FidelityDesign`.

    Raises:
        ValueError: one line naming the file and the field.
    """
    try:
        raw = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
        return FidelityDesign.model_validate(raw)
    except (OSError, yaml.YAMLError) as exc:
        raise ValueError(f"{path}: {exc}") from None
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top)"
        raise ValueError(f"{path}: field {where}: {first['msg']}") from None


def _pct(est: dict[str, float] | None) -> str:
    if not est:
        return "-"
    return f"{100 * est['value']:.1f} [{100 * est['ci_low']:.1f}, {100 * est['ci_high']:.1f}]"


def _diff(d: dict[str, float] | None) -> str:
    if not d:
        return "-"
    return f"{100 * d['diff']:+.1f} [{100 * d['ci_low']:+.1f}, {100 * d['ci_high']:+.1f}]"


def _mcnemar(m: dict[str, Any] | None) -> str:
    return f"{m['a_only']}/{m['b_only']}, p={m['p_value']:.3g}" if m else "-"


def _greedy(overall: dict[str, Any]) -> dict[str, float] | None:
    return overall.get("greedy_asr") or overall.get("pass@1")


def _estimate(overall: dict[str, Any], key: str) -> dict[str, float] | None:
    if key.startswith("pass@") and key != "pass@1":
        return overall.get("pass@k", {}).get(key[5:])
    return overall.get(key)


def arm_table(result: dict[str, Any]) -> list[str]:
    """Every arm beside the shortcut floor on the same problems (search the request verbatim, recommend the
    top hit), with the arm's paired difference to it: a corpus that only teaches the shortcut taught
    nothing."""
    pk = result.get("pass_at_k", {})
    n = pk.get("samples", 1)
    lines = [
        f"| arm | label | greedy ASR % | shortcut % (same problems) | arm − shortcut [95 % CI] |"
        f" McNemar shortcut-only/arm-only, p | pass@1 % (slice) | pass@{n} % (slice) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, arm in result["arms"].items():
        o, sampled = arm["strict_overall"], arm.get("sampled") or {}
        floor = arm.get("vs_shortcut") or {}
        g = floor.get("greedy")
        shortcut = f"{g['a_only'] + g['both']}/{floor['problems']}" if g else "-"
        lines.append(
            f"| {name} | {arm['label']} | {_pct(_greedy(o))} | {shortcut} | {_diff(floor.get('greedy_asr'))}"
            f" | {_mcnemar(g)} | {_pct(sampled.get('pass@1'))}"
            f" | {_pct(_estimate(sampled, f'pass@{n}') if sampled else None)} |"
        )
    return lines


def pair_table(result: dict[str, Any]) -> list[str]:
    """The design's paired differences (b − a): problem bootstrap interval and exact McNemar, greedy."""
    lines = [
        "| paired difference (strict, b − a) | greedy ASR diff % [95 % CI] | McNemar a-only/b-only, p"
        " | pass@1 diff % [95 % CI] | problems |",
        "|---|---|---|---|---|",
    ]
    for name, comp in result["comparisons"].items():
        lines.append(
            f"| {name} | {_diff(comp.get('greedy_asr'))} | {_mcnemar(comp.get('greedy'))}"
            f" | {_diff(comp.get('pass_at_1'))} | {comp['problems']} |"
        )
    return lines


def markdown(result: dict[str, Any]) -> str:
    """The docs section of a run's ``fidelity.json`` (stopped or complete)."""
    ev = result["config"]["eval"]
    pk = result.get("pass_at_k", {})
    n = pk.get("samples", 1)
    synthetic = result.get("synthetic")
    status = (
        "complete"
        if result.get("complete")
        else "INCOMPLETE: stopped, the arms below are those that finished"
    )
    lines = [
        f"Measured {result['date']} on {result['machine']} ({result['mode']}, {status};"
        f" {result.get('seconds')} s; nice {result.get('nice')}, torch threads {result.get('torch_threads')},"
        f" load average {result.get('load_start')} at start, {result.get('load_now')} at the end):",
        f"`{result['command']}`. Suite: the held-out partition, {result.get('heldout', {}).get('problems')}"
        f" problems (evaluated: {ev['limit'] or 'all'}); strict profile; 95 % intervals (Wilson for greedy"
        f" ASR, problem bootstrap otherwise). Decoding: greedy, max {ev['max_tokens']} new tokens per"
        f" turn, max {ev['max_steps']} steps; pass@k columns: {n} samples at T={pk.get('temperature')}"
        f" on the first {pk.get('limit')} held-out problems, for {', '.join(pk.get('arms', []))} only.",
        "",
        *arm_table(result),
        "",
        *pair_table(result),
    ]
    tf = result.get("teacher_forced")
    if tf:
        lines += [
            "",
            f"Teacher-forced, on the corpus's `{tf['split']}` split ({tf['select']} rows, never trained on;"
            " not the held-out suite): how well each model predicts the teacher's actions, over the"
            " trainable assistant tokens (rows truncated like SFT's). Paired differences: row bootstrap,"
            " 95 % intervals.",
            "",
            "| arm | rows | tokens | NLL nats/token | next-token accuracy |",
            "|---|---|---|---|---|",
        ]
        for name, arm in tf["arms"].items():
            lines.append(
                f"| {name} | {arm['rows']} | {arm['tokens']} | {arm['nll']:.3f} | {arm['accuracy']:.3f} |"
            )
        lines += ["", "| b − a | NLL diff [95 % CI] | accuracy diff [95 % CI] | rows |", "|---|---|---|---|"]
        for name, p in tf["pairs"].items():
            lo, hi = p["nll_ci"]
            alo, ahi = p["accuracy_ci"]
            lines.append(
                f"| {name} | {p['nll_diff']:.3f} [{lo:.3f}, {hi:.3f}]"
                f" | {p['accuracy_diff']:.3f} [{alo:.3f}, {ahi:.3f}] | {p['rows']} |"
            )
    trained = {k: v["train"] for k, v in result["arms"].items() if "train" in v}
    lines += [
        "",
        f"SFT rows per selection: {result.get('rows_per_selection')}; every SFT arm:"
        f" {result.get('equal_rows')} rows (a seeded sample where a selection has more) and the same"
        f" optimiser steps (trainer {result['config']['sft']['trainer']}). Corpus funnel:"
        f" {result.get('corpus_funnel')}.",
        f"Synthetic corpus (reference planner on the corpus's train problems, strict rejection sampling):"
        f" {synthetic.get('funnel') if synthetic else '-'}.",
        "Training (final loss / optimiser steps / rows used, dropped; raw: envelopes skipped, by reason): "
        + "; ".join(
            f"{k} {v.get('train_loss'):.3g} / {v.get('global_step')} / {(v.get('rows') or {}).get('used')},"
            f" {(v.get('rows') or {}).get('dropped')}"
            + (f", skipped {v['rows']['skipped']}" if (v.get("rows") or {}).get("skipped") else "")
            for k, v in trained.items()
        )
        + ".",
        f"Seconds: shared stages {result.get('seconds_shared')}; per arm (training + evaluation)"
        f" {result.get('seconds_per_arm')}.",
    ]
    return "\n".join(lines)


__all__ = [
    "DEFAULT_DESIGN",
    "REQUIRED_PAIRS",
    "ArmSpec",
    "FidelityDesign",
    "arm_table",
    "load_design",
    "markdown",
    "pair_table",
]
