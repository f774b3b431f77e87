"""A firehose with no worker counts takes them from the machine and gives the serial run's outcomes."""

from __future__ import annotations

import json
from pathlib import Path

from arena_helpers import FIREHOSE_POPULATION, compared_firehose, needs_bwrap, race_outcomes

from shoparena.arena.firehose import FirehoseConfig, machine_defaults, run_firehose
from shoparena.runs.machine import MIB


def _bare(**settings) -> FirehoseConfig:
    return FirehoseConfig(suites=[Path("bank.json")], index=Path("index"), out=Path("out"), **settings)


def test_one_race_process_per_cpu_with_four_sandboxes_within_memory():
    roomy = machine_defaults(_bare(), cpus=6, memory_bytes=64 * 1024 * MIB)
    assert (roomy.workers, roomy.parallel_races) == (4, 6)
    # 3 GiB holds two races of 768 MiB + 4 x 128 MiB, not three.
    tight = machine_defaults(_bare(), cpus=6, memory_bytes=3 * 1024 * MIB)
    assert (tight.workers, tight.parallel_races) == (4, 2)
    # Too little for one race with four sandboxes: one race, the sandboxes that fit, never zero.
    starved = machine_defaults(_bare(), cpus=6, memory_bytes=1024 * MIB)
    assert (starved.workers, starved.parallel_races) == (2, 1)
    assert machine_defaults(_bare(), cpus=6, memory_bytes=MIB).workers == 1
    # A count that is set is kept, and the other is sized around it.
    given = machine_defaults(_bare(workers=8, parallel_races=None), cpus=6, memory_bytes=3 * 1024 * MIB)
    assert (given.workers, given.parallel_races) == (8, 1)
    assert machine_defaults(_bare(workers=1, parallel_races=3), cpus=6).parallel_races == 3


@needs_bwrap
def test_no_flags_use_the_machine_and_match_the_serial_run(shop_world, tmp_path: Path, monkeypatch):
    monkeypatch.setenv("SHOPARENA_CPUS", "2")  # two race processes whatever the host, so both paths run
    serial = tmp_path / "serial"
    run_firehose(
        compared_firehose(shop_world, serial, races=2, workers=1, parallel_races=1), search=shop_world.engine
    )
    auto = tmp_path / "auto"
    run_firehose(compared_firehose(shop_world, auto, races=2, workers=None))
    written = json.loads((auto / "firehose.json").read_text(encoding="utf-8"))
    assert (written["workers"], written["parallel_races"]) == (4, 2)  # resolved values, for the record
    expected = race_outcomes(serial)
    assert len(expected) == 2 * 2 * len(FIREHOSE_POPULATION)
    assert race_outcomes(auto) == expected
    for race in ("race-000", "race-001"):
        for name in ("race.json", "weights.json"):
            assert (auto / race / name).read_bytes() == (serial / race / name).read_bytes()
