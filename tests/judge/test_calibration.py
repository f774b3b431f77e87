"""Judge calibration: confusion matrix, kappa, per-bin agreement, pairing and markdown."""

from __future__ import annotations

from shoparena.judge import JudgeStatus, JudgeVerdict, calibrate, calibration_markdown, to_bin


def _v(
    pid: str | None, score: float | None, judge: str, status: JudgeStatus = JudgeStatus.OK
) -> JudgeVerdict:
    return JudgeVerdict(problem_id=pid, judge=judge, status=status, score=score)


def test_hand_computed_report() -> None:
    a = [_v("p1", 0.1, "llm"), _v("p2", 0.1, "llm"), _v("p3", 0.9, "llm"), _v("p4", 0.9, "llm"),
         _v("p5", None, "llm", JudgeStatus.UNAVAILABLE)]
    b = [_v("p4", 0.9, "rubric"), _v("p3", 0.9, "rubric"), _v("p2", 0.3, "rubric"), _v("p1", 0.1, "rubric"),
         _v("p5", 0.5, "rubric"), _v("p6", 0.7, "rubric")]
    report = calibrate(a, b)
    assert (report.n_pairs, report.n_unpaired) == (4, 2)
    assert report.exact_agreement == 0.75
    # observed 0.75, expected (2*1 + 2*2) / 16 = 0.375 -> kappa 0.6
    assert report.cohens_kappa == 0.6
    assert report.mean_abs_diff == 0.05
    assert report.confusion[0] == [1, 1, 0, 0, 0] and report.confusion[4] == [0, 0, 0, 0, 2]
    by_bin = {r.bin: r for r in report.per_bin}
    assert by_bin[0.1].agreement == 0.5 and by_bin[0.9].agreement == 1.0 and by_bin[0.5].agreement is None
    assert (report.judge_a, report.judge_b) == ("llm", "rubric")
    text = calibration_markdown(report)
    assert "Cohen's kappa: 0.6000" in text and "| 0.1 | 1 | 1 | 0 | 0 | 0 |" in text


def test_pairs_by_position_without_ids_and_degenerate_kappa() -> None:
    a = [_v(None, 0.5, "a"), _v(None, 0.5, "a")]
    b = [_v(None, 0.52, "b"), _v(None, 0.5, "b")]
    report = calibrate(a, b)
    assert report.n_pairs == 2 and report.exact_agreement == 1.0
    assert report.cohens_kappa is None  # chance agreement is 1: kappa undefined
    empty = calibrate([], [])
    assert empty.n_pairs == 0 and empty.cohens_kappa is None and "n/a" in calibration_markdown(empty)


def test_to_bin() -> None:
    assert [to_bin(s) for s in (0.0, 0.2, 0.21, 0.6, 0.95, 1.0)] == [0.1, 0.1, 0.3, 0.5, 0.9, 0.9]
