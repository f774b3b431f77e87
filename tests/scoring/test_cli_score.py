"""``shoparena score`` end to end on ORO envelopes against a catalog file (needs shoparena.formats.io)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from scoring_helpers import recommending
from typer.testing import CliRunner

from shoparena.catalog.io import dump_index_line
from shoparena.records.catalog import IndexLine
from shoparena.scoring import plant_products
from shoparena.suites import load_suite
from world import SHARED_DATA

SUITE = SHARED_DATA / "oro" / "problem_suite_v1.json"


def test_score_cli_counts_missing_and_writes_verdicts(app: typer.Typer, tmp_path: Path) -> None:
    pytest.importorskip("shoparena.formats.io")
    oro = pytest.importorskip("shoparena.formats.oro")
    problems, _ = load_suite(SUITE)
    lookup = plant_products(problems)
    catalog = tmp_path / "documents.jsonl"
    with open(catalog, "wb") as fh:
        for p in problems:
            for pid in p.gt_ids:
                fh.write(dump_index_line(IndexLine.from_product(lookup.get_product(pid))) + b"\n")
    runs = tmp_path / "output.jsonl"
    with open(runs, "w") as fh:
        for p in problems[:20]:  # 10 problems have no trajectory
            traj = recommending(",".join(p.gt_ids), problem_id=f"uuid-{p.problem_id}", query=p.query)
            fh.write(json.dumps(oro.to_oro_envelope(traj)) + "\n")
    out = tmp_path / "verdicts.jsonl"
    args = [
        "score",
        "--suite",
        str(SUITE),
        "--trajectories",
        str(runs),
        "--index",
        str(catalog),
        "--out",
        str(out),
    ]
    result = CliRunner().invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["total_problems"] == 30 and report["missing_problems"] == 10
    assert report["success_rate"] == pytest.approx(20 / 30)
    verdicts = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(verdicts) == 30 and sum(v["status"] == "missing" for v in verdicts) == 10
    table = CliRunner().invoke(app, [*args, "--profile", "shoppingbench"], terminal_width=160)
    assert (
        table.exit_code == 0 and "missing trajectories 10 of 30" in table.output and "Voucher" in table.output
    )
