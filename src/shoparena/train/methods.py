"""Per-method data preparation and TRL trainer construction (SFT, Dr. GRPO offline/online, KTO)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from shoparena.train.config import ConfigError, TrainConfig
from shoparena.train.data import (
    DataReport,
    prepare_grpo_offline,
    prepare_grpo_online,
    prepare_kto,
    prepare_sft,
)


def prepare(cfg: TrainConfig, args: Any, rows: Any, tokenizer: Any, report: DataReport) -> Any:
    """The method's training dataset from the selected view rows."""
    if cfg.method == "sft":
        return prepare_sft(rows, tokenizer, report, max_length=args.max_length, overlong=cfg.data.overlong)
    if cfg.method == "grpo":
        if args.grpo_mode == "online":
            return prepare_grpo_online(rows, report)
        limit = grpo_prompt_limit(args, tokenizer)
        return prepare_grpo_offline(rows, tokenizer, report, max_prompt_tokens=limit)
    return prepare_kto(rows, report, granularity=args.kto_granularity)


def grpo_prompt_limit(args: Any, tokenizer: Any) -> int | None:
    """``grpo.max_prompt_tokens``, else the tokenizer's context length minus the completion budget."""
    if args.max_prompt_tokens is not None:
        return args.max_prompt_tokens
    context = getattr(tokenizer, "model_max_length", None)
    if not isinstance(context, int) or context > 1_000_000:  # transformers' "no limit" sentinel
        return None
    return max(1, context - (args.max_completion_length or 0))


def _online_parts(cfg: TrainConfig, args: Any) -> tuple[Any, list[Any], list[float]]:
    from shoparena.scoring.similarity import get_similarity
    from shoparena.search import SearchIndex
    from shoparena.suites.loaders import load_suite
    from shoparena.train.data import corpus_render_profile
    from shoparena.train.online import environment_factory, outcome_reward_func, teacher_agreement

    if not cfg.env.index:
        raise ConfigError("env.index: online GRPO needs a search index directory (--set env.index=DIR)")
    suite = cfg.env.suite or (str(Path(cfg.data.corpus) / "problems.json") if cfg.data.corpus else None)
    if not suite or not Path(suite).is_file():
        raise ConfigError(f"env.suite: no suite file for online GRPO ({suite})")
    engine = SearchIndex.open(cfg.env.index)
    problems, _ = load_suite(suite)
    factory = environment_factory(engine, problems, cfg.env.max_steps, corpus_render_profile(cfg))
    rewards = [outcome_reward_func(engine, get_similarity(cfg.env.similarity)), teacher_agreement]
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


def build_trainer(cfg: TrainConfig, args: Any, model: Any, tokenizer: Any, dataset: Any, peft: Any) -> Any:
    """The TRL trainer for ``cfg.method``."""
    if cfg.method == "sft":
        # The dataset is pre-tokenised with its own loss mask (trainable assistant turns only); TRL's
        # assistant_only_loss would re-render conversations and cannot see `trainable`.
        args.assistant_only_loss = False
        return sft_trainer_class()(
            model=model, args=args, train_dataset=dataset, processing_class=tokenizer, peft_config=peft
        )
    if cfg.method == "grpo":
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
    from trl import KTOTrainer

    return KTOTrainer(
        model=model, args=args, train_dataset=dataset, processing_class=tokenizer, peft_config=peft
    )
