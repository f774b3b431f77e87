"""``shoparena score`` on bad inputs: clean errors, counted unreadable lines, JSON-only stdout."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
import typer
from scoring_helpers import recommending
from typer.testing import CliRunner

from shoparena.catalog.io import dump_index_line
from shoparena.formats.oro import to_oro_envelope
from shoparena.records.catalog import IndexLine
from shoparena.scoring import plant_products
from shoparena.suites import load_suite
from world import SHARED_DATA

SUITE = SHARED_DATA / "oro" / "problem_suite_v1.json"


@pytest.fixture
def run_files(tmp_path: Path) -> tuple[Path, Path]:
    problems, _ = load_suite(SUITE)
    lookup = plant_products(problems)
    catalog = tmp_path / "documents.jsonl"
    with open(catalog, "wb") as fh:
        for p in problems:
            for pid in p.gt_ids:
                fh.write(dump_index_line(IndexLine.from_product(lookup.get_product(pid))) + b"\n")
    runs = tmp_path / "output.jsonl"
    lines = [
        json.dumps(to_oro_envelope(recommending(",".join(p.gt_ids), problem_id=p.problem_id, query=p.query)))
        for p in problems[:5]
    ]
    lines.append(lines[0])  # a duplicate: logged as a warning
    lines.insert(2, '{"problem_id": "x", "dialogue": [')  # torn line
    lines.insert(4, "\x00\x00garbage")
    runs.write_text("\n".join(lines) + "\n")
    return catalog, runs


def _args(suite: Path, runs: Path, catalog: Path) -> list[str]:
    return ["score", "--suite", str(suite), "--trajectories", str(runs), "--index", str(catalog)]


def test_json_stdout_is_only_json_and_unreadable_lines_are_counted(
    app: typer.Typer, run_files: tuple[Path, Path]
) -> None:
    catalog, runs = run_files
    result = CliRunner().invoke(app, [*_args(SUITE, runs, catalog), "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    lines = payload["trajectory_lines"]
    assert (lines["read"], lines["kept"], lines["quarantined"]) == (8, 6, 2)
    assert payload["missing_trajectories"] == 25 and payload["duplicate_trajectories"] == 1
    assert f"{runs}:3:" in result.stderr and f"{runs}:5:" in result.stderr
    assert "2 of 8 trajectory line(s) unreadable" in result.stderr


def test_table_output_reports_unreadable_lines(app: typer.Typer, run_files: tuple[Path, Path]) -> None:
    catalog, runs = run_files
    result = CliRunner().invoke(app, _args(SUITE, runs, catalog), terminal_width=160)
    assert result.exit_code == 0 and "unreadable trajectory lines 2 of 8" in result.stdout


def test_unreadable_suite_is_a_clean_error(
    app: typer.Typer, run_files: tuple[Path, Path], tmp_path: Path
) -> None:
    catalog, runs = run_files
    suite = tmp_path / "suite.json"
    suite.write_bytes(SUITE.read_text().encode("utf-16-le"))  # NUL bytes, no byte-order mark
    result = CliRunner().invoke(app, _args(suite, runs, catalog))
    assert result.exit_code == 2
    assert "cannot read the suite" in result.stderr and "NUL bytes" in result.stderr
    assert "Traceback" not in result.output


def test_damaged_gzip_suite_exits_3(run_files: tuple[Path, Path], tmp_path: Path) -> None:
    from shoparena.cli.main import app as main_app

    catalog, runs = run_files
    suite = tmp_path / "suite.json.gz"
    suite.write_bytes(gzip.compress(SUITE.read_bytes())[:500])
    result = CliRunner().invoke(main_app, _args(suite, runs, catalog))
    assert result.exit_code == 3 and "gzip" in result.stderr and "Traceback" not in result.output


def test_suite_without_readable_problems_exits_2(
    app: typer.Typer, run_files: tuple[Path, Path], tmp_path: Path
) -> None:
    catalog, runs = run_files
    suite = tmp_path / "suite.jsonl"
    suite.write_text('{"query": ""}\nnot json\n')
    result = CliRunner().invoke(app, [*_args(suite, runs, catalog), "--json"])
    assert result.exit_code == 2 and "no readable problems" in result.stderr and result.stdout == ""


def test_out_equal_to_an_input_is_refused(app: typer.Typer, run_files: tuple[Path, Path]) -> None:
    catalog, runs = run_files
    before = runs.read_bytes()
    result = CliRunner().invoke(app, [*_args(SUITE, runs, catalog), "--out", str(runs)])
    assert result.exit_code == 2 and runs.read_bytes() == before
