"""Replays of the cases where ORO's validator (v1.0.79) and shoparena's earlier choices part (issue 34).

Each test asserts ORO's outcome under the defaults and shoparena's earlier outcome under the named option
(docs/arena.md and docs/judge.md, "ORO parity").
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from shoparena.arena.race_rules import Incumbent, Qualifier, Race, RaceConfig, RaceStatus, resolve_race
from shoparena.arena.race_stage import RaceRunConfig
from shoparena.arena.weights import (
    NO_FINISHERS,
    U16_MAX,
    WeightConfig,
    compute_weights,
    weights_document,
    weights_for_tick,
)
from shoparena.judge import JudgeInput, JudgeStatus, LLMJudge, LLMJudgeConfig, TrustedSummary, combine_scores
from shoparena.llm import AuthError, ScriptedBackend

T0 = datetime(2026, 5, 1, tzinfo=UTC)
OK = '{"reasoning_quality": 0.7, "explanation": "Gate 4 failed: one candidate."}'


def _q(hotkey: str, score: float | None, version: str | None = None) -> Qualifier:
    return Qualifier(hotkey=hotkey, agent_version_id=version or f"v-{hotkey}", race_score=score)


def _complete(*qualifiers: Qualifier, race_id: str = "r", completed_at: datetime | None = None) -> Race:
    return Race(race_id=race_id, status=RaceStatus.RACE_COMPLETE, qualifiers=list(qualifiers),
                completed_at=completed_at)


def test_top_share_goes_to_the_best_race_score_not_the_protected_incumbent() -> None:
    race = _complete(_q("inc", 0.50), _q("chal", 0.52), _q("c", 0.30), _q("d", 0.20),
                     completed_at=T0 + timedelta(days=1))
    outcome = resolve_race(race, Incumbent(hotkey="inc", top_at=T0), RaceConfig())
    assert outcome.decision is not None and outcome.decision.required_score == 0.520874
    assert not outcome.decision.promoted and outcome.top_hotkey == "inc"  # the race keeps the incumbent
    ranked = race.model_copy(update={"qualifiers": outcome.ranking})
    uids = {"inc": 1, "chal": 2, "c": 3, "d": 4}
    oro = compute_weights(ranked, uids, config=RaceRunConfig().weights)  # the race stage's default
    assert oro is not None and oro.weights == [U16_MAX, 1, 21845, 0, 0] and oro.top_hotkey == "chal"
    protected = compute_weights(ranked, uids, config=WeightConfig(rank_by="race_rank"))
    assert protected is not None and protected.weights == [U16_MAX, 21845, 1, 0, 0]


def _outage_verdicts(**config) -> tuple[LLMJudge, list]:
    """50 problems judged, then three 401s trip the breaker and the last 48 are skipped."""
    backend = ScriptedBackend([OK] * 50 + [AuthError("expired", status_code=401)] * 3, name="judge")
    judge = LLMJudge([("judge-model", backend)], LLMJudgeConfig(**config))
    judge_input = JudgeInput(query="a pink tumbler", trusted=TrustedSummary())  # the judge only renders it
    verdicts = [judge.judge(judge_input, problem_id=f"p{i}") for i in range(101)]
    assert len(backend.requests) == 53  # nothing is called once the breaker is open
    return judge, verdicts


def test_judge_outage_of_three_failures_among_fifty_three() -> None:
    judge, verdicts = _outage_verdicts()
    statuses = [v.status for v in verdicts]
    skipped = [JudgeStatus.SKIPPED_BREAKER] * 48
    assert statuses == [JudgeStatus.OK] * 50 + [JudgeStatus.UNAVAILABLE] * 3 + skipped
    # ORO: 3 failed calls of 53 do not fail the run; the failed judgements weigh 0.0 in q.
    oro = combine_scores(0.6, verdicts)
    assert (oro.judge_total, oro.judge_failed, oro.run_failed) == (53, 3, False)
    assert oro.reasoning_quality == round(50 * 0.7 / 53, 4) == 0.6604
    assert oro.reasoning_coefficient == 0.8779 and oro.final_judge == round(0.6 * 0.8779, 4)
    assert not judge.run_failed  # the judge's own counters agree
    # Earlier choice: skipped problems count as failed verdicts (51 of 101) and q ignores the failures.
    kept = combine_scores(0.6, verdicts, accounting="verdicts")
    assert (kept.judge_total, kept.judge_failed, kept.run_failed) == (101, 51, True)
    assert kept.reasoning_quality == 0.7 and kept.reasoning_coefficient == 0.9125


def test_race_with_no_finishers_writes_no_weights() -> None:
    race = _complete(_q("a", None), _q("b", None))  # both did not finish
    uids = {"a": 1, "b": 2}
    assert compute_weights(race, uids) is None  # ORO submits nothing: the chain keeps the last weights
    document = json.loads(weights_document(race, None, uids, WeightConfig()))
    assert document["skipped"] is True and document["skip_reason"] == NO_FINISHERS
    assert "weights" not in document
    burned = compute_weights(race, uids, config=WeightConfig(no_finishers="burn"))
    assert burned is not None and burned.weights == [U16_MAX, 0, 0]


def test_tail_finisher_on_uid_zero_is_overwritten_by_the_burn() -> None:
    race = _complete(*[_q(f"h{i}", 1.0 - i / 10) for i in range(6)])  # K = 3: h1 gets 2, h2 gets 1
    uids = {"h0": 1, "h1": 0, "h2": 2, "h3": 3, "h4": 4, "h5": 5}
    oro = compute_weights(race, uids)
    # ORO counts h1's 2 in the tail sum, then writes the burn over uid 0.
    assert oro is not None and oro.tail_sum == 3 and oro.weights[:3] == [U16_MAX, 21846, 1]
    added = compute_weights(race, uids, config=WeightConfig(tail_on_burn_uid="add"))
    assert added is not None and added.weights[:3] == [U16_MAX + 2, 21846, 1]  # 65,537


@pytest.mark.parametrize(
    ("second_listing", "oro_weights", "added_weights"),
    [
        # The top hotkey "a" also holds rank 3: ORO keeps its top share only (T = 3 + 1, top 21846);
        # adding gives it the top share of T = 6 (21847) plus rank 3's 2.
        ("a", [U16_MAX, 21846, 3, 1, 0, 0, 0, 0], [U16_MAX, 21847 + 2, 3, 1, 0, 0, 0, 0]),
        # "b" at ranks 2 and 3: ORO keeps one entry, the later (lower) weight 2 (T = 2 + 1).
        ("b", [U16_MAX, 21846, 2, 1, 0, 0, 0, 0], [U16_MAX, 21847, 3 + 2, 1, 0, 0, 0, 0]),
    ],
)
def test_duplicated_hotkey(second_listing: str, oro_weights: list[int], added_weights: list[int]) -> None:
    # Eight listings, K = 4: ranks 2, 3, 4 get 3, 2, 1; rank 3 is the second listing.
    hotkeys = ["a", "b", second_listing, "c", "d", "e", "f", "g"]
    race = _complete(*[_q(h, 1.0 - i / 10, f"v{i}") for i, h in enumerate(hotkeys)])
    uids = {h: i for i, h in enumerate("abcdefg", start=1)}
    oro = compute_weights(race, uids, n_uids=8)
    assert oro is not None and oro.weights == oro_weights and oro.top_hotkey == "a"
    added = compute_weights(race, uids, n_uids=8, config=WeightConfig(duplicate_hotkeys="add"))
    assert added is not None and added.weights == added_weights


def test_tick_scans_only_the_five_newest_races() -> None:
    open_races = [Race(race_id=f"open{i}", status=RaceStatus.QUALIFYING_OPEN) for i in range(5)]
    old = _complete(_q("a", 0.9), _q("b", 0.8), race_id="old")
    history = [*open_races, old]
    assert weights_for_tick(history, {"a": 1, "b": 2}) is None  # ORO fetches 5 races and skips
    whole = weights_for_tick(history, {"a": 1, "b": 2}, config=WeightConfig(scan_window=None))
    assert whole is not None and whole.race_id == "old"
    # The first completed race decides, even without finishers: ORO does not look further back.
    empty = _complete(_q("a", None), race_id="empty")
    assert weights_for_tick([empty, old], {"a": 1, "b": 2}) is None
