"""Fuzzed and damaged files through the CLI: documented exit codes, one-line errors, never a traceback."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from fuzz_helpers import (
    catalog_seed_lines,
    corrupt_gzip,
    encode_file,
    mutate_line,
    mutate_value,
    problem_seed_records,
    trajectory_seed_lines,
)
from typer.testing import CliRunner, Result

from shoparena.cli.main import app
from world import SHARED_DATA

#: Documented exit codes per command (docs/reliability.md).
EXIT_CODES = {
    "catalog validate": {0, 1, 2, 3},
    "catalog index": {0, 2, 3},
    "suite validate": {0, 1, 2, 3},
    "score": {0, 2, 3},
}


def _invoke(args: list[str]) -> Result:
    result = CliRunner().invoke(app, args)
    command = " ".join(args[:2]) if args[0] != "score" else "score"
    assert result.exit_code in EXIT_CODES[command], (args, result.exit_code, result.output[-800:])
    # SystemExit is how Typer exits; anything else escaped as a traceback.
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output
    if result.exit_code >= 2:
        assert result.stderr.strip(), "an error exit must say why"
    return result


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Path]]:
    """Seeded fuzzed files: catalogs, suites and trajectory files, each also gzip-damaged."""
    tmp = tmp_path_factory.mktemp("fuzzcli")
    rng = random.Random(20261201)
    cat_seeds = catalog_seed_lines(tmp, 60)
    records = problem_seed_records()
    traj_seeds = trajectory_seed_lines()
    out: dict[str, list[Path]] = {"catalog": [], "suite": [], "traj": []}
    for i in range(6):
        lines = [
            mutate_line(rng, rng.choice(cat_seeds)) if rng.random() < 0.5 else rng.choice(cat_seeds)
            for _ in range(40)
        ]
        data, _ = encode_file(rng, b"\n".join(lines) + b"\n")
        out["catalog"].append(tmp / f"c{i}.jsonl")
        out["catalog"][-1].write_bytes(data)
        chosen = [mutate_value(rng, r) if rng.random() < 0.5 else r for r in rng.sample(records, 6)]
        data, _ = encode_file(rng, json.dumps(chosen, ensure_ascii=False).encode("utf-8", "surrogatepass"))
        out["suite"].append(tmp / f"s{i}.json")
        out["suite"][-1].write_bytes(data)
        lines = [
            mutate_line(rng, rng.choice(traj_seeds)) if rng.random() < 0.5 else rng.choice(traj_seeds)
            for _ in range(8)
        ]
        data, _ = encode_file(rng, b"\n".join(lines) + b"\n")
        out["traj"].append(tmp / f"t{i}.jsonl")
        out["traj"][-1].write_bytes(data)
    for kind in list(out):
        for i, path in enumerate(list(out[kind][:3])):
            damaged, _ = corrupt_gzip(rng, path.read_bytes())
            gz = path.with_name(f"{path.name}.{i}.gz")
            gz.write_bytes(damaged)
            out[kind].append(gz)
    return out


def test_catalog_validate_and_index(files: dict[str, list[Path]], tmp_path: Path) -> None:
    for i, path in enumerate(files["catalog"]):
        result = _invoke(
            ["catalog", "validate", str(path), "--json", "--quarantine", str(tmp_path / f"q{i}")]
        )
        if result.exit_code in (0, 1):
            summary = json.loads(result.stdout)
            assert summary["read"] == summary["kept"] + summary["quarantined"]
            quarantined = (tmp_path / f"q{i}").read_bytes().splitlines()
            assert len(quarantined) == summary["quarantined"]
        _invoke(["catalog", "index", str(path), "--out", str(tmp_path / f"ix{i}"), "--json"])


def test_suite_validate(files: dict[str, list[Path]]) -> None:
    for path in files["suite"]:
        result = _invoke(["suite", "validate", str(path), "--json"])
        if result.exit_code in (0, 1):
            summary = json.loads(result.stdout)
            assert summary["read"] == summary["kept"] + summary["quarantined"]
            assert all(q["reason"] for q in summary["problems_quarantined"])


def test_score(files: dict[str, list[Path]]) -> None:
    catalog = next(p for p in files["catalog"] if p.suffix == ".jsonl")
    good_suite = SHARED_DATA / "oro" / "problem_suite_v1.json"
    for suite, traj in zip([good_suite, *files["suite"]], files["traj"], strict=False):
        result = _invoke(
            ["score", "--suite", str(suite), "--trajectories", str(traj), "--index", str(catalog), "--json"]
        )
        if result.exit_code == 0:
            payload = json.loads(result.stdout)  # stdout is only the JSON
            lines = payload["trajectory_lines"]
            assert lines["read"] == lines["kept"] + lines["quarantined"]
