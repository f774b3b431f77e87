"""The corpus funnel: input → quarantined → each reason → kept → recovered → views, plus breakdowns.

``report.json`` asserts its own arithmetic (``funnel.adds_up``); :func:`report_table` renders it with Rich.
Filter quality against the harness truth (``miner_kind``) is reported when the input carries it.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from shoparena.records.corpus import OUTCOME_ORDER, CorpusRecord, Quarantined

AGENTIC_KINDS = ("agentic",)


def _bin(value: float | None) -> str:
    if value is None:
        return "none"
    return f"{min(int(value * 10), 9) / 10:.1f}"


def filter_quality(records: Sequence[CorpusRecord]) -> dict[str, Any] | None:
    """Precision / recall of the structural label ``agentic`` against the harness truth."""
    judged = [
        r
        for r in records
        if r.miner_kind and r.origin == "agentic" and r.evidence.envelope_status == "SUCCESS"
    ]
    if not judged:
        return None
    truth = [r.miner_kind.split(":")[0] in AGENTIC_KINDS for r in judged]
    predicted = [r.structural_label == "agentic" for r in judged]
    tp = sum(t and p for t, p in zip(truth, predicted, strict=True))
    fp = sum(p and not t for t, p in zip(truth, predicted, strict=True))
    fn = sum(t and not p for t, p in zip(truth, predicted, strict=True))
    forged_kept = sum(1 for r in records if r.miner_kind.startswith("forger") and r.outcome == "kept")
    return {
        "trajectories": len(judged),
        "precision": round(tp / (tp + fp), 4) if tp + fp else None,
        "recall": round(tp / (tp + fn), 4) if tp + fn else None,
        "true_positive": tp,
        "false_positive": fp,
        "false_negative": fn,
        "forger_trajectories_kept": forged_kept,
    }


def build_report(
    records: Sequence[CorpusRecord],
    quarantined: Sequence[Quarantined],
    views: dict[str, dict[str, int]],
    config: Any,
    notes: Sequence[str] = (),
) -> dict[str, Any]:
    original = [r for r in records if r.origin == "agentic"]
    recovered = [r for r in records if r.origin == "recovered"]
    outcomes = Counter(r.outcome for r in original)
    reasons = {reason: outcomes.get(reason, 0) for reason in OUTCOME_ORDER}
    n_input = len(original) + len(quarantined)
    funnel = {
        "input": n_input,
        "quarantined": len(quarantined),
        "records": len(original),
        "rejected": reasons,
        "kept": outcomes.get("kept", 0),
        "recovered": len(recovered),
        "recovered_kept": sum(r.outcome == "kept" for r in recovered),
        "views": views,
    }
    funnel["adds_up"] = funnel["kept"] + len(quarantined) + sum(reasons.values()) == n_input
    richness: dict[str, Counter[str]] = defaultdict(Counter)
    judge_bins: Counter[str] = Counter()
    per: dict[str, dict[str, Counter[str]]] = {
        k: defaultdict(Counter) for k in ("category", "miner_kind", "teacher", "label")
    }
    for r in original:
        richness[r.miner_kind or "-"][_bin(r.labels.agentic_richness)] += 1
        judge_bins["missing" if r.labels.judge_q is None else f"{r.labels.judge_q:.1f}"] += 1
        for key, value in (
            ("category", r.category),
            ("miner_kind", r.miner_kind),
            ("teacher", r.teacher),
            ("label", r.structural_label),
        ):
            per[key][value or "-"]["total"] += 1
            per[key][value or "-"]["kept"] += r.outcome == "kept"
    splits = Counter((r.split, r.outcome == "kept") for r in records)
    quarantine_fields = Counter(q.field for q in quarantined)
    return {
        "funnel": funnel,
        "richness_histogram": {k: dict(sorted(v.items())) for k, v in sorted(richness.items())},
        "judge_bins": dict(sorted(judge_bins.items())),
        "breakdown": {k: {name: dict(c) for name, c in sorted(v.items())} for k, v in per.items()},
        "splits": {f"{s}:{'kept' if k else 'rejected'}": n for (s, k), n in sorted(splits.items())},
        "quarantine_fields": dict(sorted(quarantine_fields.items())),
        "filter_quality": filter_quality(records),
        "thresholds": {
            "filter": config.filter.model_dump(mode="json"),
            "gates": config.gates.model_dump(mode="json"),
            "split": config.split.model_dump(mode="json"),
        },
        "notes": list(notes),
    }


def write_card(path: Path, report: dict[str, Any], config: Any) -> None:
    """The dataset card (README.md) with the funnel."""
    f = report["funnel"]
    lines = [
        "# shoparena trajectory corpus",
        "",
        "Built by `shoparena corpus build` (see docs/corpus.md). Views: `sft`, `steps`, `kto` under `views/`",
        "(`datasets.load_from_disk`, Parquet, JSONL per split). Selection: `kept` = outcome kept and origin",
        "agentic; `kept+recovered` = outcome kept; `unfiltered` = every row.",
        "",
        "## Funnel",
        "",
        "| stage | count |",
        "|---|---|",
        f"| input records | {f['input']} |",
        f"| quarantined | {f['quarantined']} |",
    ]
    lines += [f"| rejected: `{reason}` | {n} |" for reason, n in f["rejected"].items() if n]
    lines += [
        f"| kept | {f['kept']} |",
        f"| recovered (sub-task → agentic) | {f['recovered']} |",
        f"| recovered and kept | {f['recovered_kept']} |",
    ]
    for view, splits in f["views"].items():
        lines.append(f"| view `{view}` rows | train {splits.get('train', 0)}, eval {splits.get('eval', 0)} |")
    lines += [
        "",
        f"Counts add up: **{f['adds_up']}**.",
        "",
        "## Thresholds",
        "",
        "```json",
        json.dumps(report["thresholds"], indent=2),
        "```",
        "",
    ]
    if report.get("filter_quality"):
        lines += [
            "## Filter quality against the harness truth",
            "",
            "```json",
            json.dumps(report["filter_quality"], indent=2),
            "```",
            "",
        ]
    path.write_text("\n".join(lines), encoding="utf-8")


def report_table(report: dict[str, Any]) -> Any:
    """A Rich table of the funnel."""
    from rich.table import Table

    f = report["funnel"]
    table = Table(title="corpus funnel")
    table.add_column("stage")
    table.add_column("count", justify="right")
    table.add_row("input", str(f["input"]))
    table.add_row("quarantined", str(f["quarantined"]))
    for reason, n in f["rejected"].items():
        if n:
            table.add_row(f"  {reason}", str(n))
    table.add_row("kept", str(f["kept"]))
    table.add_row("recovered (kept)", f"{f['recovered']} ({f['recovered_kept']})")
    for view, splits in f["views"].items():
        table.add_row(f"view {view}", f"train {splits.get('train', 0)} / eval {splits.get('eval', 0)}")
    table.add_row("adds up", str(f["adds_up"]))
    return table


__all__ = ["build_report", "filter_quality", "report_table", "write_card"]
