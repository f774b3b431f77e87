"""Teacher-forced loss of a model on corpus rows: how well it predicts the teacher's own actions.

Strict ASR needs a student that plays whole episodes; one that cannot yet (a small model trained from
scratch on a CPU budget) still differs from another in how close it came. This module measures that on
rows the model never trained on (the corpus's ``eval`` split by default): the mean negative log-likelihood
and the next-token accuracy over the trainable assistant tokens, exactly the tokens SFT's loss covers
(the same rendering and mask, ``render_sft_record``), per row, so two models can be compared row by row.
"""

from __future__ import annotations

import re
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


_SHOP_RE = re.compile(r'"shop_id":\s*"([^"]*)"')
_IDS_RE = re.compile(r'"recommend_product",\s*"arguments":\s*\{\s*"product_ids":\s*"([^"]*)"')
_NAME_RE = re.compile(r'"name":\s*"([^"]*)"')


@dataclass(frozen=True, slots=True)
class BasketDecision:
    """One basket-deciding call of a teacher turn and what the teacher-forced model wrote in its place.

    ``kind`` is ``calls`` (the turn's tool names in order: what to do next and how many times), ``shop`` (the
    ``shop_id`` handle of a search inside a shop) or ``ids`` (the product ids of ``recommend_product``);
    ``expected``/``predicted`` are the values (for ``ids``, how many ids were listed is compared as well as
    the list itself)."""

    record_id: str
    category: str
    kind: str
    expected: str
    predicted: str

    @property
    def right(self) -> bool:
        return self.expected == self.predicted

    @property
    def count_right(self) -> bool:
        return _count(self.expected) == _count(self.predicted)


def _count(ids: str) -> int:
    return len([x for x in ids.split(",") if x.strip()])


def basket_decisions(
    model_path: str | Path,
    corpus: str | Path,
    *,
    split: str = "eval",
    select: str = "kept",
    max_length: int = 4096,
) -> list[BasketDecision]:
    """The shop handles and recommended id lists of the teacher's turns on ``split``, each beside what the
    model's argmax wrote at the same positions under teacher forcing (the decisions that make a basket: which
    shop, and one id per requested item)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from shoparena.train.models import prepare_tokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(model_path))
    prepare_tokenizer(tokenizer)
    model = AutoModelForCausalLM.from_pretrained(str(model_path), dtype=torch.float32)
    model.eval()
    out: list[BasketDecision] = []
    for row in load_view(DataSection(corpus=str(corpus), split=split), "sft"):
        if not is_selected(row, select):
            continue
        enc = render_sft_record(tokenizer, row["messages"], row.get("tools"))
        ids = enc["input_ids"][:max_length]
        mask = enc["assistant_masks"][:max_length]
        with torch.no_grad():
            predicted = model(input_ids=torch.tensor([ids])).logits[0].argmax(-1).tolist()
        for start, end in _spans(mask):
            target = tokenizer.decode(ids[start:end])
            guess = tokenizer.decode(predicted[start - 1 : end - 1])  # position i-1 predicts token i
            names = ("+".join(_NAME_RE.findall(target)), "+".join(_NAME_RE.findall(guess)))
            out.append(BasketDecision(str(row["record_id"]), str(row.get("category") or ""), "calls", *names))
            for kind, pattern in (("shop", _SHOP_RE), ("ids", _IDS_RE)):
                for k, found in enumerate(pattern.finditer(target)):
                    mine = list(pattern.finditer(guess))
                    out.append(
                        BasketDecision(
                            str(row["record_id"]),
                            str(row.get("category") or ""),
                            kind,
                            found.group(1),
                            mine[k].group(1) if k < len(mine) else "",
                        )
                    )
    return out


def _spans(mask: list[int]) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    for i, bit in enumerate(mask):
        if bit and i > 0 and not mask[i - 1]:
            spans.append((i, i + 1))
        elif bit and spans:
            spans[-1] = (spans[-1][0], i + 1)
    return spans


def summarize_decisions(decisions: list[BasketDecision]) -> dict[str, Any]:
    """Per kind and category: decisions, exact matches, and (ids) right counts of ids."""
    table: dict[str, dict[str, Any]] = {}
    for d in decisions:
        for key in (f"{d.kind}/{d.category}", f"{d.kind}/all"):
            cell = table.setdefault(key, {"n": 0, "right": 0, "count_right": 0})
            cell["n"] += 1
            cell["right"] += int(d.right)
            cell["count_right"] += int(d.count_right)
    return dict(sorted(table.items()))


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


__all__ = [
    "BasketDecision",
    "RowLoss",
    "basket_decisions",
    "row_losses",
    "summarize",
    "summarize_decisions",
]
