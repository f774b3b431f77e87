"""Plant the problems of upstream problem files into a catalog (environment spec §7.5).

The file-reading half of :mod:`shoparena.catalog.plant`: problem files are read by the suite loaders, which
live above the catalog layer.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from shoparena.catalog.plant import PlantReport, plant_into_catalog
from shoparena.records.problem import Problem
from shoparena.suites.loaders import load_suite


def plant_catalog(
    suites: Sequence[str | Path],
    catalog_in: str | Path,
    out: str | Path,
    *,
    distractors: int = 2,
    seed: int = 0,
) -> PlantReport:
    """Write ``out`` = the input catalog (streamed, unchanged) + planted GT products and distractors.

    Args:
        suites: Upstream problem files (SB JSONL of any intent, ORO suite JSON); records the loaders
            quarantine are reported as failures.
        catalog_in: The catalog to extend (``.jsonl`` or ``.jsonl.gz``).
        out: Output catalog (``.gz`` compresses).
        distractors: Distractors per slot.
        seed: Seed of voucher price splits and violation order.
    """
    problems: list[Problem] = []
    quarantined: list[str] = []
    for path in suites:
        loaded, summary = load_suite(path)
        problems.extend(loaded)
        quarantined += [f"{q.where}: {q.field}: {q.reason}" for q in summary.problems_quarantined]
    report = plant_into_catalog(problems, catalog_in, out, distractors=distractors, seed=seed)
    report.failed += [f"unreadable record {q}" for q in quarantined]
    return report


__all__ = ["plant_catalog"]
