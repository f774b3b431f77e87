"""The training methods (SFT, Dr. GRPO offline/online, KTO): one :class:`TrainMethod` entry each in
:data:`METHODS`, with its TRL config class, its data preparation and its trainer.

Adding a method is one entry here (and a corpus view that names it: :data:`shoparena.corpus.views.VIEWS`);
``tests/corpus/test_views.py`` checks that the two tables agree.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shoparena.corpus.layout import CorpusRun
from shoparena.corpus.views import EVERY_TURN_SELECTIONS, method_views
from shoparena.train.config import ConfigError, TrainConfig
from shoparena.train.data import (
    DataReport,
    kto_balance,
    prepare_grpo_offline,
    prepare_grpo_online,
    prepare_kto,
    prepare_sft,
    step_prompts,
)


def _prepare_sft(cfg: TrainConfig, args: Any, rows: Any, tokenizer: Any, report: DataReport) -> Any:
    data = cfg.data
    return prepare_sft(
        rows,
        tokenizer,
        report,
        max_length=args.max_length,
        overlong=data.overlong,
        repeat=data.repeat,
        every_turn=data.select in EVERY_TURN_SELECTIONS,
    )


def _prepare_grpo(cfg: TrainConfig, args: Any, rows: Any, tokenizer: Any, report: DataReport) -> Any:
    prompts = step_prompts(cfg.data, rows)  # the steps view keeps each prompt once, in the sft view
    if args.grpo_mode == "online":
        return prepare_grpo_online(rows, report, prompts=prompts)
    limit = grpo_prompt_limit(args, tokenizer)
    return prepare_grpo_offline(rows, tokenizer, report, max_prompt_tokens=limit, prompts=prompts)


def _prepare_kto(cfg: TrainConfig, args: Any, rows: Any, tokenizer: Any, report: DataReport) -> Any:
    dataset = prepare_kto(rows, report, granularity=args.kto_granularity)
    # TRL's default weights (1, 1) are off for a corpus with fewer kept rows than failures; set them from the
    # balance of the rows actually trained (docs/training.md, "KTO").
    kto_balance(list(dataset["label"]), args, cfg.trainer, report)
    return dataset


def prepare(cfg: TrainConfig, args: Any, rows: Any, tokenizer: Any, report: DataReport) -> Any:
    """The method's training dataset from the selected view rows."""
    return method(cfg.method).prepare(cfg, args, rows, tokenizer, report)


def grpo_prompt_limit(args: Any, tokenizer: Any) -> int | None:
    """``grpo.max_prompt_tokens``, else the tokenizer's context length minus the completion budget."""
    if args.max_prompt_tokens is not None:
        return args.max_prompt_tokens
    context = getattr(tokenizer, "model_max_length", None)
    if not isinstance(context, int) or context > 1_000_000:  # transformers' "no limit" sentinel
        return None
    return max(1, context - (args.max_completion_length or 0))


def _online_parts(cfg: TrainConfig, args: Any) -> tuple[Any, list[Any], list[float]]:
    from shoparena.scoring.bench import ScoringBench
    from shoparena.search import SearchIndex
    from shoparena.suites.loaders import load_suite
    from shoparena.train.data import corpus_render_profile
    from shoparena.train.online import environment_factory, outcome_reward_func, teacher_agreement

    if not cfg.env.index:
        raise ConfigError("env.index: online GRPO needs a search index directory (--set env.index=DIR)")
    suite = cfg.env.suite or (str(CorpusRun.at(cfg.data.corpus).problems_path) if cfg.data.corpus else None)
    if not suite or not Path(suite).is_file():
        raise ConfigError(f"env.suite: no suite file for online GRPO ({suite})")
    engine = SearchIndex.open(cfg.env.index)
    problems, _ = load_suite(suite)
    factory = environment_factory(engine, problems, cfg.env.max_steps, corpus_render_profile(cfg))
    rewards = [outcome_reward_func(ScoringBench(problems, engine, cfg.env.similarity)), teacher_agreement]
    return factory, rewards, [args.outcome_weight, args.step_weight]


def sft_trainer_class() -> type:
    """``trl.SFTTrainer`` whose training loss is the model's own cross-entropy unless ``args.fused_lm_head``.

    TRL's SFT loss runs a tiled LM head that also yields entropy and token accuracy; on CPU it recomputes the
    head in backward, which doubled the step of the tiny model. The loss is the same token mean (labels
    −100 ignored, ``num_items_in_batch`` honoured), and ``num_tokens`` is still logged.
    """
    from transformers import Trainer
    from trl import SFTTrainer

    class ShopSFTTrainer(SFTTrainer):
        def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
            if getattr(self.args, "fused_lm_head", True) or not model.training:
                return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)
            inputs["use_cache"] = False
            if "attention_mask" in inputs:
                tokens = inputs["attention_mask"].sum()
            else:  # padding-free batches carry position_ids only
                tokens = inputs["position_ids"].new_tensor(inputs["position_ids"].size(1))
            self._total_train_tokens += self.accelerator.gather_for_metrics(tokens).sum().item()
            self._metrics["train"]["num_tokens"] = [self._total_train_tokens]
            if getattr(self.args, "sparse_lm_head", False) and not return_outputs:
                return sparse_head_loss(model, inputs, num_items_in_batch)
            return Trainer.compute_loss(self, model, inputs, return_outputs, num_items_in_batch)

    return ShopSFTTrainer


def sparse_head_loss(model: Any, inputs: dict[str, Any], num_items_in_batch: Any = None) -> Any:
    """Next-token cross-entropy with the LM head applied only where a label exists.

    Equal to the causal LM loss (mean over labelled tokens, or sum / ``num_items_in_batch``), but the
    vocabulary projection runs on the trainable tokens only: a small student's prompts and tool results are
    ~90 % of its tokens and carry no loss.
    """
    import torch

    labels = inputs["labels"]
    body = model.get_decoder() if hasattr(model, "get_decoder") else model.model
    kwargs = {k: inputs[k] for k in ("attention_mask", "position_ids") if inputs.get(k) is not None}
    hidden = body(input_ids=inputs["input_ids"], use_cache=False, **kwargs).last_hidden_state[:, :-1]
    targets = labels[:, 1:]
    picked = targets != -100
    logits = model.get_output_embeddings()(hidden[picked]).float()
    total = torch.nn.functional.cross_entropy(logits, targets[picked], reduction="sum")
    if num_items_in_batch is not None:
        return total / num_items_in_batch
    return total / picked.sum().clamp(min=1)


def _sft_trainer(cfg: TrainConfig, args: Any, model: Any, tokenizer: Any, dataset: Any, peft: Any) -> Any:
    # The dataset is pre-tokenised with its own loss mask (trainable assistant turns only); TRL's
    # assistant_only_loss would re-render conversations and cannot see `trainable`.
    args.assistant_only_loss = False
    return sft_trainer_class()(
        model=model, args=args, train_dataset=dataset, processing_class=tokenizer, peft_config=peft
    )


def _grpo_trainer(cfg: TrainConfig, args: Any, model: Any, tokenizer: Any, dataset: Any, peft: Any) -> Any:
    from trl import GRPOTrainer

    from shoparena.train.reward import toolrl_reward

    if args.grpo_mode == "online":
        factory, rewards, weights = _online_parts(cfg, args)
        args.reward_weights = weights
        args.max_tool_calling_iterations = cfg.env.max_steps
        return GRPOTrainer(
            model=model,
            reward_funcs=rewards,
            args=args,
            train_dataset=dataset,
            processing_class=tokenizer,
            peft_config=peft,
            environment_factory=factory,
        )
    tokenizer.padding_side = "left"
    return GRPOTrainer(
        model=model,
        reward_funcs=[toolrl_reward],
        args=args,
        train_dataset=dataset,
        processing_class=tokenizer,
        peft_config=peft,
    )


def _kto_trainer(cfg: TrainConfig, args: Any, model: Any, tokenizer: Any, dataset: Any, peft: Any) -> Any:
    from trl import KTOTrainer

    return KTOTrainer(
        model=model, args=args, train_dataset=dataset, processing_class=tokenizer, peft_config=peft
    )


def build_trainer(cfg: TrainConfig, args: Any, model: Any, tokenizer: Any, dataset: Any, peft: Any) -> Any:
    """The TRL trainer for ``cfg.method``."""
    return method(cfg.method).build_trainer(cfg, args, model, tokenizer, dataset, peft)


Prepare = Callable[[TrainConfig, Any, Any, Any, DataReport], Any]
BuildTrainer = Callable[[TrainConfig, Any, Any, Any, Any, Any], Any]


@dataclass(frozen=True)
class TrainMethod:
    """One training method.

    Attributes:
        name: the CLI command (``shoparena train sft``) and the config section (``sft:``) of the method.
        help: the CLI command's help.
        config_class: the name of its TRL config class in :mod:`shoparena.train.trl_configs` (by name: that
            module imports TRL, this one must not).
        prepare: ``(cfg, trl_args, view_rows, tokenizer, report) -> dataset``.
        build_trainer: ``(cfg, trl_args, model, tokenizer, dataset, peft_config) -> trainer``.
    """

    name: str
    help: str
    config_class: str
    prepare: Prepare
    build_trainer: BuildTrainer

    @property
    def view(self) -> str:
        """The corpus view this method reads by default (the view that names it)."""
        return method_views()[self.name]


METHODS: dict[str, TrainMethod] = {
    m.name: m
    for m in (
        TrainMethod(
            "sft",
            "Supervised fine-tuning on the `sft` view (loss on trainable assistant turns only).",
            "ShopSFTConfig",
            _prepare_sft,
            _sft_trainer,
        ),
        TrainMethod(
            "grpo",
            "Dr. GRPO: offline per step on the `steps` view (ToolRL reward) or online in ShopEnv "
            "(grpo_mode).",
            "ShopGRPOConfig",
            _prepare_grpo,
            _grpo_trainer,
        ),
        TrainMethod(
            "kto",
            "KTO on the `kto` view, per trajectory (default) or per step (kto.kto_granularity).",
            "ShopKTOConfig",
            _prepare_kto,
            _kto_trainer,
        ),
    )
}


def method(name: str) -> TrainMethod:
    """The entry of method ``name``.

    Raises:
        ConfigError: no such method.
    """
    try:
        return METHODS[name]
    except KeyError:
        raise ConfigError(f"unknown training method {name!r}; expected one of {', '.join(METHODS)}") from None
