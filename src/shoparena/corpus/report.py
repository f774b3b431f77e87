"""The corpus funnel: input → quarantined → each reason → kept → recovered → views, plus breakdowns.

:class:`ReportBuilder` accumulates record dicts one at a time (memory independent of the corpus size);
``report.json`` asserts its own arithmetic (``funnel.adds_up``); :func:`report_table` renders it with Rich.
Filter quality against the harness truth (``miner_kind``) is reported when the input carries it.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from shoparena.formats.profiles import DEFAULT_PROFILE
from shoparena.records.corpus import OUTCOME_ORDER, CorpusRender, CorpusReport

#: Harness miner kinds whose trajectories are agentic by construction (the filter never sees this).
AGENTIC_KINDS = ("agentic",)


def _bin(value: float | None) -> str:
    if value is None:
        return "none"
    return f"{min(int(value * 10), 9) / 10:.1f}"


class ReportBuilder:
    """Counts for ``report.json``, fed with record dicts (``CorpusRecord.model_dump(mode="json")``)."""

    def __init__(self) -> None:
        self.outcomes: Counter[str] = Counter()
        self.recovered: Counter[str] = Counter()
        self.richness: dict[str, Counter[str]] = defaultdict(Counter)
        self.judge_bins: Counter[str] = Counter()
        self.per: dict[str, dict[str, Counter[str]]] = {
            k: defaultdict(Counter)
            for k in (
                "category",
                "miner_kind",
                "teacher",
                "label",
                "log_source",
                "race",
                "agent_version",
                "model",
            )
        }
        self.splits: Counter[str] = Counter()
        self.quality: Counter[str] = Counter()

    def add(self, r: dict[str, Any]) -> None:
        kept = r["outcome"] == "kept"
        self.splits[f"{r['split']}:{'kept' if kept else 'rejected'}"] += 1
        if r["origin"] == "recovered":
            self.recovered[r["outcome"]] += 1
            return
        self.outcomes[r["outcome"]] += 1
        labels, evidence = r["labels"], r["evidence"]
        self.richness[r["miner_kind"] or "-"][_bin(labels["agentic_richness"])] += 1
        self.judge_bins["missing" if labels["judge_q"] is None else f"{labels['judge_q']:.1f}"] += 1
        for key, value in (
            ("category", r["category"]),
            ("miner_kind", r["miner_kind"]),
            ("teacher", r["teacher"]),
            ("label", r["structural_label"]),
            ("log_source", evidence["log_source"]),
            ("race", r["provenance"]["race_id"]),
            ("agent_version", r["provenance"]["agent_version"]),
            ("model", r["provenance"]["agent_model"]),
        ):
            self.per[key][value or "-"]["total"] += 1
            self.per[key][value or "-"]["kept"] += kept
        if r["miner_kind"] and evidence["envelope_status"] == "SUCCESS":
            truth = r["miner_kind"].split(":")[0] in AGENTIC_KINDS
            predicted = r["structural_label"] == "agentic"
            self.quality["tp" if truth and predicted else "fp" if predicted else "fn" if truth else "tn"] += 1
        if r["miner_kind"].startswith("forger") and kept:
            self.quality["forger_kept"] += 1

    def filter_quality(self) -> dict[str, Any] | None:
        q = self.quality
        if not (q["tp"] + q["fp"] + q["fn"] + q["tn"]):
            return None
        return {
            "trajectories": q["tp"] + q["fp"] + q["fn"] + q["tn"],
            "precision": round(q["tp"] / (q["tp"] + q["fp"]), 4) if q["tp"] + q["fp"] else None,
            "recall": round(q["tp"] / (q["tp"] + q["fn"]), 4) if q["tp"] + q["fn"] else None,
            "true_positive": q["tp"],
            "false_positive": q["fp"],
            "false_negative": q["fn"],
            "forger_trajectories_kept": q["forger_kept"],
        }

    def build(
        self,
        quarantined: int,
        quarantine_fields: dict[str, int],
        views: dict[str, dict[str, int]],
        config: Any,
        notes: list[str],
    ) -> dict[str, Any]:
        """The report's counts as the JSON object :class:`CorpusReport` validates (the build adds the render
        profile, diversity and row lengths before it does)."""
        reasons = {reason.value: self.outcomes.get(reason, 0) for reason in OUTCOME_ORDER}
        records = sum(self.outcomes.values())
        funnel = {
            "input": records + quarantined,
            "quarantined": quarantined,
            "records": records,
            "rejected": reasons,
            "kept": self.outcomes.get("kept", 0),
            "recovered": sum(self.recovered.values()),
            "recovered_kept": self.recovered.get("kept", 0),
            "views": views,
        }
        funnel["adds_up"] = funnel["kept"] + quarantined + sum(reasons.values()) == funnel["input"]
        return {
            "funnel": funnel,
            "recovered_outcomes": dict(sorted(self.recovered.items())),
            "richness_histogram": {k: dict(sorted(v.items())) for k, v in sorted(self.richness.items())},
            "judge_bins": dict(sorted(self.judge_bins.items())),
            "breakdown": {k: {n: dict(c) for n, c in sorted(v.items())} for k, v in self.per.items()},
            "splits": dict(sorted(self.splits.items())),
            "quarantine_fields": dict(sorted(quarantine_fields.items())),
            "filter_quality": self.filter_quality(),
            "thresholds": {
                "filter": config.filter.model_dump(mode="json"),
                "gates": config.gates.model_dump(mode="json"),
                "split": config.split.model_dump(mode="json"),
            },
            "notes": notes,
        }


def recommended_max_length(report: CorpusReport) -> int:
    """The window that holds every published ``sft`` row (``report.sft_lengths``; 8192 without one)."""
    return int((report.sft_lengths or {}).get("max_length") or 8192)


def length_note(report: CorpusReport) -> list[str]:
    lengths = report.sft_lengths
    if not lengths:
        return []
    return [
        f"`max_length`: the longest of the {lengths['rows']} rows is {lengths['max']:,} tokens of the",
        f"{lengths['tokenizer']} tokenizer (p50 {lengths['p50']:,}, p95 {lengths['p95']:,}), so",
        f"`max_length={lengths['max_length']}` holds every row; a shorter window cuts late turns out of the",
        "loss, and TRL drops a row whose trainable turns all fall outside it.",
        "",
    ]


def render_note(report: CorpusReport) -> str:
    return f"render profile {report.render_profile(DEFAULT_PROFILE)}"


def write_card(path: Path, report: CorpusReport) -> None:
    """The dataset card (README.md): the Hub's YAML metadata (:mod:`shoparena.corpus.card`), the funnel,
    the thresholds and the diversity table."""
    from shoparena.corpus.card import card_header

    f = report.funnel
    lines = [
        card_header(path.parent, report),
        "# shoparena trajectory corpus",
        "",
        "Built by `shoparena corpus build` (see docs/corpus.md).",
        "",
        "## Train on it",
        "",
        "The default configuration is the training selection: kept trajectories of agentic origin, in TRL's",
        "conversational prompt-completion form (`prompt`, `completion`, `tools` as a JSON string that TRL",
        "decodes), one row per block of trainable assistant turns, so a stock trainer learns from exactly",
        "the turns the model itself emitted:",
        "",
        "```python",
        "from datasets import load_dataset",
        "from trl import SFTConfig, SFTTrainer",
        f'train = load_dataset("CORPUS_DIR_OR_REPO")["train"]   # config "sft", {render_note(report)}',
        f"config = SFTConfig(assistant_only_loss=True, max_length={recommended_max_length(report)})",
        'SFTTrainer(model="Qwen/Qwen3-0.6B", args=config, train_dataset=train).train()',
        "```",
        "",
        *length_note(report),
        "Other configurations: `sft_all` (every trajectory with an assistant turn, every `outcome`, the",
        "per-message `trainable` flag: filter research), `steps` (one row per assistant turn; its prompt is",
        "the `sft_all` row's `messages[:prompt_messages]`), `kto` (kept = desirable; agentic trajectories",
        "that failed the judge or success = undesirable). Splits `train` and `eval` (leak-guarded).",
        "`shoparena train` reads the same views (`data.select`: `kept`, `kept+recovered`, `kept+failed`,",
        "`raw`).",
        "",
        "## Funnel",
        "",
        "| stage | count |",
        "|---|---|",
        f"| input records | {f.input} |",
        f"| quarantined | {f.quarantined} |",
    ]
    lines += [f"| rejected: `{reason}` | {n} |" for reason, n in f.rejected.items() if n]
    lines += [
        f"| kept | {f.kept} |",
        f"| recovered (sub-task → agentic) | {f.recovered} |",
        f"| recovered and kept | {f.recovered_kept} |",
    ]
    for view, splits in f.views.items():
        lines.append(f"| view `{view}` rows | train {splits.get('train', 0)}, eval {splits.get('eval', 0)} |")
    render = report.render or CorpusRender(profile=DEFAULT_PROFILE)
    lines += [
        "",
        f"Counts add up: **{f.adds_up}**.",
        "",
        f"Render profile of the views: `{render.profile}` (hash `{render.profile_hash}`); "
        "a student trained on them is evaluated under the same profile.",
        "",
        "## Thresholds",
        "",
        "```json",
    ]
    lines += [json.dumps(report.thresholds, indent=2), "```", ""]
    if report.filter_quality:
        lines += ["## Filter quality against the harness truth", "", "```json"]
        lines += [json.dumps(report.filter_quality, indent=2), "```", ""]
    if report.diversity:
        from shoparena.corpus.diversity import diversity_markdown

        lines += [
            "## Diversity",
            "",
            "Per group (shoparena.corpus.diversity): distinct request bigrams (d-2), distinct bigrams",
            "of the agent's own searches, distinct tool-call 3-grams (d-3), entropy of whole tool sequences,",
            "coverage of categories, shops and price bands of the recommended products and attribute names",
            "of the viewed ones, near-duplicate rate. Ratios depend on group size: compare groups of equal",
            "size (`corpus report CORPUS --suite BANK --index INDEX` adds one teacher of equal size).",
            "",
            *diversity_markdown(report.diversity),
            "",
        ]
    path.write_text("\n".join(lines), encoding="utf-8")


def report_table(report: CorpusReport) -> Any:
    """A Rich table of the funnel."""
    from rich.table import Table

    f = report.funnel
    table = Table(title="corpus funnel")
    table.add_column("stage")
    table.add_column("count", justify="right")
    table.add_row("input", str(f.input))
    table.add_row("quarantined", str(f.quarantined))
    for reason, n in f.rejected.items():
        if n:
            table.add_row(f"  {reason}", str(n))
    table.add_row("kept", str(f.kept))
    table.add_row("recovered (kept)", f"{f.recovered} ({f.recovered_kept})")
    for view, splits in f.views.items():
        table.add_row(f"view {view}", f"train {splits.get('train', 0)} / eval {splits.get('eval', 0)}")
    table.add_row("adds up", str(f.adds_up))
    return table


__all__ = ["ReportBuilder", "report_table", "write_card"]
