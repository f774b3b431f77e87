"""The whole pipeline config checked before the first stage (and on ``--dry-run``): every section's values
as the stage that consumes them will read them, so junk in ``firehose.options`` or ``sft.trainer`` fails in
seconds, naming the key, instead of after the firehose has spent its minutes.

The ``options`` sections hold further fields of another layer's config class, each typed by that class
(``runs.config.config_fields``: a misspelt or ill-typed key fails when the config loads); here they are
validated together as that class, with placeholders for the fields the stage fills in (paths of earlier
stages), and only the errors of the keys the user wrote are reported.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError


class PipelineConfigError(ValueError):
    """A pipeline.yaml that cannot be used; the message names the file and the field."""


#: Model names the model stage resolves itself (``train.models.resolve_model`` and the pipeline's student).
KNOWN_MODELS = ("student-word", "tiny", "student-cpu", "smollm2")
#: A Hugging Face Hub id (``org/name``): loaded by transformers, not checkable offline.
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


def _options(where: str, section: str, model: type[BaseModel], options: Any, fill: dict[str, Any]):
    """Validate ``options`` (a section's typed fields of ``model``, each checked when the config loaded)
    together as ``model`` (``fill``: the stage's own fields), so a rule over several fields holds too; raise
    on the first error that falls on a key of ``options``."""
    written = options.written()
    try:
        model.model_validate({**fill, **written})
    except ValidationError as exc:
        for err in exc.errors():
            loc = err["loc"]
            if loc and loc[0] in written:
                key = ".".join(str(p) for p in loc)
                raise PipelineConfigError(f"{where}: field {section}.{key}: {err['msg']}") from None


def _check_model_base(where: str, base: str, served: bool) -> None:
    if served or base in KNOWN_MODELS or Path(base).expanduser().is_dir() or _HUB_ID.match(base):
        return
    raise PipelineConfigError(
        f"{where}: field model.base: {base!r} is none of {', '.join(KNOWN_MODELS)}, a model folder, a hub id"
    )


def _check_trainer(where: str, config: Any) -> None:
    from shoparena.train.config import ConfigError, load_config

    try:
        cfg = load_config(config.sft.preset, "sft")
    except ConfigError as exc:
        raise PipelineConfigError(f"{where}: field sft.preset: {exc}") from None
    try:
        from shoparena.train.trl_configs import check_trainer
    except ImportError:  # no train extra here: the sft stage will say so itself
        return
    cfg = cfg.model_copy(update={"trainer": {**cfg.trainer, **config.sft.trainer}})
    try:
        check_trainer(cfg)
    except ConfigError as exc:
        raise PipelineConfigError(f"{where}: field sft.trainer: {exc}") from None


def partition_params(bank: Any) -> Any:
    """The ``PartitionParams`` of a pipeline ``bank`` section (the partitions stage and the size checks)."""
    from shoparena.suites.partition import PartitionParams

    return PartitionParams(
        seed=bank.seed,
        public_size=bank.public_size,
        public_versions=bank.public_versions,
        reserve=bank.reserve,
        heldout=bank.heldout,
        hidden=bank.hidden,
    )


def _check_sizes(where: str, config: Any) -> None:
    """Refuse pool sizes that leave the held-out pool empty (the partitions stage would fail on it)."""
    from shoparena.suites.partition import size_shortfalls

    bank = config.bank
    heldout = next(
        (s for s in size_shortfalls(bank.problems, partition_params(bank)) if s.pool == "heldout"), None
    )
    if heldout is not None and heldout.available <= 0:
        raise PipelineConfigError(
            f"{where}: field bank.heldout: {bank.heldout} held-out problems requested, but the "
            f"{bank.problems} problems of bank.problems go first to the public suites and the reserve "
            f"(public_size {bank.public_size} x public_versions {bank.public_versions} + reserve "
            f"{bank.reserve}): raise bank.problems or lower bank.public_size and bank.reserve"
        )


def size_warnings(config: Any) -> list[str]:
    """Sizes of ``config`` that the run cannot meet in full (it runs, with less): pools the bank cannot
    fill, races longer than their suite. One line each, naming the fields."""
    from shoparena.suites.partition import size_shortfalls

    bank = config.bank
    lines = [
        f"bank.problems {bank.problems}: pool {s.line()} (pools fill in order: public, reserve, held-out, "
        "hidden)"
        for s in size_shortfalls(bank.problems, partition_params(config.bank))
    ]
    # With extra pools (the student preset races the train pool) a longer race is what draws from them.
    if config.firehose.problems_per_race > bank.public_size and not config.firehose.extra_pools:
        lines.append(
            f"firehose.problems_per_race {config.firehose.problems_per_race} > bank.public_size "
            f"{bank.public_size}: each race runs the {bank.public_size} problems of its public suite at most"
        )
    return lines


def check_pipeline_config(config: Any, where: str) -> None:
    """Every section of ``config`` (a :class:`~shoparena.pipeline.config.PipelineConfig`) as its stage will
    use it.

    Raises:
        PipelineConfigError: naming ``where`` (the file or preset) and the first bad key.
    """
    from shoparena.arena.firehose import FirehoseConfig
    from shoparena.corpus.config import CorpusConfig
    from shoparena.eval.config import EvalConfig

    placeholder = Path("/nonexistent/shoparena-check")
    _options(
        where,
        "firehose.options",
        FirehoseConfig,
        config.firehose.options,
        {"suites": [placeholder], "index": placeholder, "out": placeholder},
    )
    _options(where, "corpus.options", CorpusConfig, config.corpus.options, {"out": placeholder})
    _options(
        where,
        "eval.options",
        EvalConfig,
        config.eval.options,
        {"policy": "planner", "suite": placeholder, "index": placeholder, "out": placeholder},
    )
    _check_sizes(where, config)
    _check_model_base(where, config.model.base, served=bool(config.eval.server))
    _check_trainer(where, config)


__all__ = ["KNOWN_MODELS", "PipelineConfigError", "check_pipeline_config", "size_warnings"]
