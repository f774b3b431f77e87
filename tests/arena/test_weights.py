"""ORO's pinned u16 weight vector: test table, taper, deregistration, ties, skip, byte identity."""

from __future__ import annotations

import random

import pytest

from shoparena.arena.race_rules import Qualifier, Race, RaceStatus
from shoparena.arena.weights import (
    U16_MAX,
    WeightConfig,
    compute_weights,
    pinned_weights,
    tail_weights,
    weights_for_tick,
)


def _race(n: int, *, race_id: str = "r1", status: RaceStatus = RaceStatus.RACE_COMPLETE) -> Race:
    # Scores strictly decrease with i, so hotkey hk{i} is rank i + 1.
    qualifiers = [
        Qualifier(hotkey=f"hk{i}", agent_version_id=f"v{i:03d}", race_score=1.0 - i / 1000) for i in range(n)
    ]
    return Race(race_id=race_id, status=status, qualifiers=qualifiers)


def _uids(n: int) -> dict[str, int]:
    return {f"hk{i}": i + 1 for i in range(n)}  # UID 0 is the burn UID


@pytest.mark.parametrize(
    ("n", "tail_sum", "top"),
    [(2, 0, 21845), (3, 0, 21845), (6, 3, 21846), (30, 105, 21880), (50, 300, 21945), (100, 1225, 22253)],
)
def test_reference_table(n: int, tail_sum: int, top: int) -> None:
    vector = compute_weights(_race(n), _uids(n))
    k = n // 2
    assert vector.tail_sum == tail_sum == sum(tail_weights(n))
    assert (vector.top, vector.burn) == (top, U16_MAX)
    assert vector.weights[0] == U16_MAX and vector.weights[1] == top
    for rank in range(2, n + 1):
        expected = k + 1 - rank if rank <= k else 0
        assert vector.weights[rank] == expected, rank
    assert vector.uids == list(range(n + 1)) and vector.top_hotkey == "hk0"
    # The top share is exactly t_top of the total.
    assert abs(top / sum(vector.weights) - 0.25) < 1e-4


def test_one_finisher_means_everything_burns() -> None:
    vector = compute_weights(_race(1), _uids(1), n_uids=4)
    assert vector is not None and vector.weights == [U16_MAX, 0, 0, 0] and vector.top_hotkey is None


def test_no_finisher_writes_nothing_unless_burn_is_asked_for() -> None:
    assert compute_weights(_race(0), _uids(0), n_uids=4) is None  # ORO submits nothing
    vector = compute_weights(_race(0), _uids(0), n_uids=4, config=WeightConfig(no_finishers="burn"))
    assert vector is not None and vector.weights == [U16_MAX, 0, 0, 0]


def test_finishers_need_hotkey_and_score_but_zero_counts() -> None:
    race = Race(
        race_id="r",
        status=RaceStatus.RACE_COMPLETE,
        qualifiers=[
            Qualifier(hotkey="a", agent_version_id="1", race_score=0.9),
            Qualifier(hotkey="b", agent_version_id="2", race_score=None),  # DNF
            Qualifier(hotkey=None, agent_version_id="3", race_score=0.8),
            Qualifier(hotkey="c", agent_version_id="4", race_score=0.0),
            Qualifier(hotkey="d", agent_version_id="5", race_score=0.1),
            Qualifier(hotkey="e", agent_version_id="6", race_score=0.2),
        ],
    )
    vector = compute_weights(race, {"a": 1, "b": 2, "c": 3, "d": 4, "e": 5})
    # N = 4 finishers (a, e, d, c) -> K = 2 -> only rank 2 (e) gets 1.
    assert vector.weights == [U16_MAX, 21845, 0, 0, 0, 1]


def test_ties_break_on_agent_version_id_as_string() -> None:
    race = Race(
        race_id="r",
        status=RaceStatus.RACE_COMPLETE,
        qualifiers=[
            Qualifier(hotkey="x", agent_version_id="v9", race_score=0.5),
            Qualifier(hotkey="y", agent_version_id="v10", race_score=0.5),  # "v10" < "v9" as strings
            Qualifier(hotkey="z", agent_version_id="v1", race_score=0.4),
            Qualifier(hotkey="w", agent_version_id="v0", race_score=0.3),
            Qualifier(hotkey="u", agent_version_id="v5", race_score=0.2),
            Qualifier(hotkey="t", agent_version_id="v6", race_score=0.1),
        ],
    )
    vector = compute_weights(race, {"x": 1, "y": 2, "z": 3, "w": 4, "u": 5, "t": 6})
    assert vector.top_hotkey == "y"
    assert vector.weights[1:4] == [2, 21846, 1]  # x rank 2, y top, z rank 3


def test_deregistration_recomputes_from_surviving_tail_with_full_n() -> None:
    uids = _uids(6)
    del uids["hk1"]  # rank 2 (weight 2) deregistered
    vector = compute_weights(_race(6), uids, n_uids=7)
    assert vector.tail_sum == 1 and vector.weights[3] == 1  # rank 3 keeps its full-N weight
    assert vector.top == pinned_weights(1)[0] == 21845 and vector.weights[0] == U16_MAX
    assert vector.weights[2] == 0
    del uids["hk5"]  # rank 6 had no weight: nothing changes
    assert compute_weights(_race(6), uids, n_uids=7).weights == vector.weights


def test_top_gone_sets_only_burn_and_tail() -> None:
    uids = _uids(6)
    del uids["hk0"]
    vector = compute_weights(_race(6), uids, n_uids=7)
    assert vector.top_hotkey is None and vector.top == 0
    assert vector.weights == [U16_MAX, 0, 2, 1, 0, 0, 0]


def test_top_on_burn_uid_adds() -> None:
    uids = _uids(6)
    uids["hk0"] = 0
    vector = compute_weights(_race(6), uids, n_uids=7)
    assert vector.weights[0] == U16_MAX + 21846


def test_low_burn_branch_and_its_error() -> None:
    cfg = WeightConfig(t_top=0.75, t_burn=0.25)
    vector = compute_weights(_race(6), _uids(6), config=cfg)
    assert (vector.top, vector.burn) == (U16_MAX, round(0.25 * U16_MAX / 0.75) - 3)
    assert pinned_weights(0, 1.0, 0.0) == (U16_MAX, 0)
    with pytest.raises(ValueError, match="burn budget"):
        compute_weights(_race(6), _uids(6), config=WeightConfig(t_top=1.0, t_burn=0.0))


def test_config_and_input_validation() -> None:
    with pytest.raises(ValueError, match=r"t_top \+ WeightConfig\.t_burn"):
        WeightConfig(t_top=0.3, t_burn=0.6)
    with pytest.raises(ValueError, match="RACE_COMPLETE"):
        compute_weights(_race(4, status=RaceStatus.RACE_RUNNING), _uids(4))
    with pytest.raises(ValueError, match="n_uids"):
        compute_weights(_race(4), _uids(4), n_uids=3)


def test_tick_skips_without_a_completed_race_and_takes_the_newest() -> None:
    running = _race(6, race_id="new", status=RaceStatus.RACE_RUNNING)
    cancelled = _race(0, race_id="c", status=RaceStatus.CANCELLED)
    assert weights_for_tick([running, cancelled], _uids(6)) is None
    assert weights_for_tick([], _uids(6)) is None
    older = _race(30, race_id="older")
    newer = _race(6, race_id="newer")
    vector = weights_for_tick([running, newer, older], _uids(30))
    assert vector is not None and vector.race_id == "newer" and vector.top == 21846


def test_identical_inputs_give_identical_bytes() -> None:
    race = _race(50)
    shuffled = race.model_copy(update={"qualifiers": random.Random(3).sample(race.qualifiers, 50)})
    uids = _uids(50)
    reordered = dict(reversed(list(uids.items())))
    first = compute_weights(race, uids).to_bytes()
    assert first == compute_weights(shuffled, reordered).to_bytes()
    assert first == compute_weights(Race.model_validate_json(race.model_dump_json()), uids).to_bytes()
    assert first != compute_weights(_race(49), uids, n_uids=51).to_bytes()


def test_rank_by_race_rank_honours_published_ranks() -> None:
    race = _race(6)
    ranked = [
        q.model_copy(update={"race_rank": 2 if q.hotkey == "hk0" else 1 if q.hotkey == "hk3" else None})
        for q in race.qualifiers
    ]
    race = race.model_copy(update={"qualifiers": ranked})
    vector = compute_weights(race, _uids(6), config=WeightConfig(rank_by="race_rank"))
    assert vector.top_hotkey == "hk3" and vector.weights[1] == 2  # hk0 now rank 2
