"""Race policy: qualifying threshold, decaying incumbent margin, ranking and determinism."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest

from shoparena.arena.race_rules import (
    DecayShape,
    Incumbent,
    QualificationType,
    Qualifier,
    Race,
    RaceConfig,
    RaceStatus,
    margin_at,
    qualifying_threshold,
    required_score,
    resolve_race,
    select_qualifiers,
)
from shoparena.arena.weights import WeightConfig, compute_weights

T0 = datetime(2026, 5, 1, 19, 0, tzinfo=UTC)
DAY = 86400.0
CFG = RaceConfig(qualifying_floor=0.1, qualifying_ratio=0.9, margin0=0.2, margin_min=0.05, half_life_s=DAY)


def _q(hotkey: str, score: float | None, version: str | None = None, **kw) -> Qualifier:
    return Qualifier(hotkey=hotkey, agent_version_id=version or f"v-{hotkey}", race_score=score, **kw)


def _race(*qualifiers: Qualifier, completed_at: datetime = T0) -> Race:
    return Race(
        race_id="r", status=RaceStatus.RACE_COMPLETE, qualifiers=list(qualifiers), completed_at=completed_at
    )


def test_qualifying_threshold_floor_and_ratio() -> None:
    assert qualifying_threshold([0.5, 0.8], CFG) == pytest.approx(0.72)
    assert qualifying_threshold([0.05], CFG) == 0.1
    assert qualifying_threshold([], CFG) == 0.1


def test_select_qualifiers() -> None:
    candidates = [
        Qualifier(hotkey="a", agent_version_id="a1", qualifying_score=0.80),
        Qualifier(hotkey="a", agent_version_id="a2", qualifying_score=0.70),  # a keeps its best version
        Qualifier(hotkey="b", agent_version_id="b1", qualifying_score=0.72),  # exactly 0.9 * 0.8: qualifies
        Qualifier(hotkey="c", agent_version_id="c1", qualifying_score=0.71),
        Qualifier(hotkey="inc", agent_version_id="i1", qualifying_score=0.30),
    ]
    incumbent = Incumbent(hotkey="inc", top_at=T0)
    config = CFG.model_copy(update={"qualifying_ratio": 0.9})
    result = select_qualifiers(candidates, config, incumbent)
    assert result.status is RaceStatus.RACE_RUNNING
    assert result.threshold == 0.72
    assert [q.agent_version_id for q in result.qualifiers] == ["a1", "b1", "i1"]
    assert result.qualifiers[-1].qualification_type is QualificationType.INCUMBENT
    assert [q.agent_version_id for q in result.rejected] == ["c1"]


def test_cancelled_when_no_scored_qualifier_meets_threshold() -> None:
    config = RaceConfig(qualifying_floor=0.5, qualifying_ratio=0.9)
    candidates = [
        Qualifier(hotkey="a", agent_version_id="a1", qualifying_score=0.4),
        Qualifier(hotkey="inc", agent_version_id="i1", qualifying_score=0.9),
    ]
    result = select_qualifiers(candidates[:1], config)
    assert result.status is RaceStatus.CANCELLED and result.qualifiers == [] and result.threshold == 0.5
    # The incumbent alone does not make a race, even though it would set the ratio threshold.
    alone = select_qualifiers(candidates, config, Incumbent(hotkey="inc", top_at=T0))
    assert alone.status is RaceStatus.CANCELLED


def test_margin_decay_shapes() -> None:
    assert margin_at(0, CFG) == 0.2
    assert margin_at(DAY, CFG) == pytest.approx(0.125)
    assert margin_at(30 * DAY, CFG) == pytest.approx(0.05, abs=1e-8)
    assert margin_at(-5, CFG) == 0.2  # clock skew never raises the bar above margin0
    linear = CFG.model_copy(update={"decay_shape": DecayShape.LINEAR, "linear_decay_s": 4 * DAY})
    assert [margin_at(d * DAY, linear) for d in (0, 2, 4, 9)] == pytest.approx([0.2, 0.125, 0.05, 0.05])
    assert required_score(0.5, 0, CFG) == pytest.approx(0.6)
    with pytest.raises(ValueError, match="margin_min"):
        RaceConfig(margin0=0.01, margin_min=0.02)


def test_challenger_just_below_threshold_loses_early_and_wins_later() -> None:
    incumbent = Incumbent(hotkey="inc", top_at=T0)
    qualifiers = (_q("inc", 0.5), _q("chal", 0.56), _q("third", 0.4))
    early = resolve_race(_race(*qualifiers, completed_at=T0 + timedelta(hours=1)), incumbent, CFG)
    assert early.top_hotkey == "inc" and early.decision is not None and not early.decision.promoted
    assert early.decision.required_score > 0.56 and early.decision.candidate_hotkey == "chal"
    assert [q.hotkey for q in early.ranking] == ["inc", "chal", "third"]
    assert [q.race_rank for q in early.ranking] == [1, 2, 3]
    assert early.incumbent is not None and early.incumbent.top_at == T0  # the incumbent keeps its clock

    late_time = T0 + timedelta(days=10)
    late = resolve_race(_race(*qualifiers, completed_at=late_time), incumbent, CFG)
    assert late.top_hotkey == "chal" and late.decision is not None and late.decision.promoted
    assert late.decision.required_score < 0.56
    assert [q.hotkey for q in late.ranking] == ["chal", "inc", "third"]
    assert late.incumbent == Incumbent(
        hotkey="chal", agent_version_id="v-chal", top_at=late_time, top_score=0.56
    )


def test_exact_boundary_needs_strictly_more() -> None:
    config = RaceConfig(margin0=0.25, margin_min=0.25)  # constant margin: required = 0.5 * 1.25 = 0.625
    incumbent = Incumbent(hotkey="inc", top_at=T0)
    at = resolve_race(_race(_q("inc", 0.5), _q("chal", 0.625)), incumbent, config)
    assert at.decision is not None and at.decision.required_score == 0.625 and not at.decision.promoted
    above = resolve_race(_race(_q("inc", 0.5), _q("chal", 0.6250001)), incumbent, config)
    assert above.top_hotkey == "chal"
    # Decimal margins: 0.5 * 1.1 is 0.55 after rounding, so a 4-decimal score of 0.55 is "at", not above.
    decimal = RaceConfig(margin0=0.1, margin_min=0.1)
    assert resolve_race(_race(_q("inc", 0.5), _q("chal", 0.55)), incumbent, decimal).top_hotkey == "inc"
    assert resolve_race(_race(_q("inc", 0.5), _q("chal", 0.5501)), incumbent, decimal).top_hotkey == "chal"


def test_compares_with_the_incumbents_score_in_the_same_race() -> None:
    incumbent = Incumbent(hotkey="inc", top_at=T0, top_score=0.9)  # old score is not used
    outcome = resolve_race(_race(_q("inc", 0.3), _q("chal", 0.5)), incumbent, CFG)
    assert outcome.decision is not None and outcome.decision.current_top_score == 0.3
    assert outcome.top_hotkey == "chal"


def test_no_incumbent_highest_score_wins_with_oro_tie_break() -> None:
    outcome = resolve_race(_race(_q("a", 0.7, "v9"), _q("b", 0.7, "v10"), _q("c", None)), None, CFG)
    assert [q.hotkey for q in outcome.ranking] == ["b", "a"]  # DNF excluded; "v10" < "v9"
    assert outcome.decision is None and outcome.top_hotkey == "b"
    assert outcome.incumbent is not None and outcome.incumbent.top_at == T0


def test_incumbent_that_did_not_finish_loses_the_top() -> None:
    incumbent = Incumbent(hotkey="inc", top_at=T0)
    outcome = resolve_race(_race(_q("inc", None), _q("chal", 0.2)), incumbent, CFG)
    assert outcome.top_hotkey == "chal" and outcome.decision is None


def test_resolution_is_deterministic_and_feeds_weights() -> None:
    incumbent = Incumbent(hotkey="h0", top_at=T0)
    qualifiers = [_q(f"h{i}", round(0.5 + i / 100, 3)) for i in range(8)]
    base = resolve_race(_race(*qualifiers, completed_at=T0 + timedelta(hours=2)), incumbent, CFG)
    for seed in range(3):
        shuffled = random.Random(seed).sample(qualifiers, len(qualifiers))
        again = resolve_race(_race(*shuffled, completed_at=T0 + timedelta(hours=2)), incumbent, CFG)
        assert again.model_dump_json() == base.model_dump_json()
    assert base.top_hotkey == "h0"  # 0.57 does not beat 0.5 * (1 + ~0.2)
    ranked_race = Race(race_id="r", status=RaceStatus.RACE_COMPLETE, qualifiers=base.ranking)
    uids = {f"h{i}": i + 1 for i in range(8)}
    protected = compute_weights(ranked_race, uids, config=WeightConfig(rank_by="race_rank"))
    plain = compute_weights(ranked_race, uids)
    assert protected.top_hotkey == "h0" and plain.top_hotkey == "h7"


def test_invalid_inputs() -> None:
    with pytest.raises(ValueError, match="RACE_COMPLETE"):
        resolve_race(Race(race_id="r", status=RaceStatus.RACE_RUNNING), None, CFG)
    with pytest.raises(ValueError, match="completed_at"):
        resolve_race(
            Race(race_id="r", status=RaceStatus.RACE_COMPLETE, qualifiers=[_q("inc", 0.5)]),
            Incumbent(hotkey="inc", top_at=T0),
            CFG,
        )
    with pytest.raises(ValueError, match="timezone-aware"):
        Incumbent(hotkey="x", top_at=datetime(2026, 5, 1))
