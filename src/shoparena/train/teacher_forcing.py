"""Teacher-forced loss of a model on corpus rows: how well it predicts the teacher's own actions.

Strict ASR needs a student that plays whole episodes; one that cannot yet (a small model trained from
scratch on a CPU budget) still differs from another in how close it came. This module measures that on
rows the model never trained on (the corpus's ``eval`` split by default): the mean negative log-likelihood
and the next-token accuracy over the trainable assistant tokens, exactly the tokens SFT's loss covers
(the same rendering and mask, ``render_sft_record``), per row, so two models can be compared row by row.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from shoparena.train.config import DataSection
from shoparena.train.data import is_selected, load_view, render_sft_record


@dataclass(frozen=True, slots=True)
class RowLoss:
    """One row: trainable tokens scored, their summed NLL (nats) and how many the argmax got right."""

    record_id: str
    tokens: int
    nll_sum: float
    correct: int

    @property
    def nll(self) -> float:
        return self.nll_sum / self.tokens

    @property
    def accuracy(self) -> float:
        return self.correct / self.tokens


def row_losses(
    model_path: str | Path,
    corpus: str | Path,
    *,
    split: str = "eval",
    select: str = "kept",
    max_length: int = 4096,
    limit: int | None = None,
) -> list[RowLoss]:
    """Teacher-forced NLL and accuracy of ``model_path`` on the selected ``sft`` rows of ``split``.

    Rows are truncated to ``max_length`` tokens like SFT truncates them; rows with no trainable token left
    are skipped (they carry no action to predict). Deterministic: no sampling, no dropout."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from shoparena.train.models import prepare_tokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(model_path))
    prepare_tokenizer(tokenizer)
    model = AutoModelForCausalLM.from_pretrained(str(model_path), dtype=torch.float32)
    model.eval()
    dataset = load_view(DataSection(corpus=str(corpus), split=split), "sft")
    out: list[RowLoss] = []
    for row in dataset:
        if not is_selected(row, select):
            continue
        enc = render_sft_record(tokenizer, row["messages"], row.get("tools"))
        ids = enc["input_ids"][:max_length]
        mask = torch.tensor(enc["assistant_masks"][:max_length][1:], dtype=torch.bool)
        if not mask.any():
            continue
        with torch.no_grad():
            logits = model(input_ids=torch.tensor([ids])).logits[0, :-1].float()
        targets = torch.tensor(ids[1:])
        nll = torch.nn.functional.cross_entropy(logits[mask], targets[mask], reduction="sum")
        correct = int((logits[mask].argmax(-1) == targets[mask]).sum())
        out.append(RowLoss(str(row["record_id"]), int(mask.sum()), float(nll), correct))
        if limit is not None and len(out) >= limit:
            break
    return out


def summarize(losses: list[RowLoss]) -> dict[str, Any]:
    """Token-weighted NLL and accuracy over the rows, plus the rows themselves (for paired comparisons)."""
    tokens = sum(r.tokens for r in losses)
    return {
        "rows": len(losses),
        "tokens": tokens,
        "nll": sum(r.nll_sum for r in losses) / tokens if tokens else None,
        "accuracy": sum(r.correct for r in losses) / tokens if tokens else None,
        "per_row": [asdict(r) for r in losses],
    }


__all__ = ["RowLoss", "row_losses", "summarize"]
