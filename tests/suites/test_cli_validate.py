"""``shoparena suite validate`` through Typer's CliRunner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from world import SHARED_DATA

SHARED = sorted(SHARED_DATA.glob("shoppingbench/*.jsonl")) + sorted(
    SHARED_DATA.glob("oro/problem_suite_*.json")
)


@pytest.mark.parametrize("path", SHARED, ids=lambda p: p.name)
def test_validate_shared_files(app: typer.Typer, path: Path) -> None:
    result = CliRunner().invoke(app, ["suite", "validate", str(path), "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    assert summary["quarantined"] == 0 and summary["read"] == summary["kept"] > 0
    assert sum(summary["by_category"].values()) == summary["kept"]


def test_validate_table_output(app: typer.Typer) -> None:
    result = CliRunner().invoke(
        app, ["suite", "validate", str(SHARED_DATA / "oro" / "problem_suite_v1.json")]
    )
    assert result.exit_code == 0 and "Voucher" in result.output and "hard" in result.output


def test_validate_bad_file_exits_1_naming_record_and_field(app: typer.Typer, tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    lines = [
        {"query": "ok", "reward": {"product_id": "1", "title": ["t"]}},
        {
            "query": "cheap mugs",
            "reward": [{"product_id": "1", "title": ["t"]}],
            "voucher": {
                "voucher_type": "platform",
                "threshold": 1,
                "discount_type": "bogo",
                "face_value": 1,
                "discount": None,
                "cap": None,
                "price_after_voucher": 1.0,
                "budget": 2,
            },
        },
    ]
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    result = CliRunner().invoke(app, ["suite", "validate", str(path)], terminal_width=200)
    assert result.exit_code == 1
    assert "bad.jsonl:line 2" in result.output and "voucher.discount_type" in result.output
    assert "cheap mugs" in result.output
