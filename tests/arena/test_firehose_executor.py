"""`arena firehose --executor ray`: one Ray task per race gives the process outcomes, and resumes it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from arena_helpers import FIREHOSE_POPULATION, compared_firehose, needs_bwrap
from arena_helpers import race_outcomes as outcomes
from typer.testing import CliRunner

from shoparena.arena.firehose import FirehoseConfig, run_firehose
from shoparena.cli.main import app

pytestmark = needs_bwrap

ray = pytest.importorskip("ray", reason="Ray not installed (pip install 'shoparena[scale]')")


@pytest.fixture(scope="module")
def local_ray():
    """One local Ray for the module (2 CPUs: with ``workers=1`` both races run at once)."""
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def _config(shop_world, out: Path, executor: str) -> FirehoseConfig:
    return compared_firehose(shop_world, out, races=2, executor=executor)


@pytest.fixture(scope="module")
def process_run(shop_world, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("fh") / "process"
    run_firehose(_config(shop_world, out, "process"), search=shop_world.engine)
    return out


def test_ray_races_match_the_process_path(shop_world, process_run: Path, tmp_path: Path, local_ray):
    out = tmp_path / "ray"
    lines = []
    dirs = run_firehose(_config(shop_world, out, "ray"), progress=lines.append)
    assert [d.name for d in dirs] == ["race-000", "race-001"]
    assert lines == ["race 1/2 done", "race 2/2 done"]
    expected = outcomes(process_run)
    assert len(expected) == 2 * 2 * len(FIREHOSE_POPULATION)
    assert {status for status, _, _ in expected.values()} >= {"SUCCESS", "FAILED"}
    assert outcomes(out) == expected
    for race in ("race-000", "race-001"):
        # Judged scores, qualifiers, ranking and weights follow from the outcomes: byte-identical.
        for name in ("race.json", "weights.json"):
            assert (out / race / name).read_bytes() == (process_run / race / name).read_bytes()


def test_ray_resumes_a_partial_process_run(process_run: Path, tmp_path: Path, local_ray):
    partial = tmp_path / "partial"
    shutil.copytree(process_run, partial)
    finished_race = (partial / "race-000" / "race.json").read_bytes()
    race = partial / "race-001"
    (race / "race.json").unlink()  # interrupted before judging: the race is not finished
    kept_path = race / "agents" / "agentic-careful" / "output.jsonl"
    kept_line = kept_path.read_text(encoding="utf-8").split("\n")[0]
    kept_path.write_text(kept_line + "\n", encoding="utf-8")  # one of its two problems recorded
    (race / "agents" / "forger" / "output.jsonl").unlink()  # none recorded
    config = FirehoseConfig.model_validate_json((process_run / "firehose.json").read_text())
    config = config.model_copy(update={"out": partial, "executor": "ray"})
    done = []
    run_firehose(config, progress=done.append)
    assert done == ["race 2/2 done"]  # only the unfinished race ran
    assert (partial / "race-000" / "race.json").read_bytes() == finished_race
    assert kept_path.read_text(encoding="utf-8").split("\n")[0] == kept_line  # recorded problem not re-run
    assert outcomes(partial) == outcomes(process_run)
    assert (race / "weights.json").read_bytes() == (process_run / "race-001" / "weights.json").read_bytes()


def test_cli_rejects_an_unknown_executor(shop_world, tmp_path: Path):
    args = ["arena", "firehose", "--suite", str(shop_world.mixed), "--index", str(shop_world.index)]
    result = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "fh"), "--executor", "dask"])
    assert result.exit_code == 2
    assert "--executor 'dask'" in result.output and "process, ray" in result.output
    assert not (tmp_path / "fh").exists()


def test_a_task_asking_for_more_cpus_than_any_node_still_runs(local_ray):
    from shoparena.arena.agent_runner import safe_name
    from shoparena.arena.executor import RayExecutor

    executor = RayExecutor(2)
    assert executor.largest_node_cpus() == 2
    # A race with more sandboxes than the biggest node has CPUs is capped to that node, not left pending.
    assert sorted(executor.imap(safe_name, ["a b", "c/d"], cpus_per_task=8)) == ["a_b", "c_d"]
