"""Tokens per SFT row under each render profile, in a student's own tokenizer (issue 24, item 1).

Usage: ``python benchmarks/profile_tokens.py --corpus DIR --tokenizer MODEL_DIR [--quick] [--no-write]``
(``make run`` gives both: ``runs/quickstart/corpus/<hash>`` and ``runs/quickstart/model/<hash>/pretrained``).
Renders the corpus's kept records under ``upstream`` and ``compact`` exactly as the views do
(``corpus.export.rendered_record``), tokenises each with the tokenizer's chat template as training does
(``train.data.render_sft_record``, drift guard included) and prints median, p95 and max tokens per row, and
the share of rows over the student's ``max_length`` (2,048). ``--quick`` takes the first 60 kept records.
Writes its section of docs/benchmarks.md between ``<!-- profile_tokens:start -->`` and
``<!-- profile_tokens:end -->``.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
from datetime import UTC, datetime
from pathlib import Path

import orjson

from doc_sections import write_section

MAX_LENGTH = 2048


def kept_records(corpus: Path, limit: int | None) -> list[dict]:
    """The corpus's kept records (canonical messages, ``data.select: kept``), in file order."""
    from shoparena.train.data import is_selected

    out = []
    with (corpus / "records.jsonl").open("rb") as fh:
        for line in fh:
            if not line.strip():
                continue
            record = orjson.loads(line)
            if is_selected(record, "kept"):
                out.append(record)
                if limit and len(out) >= limit:
                    break
    return out


def lengths(records: list[dict], tokenizer, render_profile: str) -> list[int]:
    from shoparena.corpus.export import rendered_record
    from shoparena.train.data import render_sft_record

    sizes = []
    for record in records:
        row = rendered_record(record, render_profile)
        sizes.append(len(render_sft_record(tokenizer, row["messages"], row["tools"] or None)["input_ids"]))
    return sizes


def summary(sizes: list[int]) -> dict[str, float]:
    ranked = sorted(sizes)
    return {
        "rows": len(ranked),
        "median": statistics.median(ranked),
        "p95": ranked[min(len(ranked) - 1, int(0.95 * len(ranked)))],
        "max": ranked[-1],
        "over": sum(s > MAX_LENGTH for s in ranked) / len(ranked),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--tokenizer", type=Path, required=True)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(args.tokenizer)
    records = kept_records(args.corpus, 60 if args.quick else None)
    if not records:
        raise SystemExit(f"{args.corpus / 'records.jsonl'}: no kept record")
    lines = [
        "| profile | rows | median | p95 | max | over 2,048 |",
        "|---|---|---|---|---|---|",
    ]
    for profile in ("upstream", "compact"):
        s = summary(lengths(records, tokenizer, profile))
        lines.append(
            f"| {profile} | {s['rows']} | {s['median']:.0f} | {s['p95']} | {s['max']} | {s['over']:.0%} |"
        )
    load = os.getloadavg()[0]
    header = (
        f"`python benchmarks/profile_tokens.py --corpus {args.corpus} --tokenizer {args.tokenizer}"
        f"{' --quick' if args.quick else ''}` — {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, "
        f"{platform.machine()}, {os.cpu_count()} CPUs, load {load:.1f}. Tokens per kept SFT row in the "
        "student's tokenizer."
    )
    text = "\n".join([header, "", *lines])
    print(text)
    if not args.no_write:
        write_section("profile_tokens", text, heading="## Tokens per row by render profile (issue 24)")


if __name__ == "__main__":
    main()
