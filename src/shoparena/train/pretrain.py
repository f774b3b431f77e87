"""Self-supervised copy pretraining of a from-scratch student (the ``student-word`` base of ``make run``).

Why: a randomly initialised transformer must copy the user's words into ``find_product``'s ``q`` (and handles
into later calls), and copying needs induction heads, which a few hundred SFT steps on a few hundred
trajectories do not form (docs/fidelity.md, pilot table: 29-34 % of query tokens right under teacher forcing
after 1.2 M SFT tokens). Pretraining on plain text whose second half repeats its first makes the copy circuit
the cheapest way to lower the loss, so it forms within minutes. The texts are unlabelled: the catalogue's
titles and the training-side suites' requests; no tool call, no answer and no held-out request is seen, so the
pretrained base still scores ~0 on the benchmark (it has never seen the tool-call format).

The objective is TRL SFT on prompt-completion pairs (``text`` → ``text``), completion-only loss, with
shoparena's sparse LM head; nothing here is specific to shopping beyond where the texts come from.
"""

from __future__ import annotations

import random
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def copy_pairs(
    groups: Sequence[Sequence[str]], tokenizer: Any, *, rows: int, seed: int, max_chars: int = 600
) -> list[dict[str, str]]:
    """``rows`` prompt-completion pairs: a text as a user turn (the tokenizer's chat template with its
    generation prompt) and the same text as the reply. Each row draws a group uniformly, then a text from it,
    so short catalogue titles and long requests are equally represented."""
    pools = [[t.strip()[:max_chars] for t in group if t and t.strip()] for group in groups]
    pools = [p for p in pools if p]
    if not pools:
        raise ValueError("copy pretraining: no texts")
    rng = random.Random(seed)
    out = []
    for _ in range(rows):
        text = rng.choice(rng.choice(pools))
        prompt = tokenizer.apply_chat_template(
            [{"role": "user", "content": text}], tokenize=False, add_generation_prompt=True
        )
        out.append({"prompt": prompt, "completion": text})  # TRL appends the end-of-turn token
    return out


def copy_pretrain(
    model_dir: str | Path,
    texts: Sequence[Sequence[str]],
    out_dir: str | Path,
    *,
    steps: int = 400,
    batch_size: int = 32,
    learning_rate: float = 3e-3,
    seed: int = 0,
    progress: bool = True,
) -> dict[str, Any]:
    """Train ``model_dir`` to repeat ``texts`` for ``steps`` optimizer steps and save it to ``out_dir``
    (written to a temporary sibling first, so an interrupted run leaves no half folder).

    Returns:
        ``steps``, ``train_loss``, ``tokens`` and the copy accuracy of the last logged batch.
    """
    import datasets
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from shoparena.train.methods import sft_trainer_class
    from shoparena.train.trl_configs import ShopSFTConfig

    out = Path(out_dir)
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir)
    pairs = copy_pairs(texts, tokenizer, rows=steps * batch_size, seed=seed)
    args = ShopSFTConfig(
        output_dir=str(tmp / "trainer"),
        report_to="none",
        use_cpu=True,
        bf16=False,
        max_steps=steps,
        per_device_train_batch_size=batch_size,
        learning_rate=learning_rate,
        lr_scheduler_type="cosine",
        warmup_steps=max(1, steps // 20),
        weight_decay=0.01,
        logging_steps=max(1, steps // 20),
        save_strategy="no",
        seed=seed,
        completion_only_loss=True,
        sparse_lm_head=True,
        max_length=320,
        train_sampling_strategy="group_by_length",
        disable_tqdm=not progress,
    )
    trainer = sft_trainer_class()(
        model=model, args=args, train_dataset=datasets.Dataset.from_list(pairs), processing_class=tokenizer
    )
    result = trainer.train()
    model.save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)
    shutil.rmtree(tmp / "trainer", ignore_errors=True)
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)
    tokens = max((e.get("num_tokens", 0) for e in trainer.state.log_history), default=0)
    return {"steps": trainer.state.global_step, "train_loss": result.training_loss, "tokens": tokens}


__all__ = ["copy_pairs", "copy_pretrain"]
