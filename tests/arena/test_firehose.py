"""``arena firehose``: race directories with harness truth, judged races, weights; seeded teacher errors."""

from __future__ import annotations

import json
from pathlib import Path

from arena_helpers import needs_bwrap
from miner_helpers import read_jsonl
from typer.testing import CliRunner

from shoparena.arena.firehose import DEFAULT_POPULATION, FirehoseConfig, Teacher, run_firehose
from shoparena.cli.main import app

pytestmark = needs_bwrap


def _last_ids(envelope: dict) -> str | None:
    for step in reversed(envelope.get("dialogue") or []):
        for call in (step.get("completion", {}).get("message", {}).get("tool_call") or [])[::-1]:
            if call["name"] == "recommend_product":
                return call["parameters"].get("product_ids")
    return None


def test_cli_writes_race_directories_with_truth_and_weights(tmp_path: Path, shop_world):
    out = tmp_path / "fh"
    args = [
        "arena",
        "firehose",
        "--suite",
        str(shop_world.product_only),
        "--suite",
        str(shop_world.mixed),
        "--index",
        str(shop_world.index),
        "--races",
        "2",
        "--problems-per-race",
        "1",
        "--out",
        str(out),
    ]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    for race in ("race-000", "race-001"):
        race_dir = out / race
        race_doc = json.loads((race_dir / "race.json").read_text())
        assert race_doc["race"]["race_id"].endswith(race[-3:])
        assert (race_dir / "weights.json").exists() and (race_dir / "incentives.json").exists()
        for name, kind, teacher in DEFAULT_POPULATION:
            truth = json.loads((race_dir / "agents" / name / "miner.json").read_text())
            assert truth["kind"] == kind and truth["teacher"] == teacher
    # Rotation: race 0 draws from the first partition, race 1 from the second.
    suites = [json.loads((out / r / "race_suite.json").read_text()) for r in ("race-000", "race-001")]
    first = {p["query"] for p in json.loads(shop_world.product_only.read_text())}
    assert suites[0][0]["query"] in first and suites[1][0]["query"] not in first
    before = (out / "race-000" / "race.json").read_bytes()
    assert CliRunner().invoke(app, args).exit_code == 0  # resumes: finished races are left alone
    assert (out / "race-000" / "race.json").read_bytes() == before


def test_teacher_error_rate_changes_the_final_pick(tmp_path: Path, shop_world):
    config = FirehoseConfig(
        suites=[shop_world.product_only],
        index=shop_world.index,
        out=tmp_path / "fh",
        races=1,
        problems_per_race=2,
        timeout_s=10,
        teachers={"careful": Teacher(), "broken": Teacher(error_rate=1.0)},
        population=[("agentic-careful", "agentic", "careful"), ("agentic-broken", "agentic", "broken")],
    )
    run_firehose(config, search=shop_world.engine)
    run = tmp_path / "fh" / "race-000" / "agents"
    careful = {e["problem_id"]: _last_ids(e) for e in read_jsonl(run / "agentic-careful" / "output.jsonl")}
    broken = {e["problem_id"]: _last_ids(e) for e in read_jsonl(run / "agentic-broken" / "output.jsonl")}
    assert careful.keys() == broken.keys() and all(careful[p] != broken[p] for p in careful)
