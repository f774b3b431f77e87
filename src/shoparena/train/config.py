"""Training configuration: a YAML file with ``model``, ``data``, optional ``lora``/``env`` and one TRL section
per method (``sft``, ``grpo``, ``kto``) passed through to TRL's own config classes (see :mod:`.trl_configs`).

The methods (``sft``, ``grpo``, ``kto``) are the entries of :data:`shoparena.train.methods.METHODS`; which
corpus view each reads by default is said once, by the view (:data:`shoparena.corpus.views.VIEWS`).

A file may start from a shipped preset with ``extends: <preset>``; ``--set key=value`` overrides any dotted
key afterwards (``--set sft.learning_rate=1e-4``). Importing this module does not import torch or TRL.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from shoparena.corpus.layout import PROBLEMS_NAME
from shoparena.corpus.views import VIEWS, method_views, normalize_selection
from shoparena.runs.config import deep_merge

Selection = Literal["kept", "kept+recovered", "kept+failed", "raw"]


def method_names() -> list[str]:
    """The training methods, in the order of the views that feed them."""
    return list(method_views())


class ConfigError(ValueError):
    """A bad training config: the message names the file and the field."""


class DataSection(BaseModel):
    """Which rows of which corpus view to train on (corpus contract, ``data.select``)."""

    model_config = ConfigDict(extra="forbid")

    corpus: str | None = Field(None, description="Corpus directory written by `shoparena corpus build`.")
    view: str | None = Field(None, description="A corpus view: sft | steps | kto (default: the method's).")
    split: str = "train"
    select: Selection = "kept"
    max_rows: int | None = Field(None, ge=1, description="Keep only N selected rows (smoke runs, budgets).")
    sample_seed: int | None = Field(
        None, description="With max_rows: a seeded uniform sample of the selected rows (None: the first N)."
    )
    repeat: dict[str, int] = Field(
        default_factory=dict,
        description="SFT: times each kept row of a category is trained per epoch (e.g. {shop: 3}), a "
        "curriculum that weighs the multi-item intents; 1 for categories not named.",
    )
    overlong: Literal["truncate", "drop"] = Field(
        "truncate",
        description="SFT rows longer than max_length: cut (TRL's way) or left out whole, counted "
        "(dropped['too_long']), so a student never trains on a conversation it is not evaluated on.",
    )
    render_profile: str | None = Field(
        None,
        description="Render profile the corpus must have been built with (None: whatever it was); a "
        "different one is refused.",
    )

    @field_validator("select", mode="before")
    @classmethod
    def _current_selection(cls, value: object) -> object:
        return normalize_selection(value)

    @field_validator("view")
    @classmethod
    def _known_view(cls, value: str | None) -> str | None:
        if value is not None and value not in VIEWS:
            raise ValueError(f"unknown corpus view {value!r}; known: {', '.join(VIEWS)}")
        return value


class LoraSection(BaseModel):
    """PEFT LoRA adapter (None = full fine-tune). ShoppingBench's variant targets q/k/v/o."""

    model_config = ConfigDict(extra="forbid")

    r: int = 16
    alpha: int = 32
    dropout: float = 0.05
    target_modules: list[str] = Field(default_factory=lambda: ["q_proj", "k_proj", "v_proj", "o_proj"])


class EnvSection(BaseModel):
    """Online GRPO: the shop the policy acts in."""

    model_config = ConfigDict(extra="forbid")

    index: str | None = Field(None, description="Search index directory (`shoparena search build`).")
    suite: str | None = Field(
        None, description=f"Suite file with the problems (default CORPUS/{PROBLEMS_NAME})."
    )
    max_steps: int = Field(6, ge=1, description="Tool-calling turns per rollout.")
    similarity: str = "lexical"


class TrainConfig(BaseModel):
    """The resolved training config (written to ``RUN/config.yaml``)."""

    model_config = ConfigDict(extra="forbid")

    method: str
    model: str = Field(description="tiny | smollm2 | a model folder | a hub id.")
    data: DataSection = Field(default_factory=DataSection)
    lora: LoraSection | None = None
    env: EnvSection = Field(default_factory=EnvSection)
    trainer: dict[str, Any] = Field(
        default_factory=dict, description="The TRL config section, passed through."
    )

    @field_validator("method")
    @classmethod
    def _known_method(cls, value: str) -> str:
        if value not in method_views():
            names = ", ".join(method_names())
            raise ValueError(f"unknown training method {value!r}; expected one of {names}")
        return value

    @property
    def view(self) -> str:
        return self.data.view or method_views()[self.method]


def preset_names() -> list[str]:
    """Shipped presets (package data ``shoparena/train/presets/*.yaml``)."""
    root = resources.files("shoparena.train") / "presets"
    return sorted(p.name.removesuffix(".yaml") for p in root.iterdir() if p.name.endswith(".yaml"))


def read_preset(name: str) -> dict[str, Any]:
    """The raw mapping of preset ``name``."""
    path = resources.files("shoparena.train") / "presets" / f"{name}.yaml"
    if not path.is_file():
        raise ConfigError(f"unknown training preset {name!r}; shipped: {', '.join(preset_names())}")
    return yaml.safe_load(path.read_text(encoding="utf-8")) or {}


def _read_mapping(source: str | Path, chain: tuple[str, ...] = ()) -> tuple[dict[str, Any], str]:
    """A config file, or a preset name when no such file exists (``chain``: the files and presets that
    extend it, so a cycle of ``extends`` is an error, not a RecursionError)."""
    path = Path(source)
    key = str(path.resolve()) if path.is_file() else f"preset {source}"
    if key in chain:
        names = " -> ".join([*chain[chain.index(key) :], key])
        raise ConfigError(f"{source}: extends: a cycle ({names})")
    if path.is_file():
        try:
            raw = yaml.safe_load(path.read_bytes().decode("utf-8")) or {}
        except UnicodeDecodeError as exc:
            raise ConfigError(f"{path}: not UTF-8 (byte {exc.start})") from None
        except yaml.YAMLError as exc:
            raise ConfigError(f"{path}: not valid YAML: {exc}") from exc
        label = str(path)
    else:
        raw, label = read_preset(str(source)), f"preset {source}"
    if not isinstance(raw, dict):
        raise ConfigError(f"{label}: expected a mapping at the top level")
    parent = raw.pop("extends", None)
    if parent:
        if not isinstance(parent, str):
            kind = type(parent).__name__
            raise ConfigError(f"{label}: extends: expected a preset name or a file, got {kind}")
        base, _ = _read_mapping(parent, (*chain, key))
        raw = deep_merge(base, raw)
    return raw, label


def resolved_preset(source: str | Path) -> dict[str, Any]:
    """The mapping a preset name or config file stands for, ``extends`` applied: what a pipeline stage hashes,
    so editing a preset file re-runs the stage instead of resuming work trained under the old one."""
    return _read_mapping(source)[0]


def apply_overrides(raw: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """Apply ``key.sub=value`` strings (values parsed as YAML scalars: ``1e-4``, ``true``, ``[a, b]``)."""
    out = copy.deepcopy(raw)
    for item in overrides:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ConfigError(f"--set {item!r}: expected key=value")
        node = out
        *parents, leaf = key.split(".")
        for part in parents:
            if node.get(part) is None:  # absent, or `lora: null` being switched on
                node[part] = {}
            node = node[part]
            if not isinstance(node, dict):
                raise ConfigError(f"--set {item!r}: {part} is not a section")
        node[leaf] = _scalar(value)
    return out


def _scalar(text: str) -> Any:
    """A YAML scalar, with ``1e-4`` read as a float (YAML 1.1 wants ``1.0e-4``)."""
    value = yaml.safe_load(text)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return value
    return value


def load_config(
    source: str | Path,
    method: str,
    overrides: list[str] | None = None,
    *,
    update: Mapping[str, Any] | None = None,
) -> TrainConfig:
    """Resolve a config file or preset for ``method``: presets merged, overrides applied, the method's TRL
    section lifted into ``trainer``.

    Args:
        overrides: ``key.sub=value`` strings of the command line (``train run --set``), values read as YAML.
        update: Typed values merged over the file after the overrides, as they are (the pipeline's SFT
            stage and the benchmarks: ``{"data": {"corpus": ...}, "trainer": {"run_name": "2024"}}``; a
            string stays a string, nothing goes through text).

    Raises:
        ConfigError: naming the file and the offending field.
    """
    names = method_names()
    if method not in names:
        raise ConfigError(f"unknown training method {method!r}; expected one of {', '.join(names)}")
    raw, label = _read_mapping(source)
    raw = apply_overrides(raw, overrides or [])
    if update:
        raw = deep_merge(raw, update)
    sections = {m: raw.pop(m, None) or {} for m in names}
    trainer_section = raw.pop("trainer", None) or {}
    for name, section in [*sections.items(), ("trainer", trainer_section)]:
        if not isinstance(section, dict):
            raise ConfigError(f"{label}: field {name}: expected a mapping, got {type(section).__name__}")
    trainer = deep_merge(sections[method], trainer_section)
    try:
        return TrainConfig.model_validate({**raw, "method": method, "trainer": trainer})
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ConfigError(f"{label}: field {where}: {first['msg']}") from exc
