"""Compare two judges on the same trajectories: per-bin agreement, confusion matrix, Cohen's kappa.

Run-level helpers pair the ``judge.jsonl`` files of two judged copies of one arena run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field

from shoparena.judge.records import SCORE_BINS, JudgeStatus, JudgeVerdict

Verdicts = Sequence[JudgeVerdict] | Mapping[str, JudgeVerdict]


def to_bin(score: float) -> float:
    """The rubric bin nearest to ``score`` (ties go to the lower bin)."""
    return min(SCORE_BINS, key=lambda b: (round(abs(b - score), 9), b))  # round: 0.2 is a tie, not 0.3


class BinAgreement(BaseModel):
    """How often the two judges agree on one bin."""

    model_config = ConfigDict(extra="forbid")

    bin: float
    count_a: int
    count_b: int
    both: int
    agreement: float | None = Field(
        description="both / pairs where either judge chose the bin; None if neither did."
    )


class CalibrationReport(BaseModel):
    """Agreement statistics between judge A and judge B."""

    model_config = ConfigDict(extra="forbid")

    judge_a: str = ""
    judge_b: str = ""
    n_pairs: int = Field(description="Trajectories both judges scored (status ok).")
    n_unpaired: int = Field(description="Trajectories missing from one side or not ok on one side.")
    exact_agreement: float | None
    cohens_kappa: float | None = Field(description="None when undefined (no pairs, or chance agreement 1).")
    mean_abs_diff: float | None
    bins: list[float] = Field(default_factory=lambda: list(SCORE_BINS))
    confusion: list[list[int]] = Field(description="confusion[i][j]: A chose bins[i], B chose bins[j].")
    per_bin: list[BinAgreement]


def _keyed(verdicts: Verdicts) -> dict[str, JudgeVerdict]:
    if isinstance(verdicts, Mapping):
        return {str(k): v for k, v in verdicts.items()}
    if all(v.problem_id for v in verdicts) and len({v.problem_id for v in verdicts}) == len(verdicts):
        return {str(v.problem_id): v for v in verdicts}
    return {str(i): v for i, v in enumerate(verdicts)}  # no usable ids: pair by position


def calibrate(judge_a_verdicts: Verdicts, judge_b_verdicts: Verdicts) -> CalibrationReport:
    """Pair verdicts (by problem_id, else by position) and measure agreement on the ok pairs.

    Args:
        judge_a_verdicts: Verdicts of the reference judge (rows of the confusion matrix).
        judge_b_verdicts: Verdicts of the judge being calibrated (columns).
    """
    a, b = _keyed(judge_a_verdicts), _keyed(judge_b_verdicts)
    pairs = [(a[k].score, b[k].score) for k in sorted(set(a) & set(b))
             if a[k].status is JudgeStatus.OK and b[k].status is JudgeStatus.OK]
    n_keys = len(set(a) | set(b))
    index = {value: i for i, value in enumerate(SCORE_BINS)}
    confusion = [[0] * len(SCORE_BINS) for _ in SCORE_BINS]
    diffs = []
    for score_a, score_b in pairs:
        assert score_a is not None and score_b is not None
        confusion[index[to_bin(score_a)]][index[to_bin(score_b)]] += 1
        diffs.append(abs(score_a - score_b))
    n = len(pairs)
    row = [sum(r) for r in confusion]
    col = [sum(confusion[i][j] for i in range(len(SCORE_BINS))) for j in range(len(SCORE_BINS))]
    observed = sum(confusion[i][i] for i in range(len(SCORE_BINS))) / n if n else None
    kappa = None
    if n and observed is not None:
        expected = sum(row[i] * col[i] for i in range(len(SCORE_BINS))) / (n * n)
        kappa = None if expected == 1 else round((observed - expected) / (1 - expected), 4)
    per_bin = []
    for i, value in enumerate(SCORE_BINS):
        both = confusion[i][i]
        either = row[i] + col[i] - both
        per_bin.append(BinAgreement(bin=value, count_a=row[i], count_b=col[i], both=both,
                                    agreement=round(both / either, 4) if either else None))
    first_a = next(iter(a.values()), None)
    first_b = next(iter(b.values()), None)
    return CalibrationReport(
        judge_a=first_a.judge if first_a else "",
        judge_b=first_b.judge if first_b else "",
        n_pairs=n,
        n_unpaired=n_keys - n,
        exact_agreement=round(observed, 4) if observed is not None else None,
        cohens_kappa=kappa,
        mean_abs_diff=round(sum(diffs) / n, 4) if n else None,
        confusion=confusion,
        per_bin=per_bin,
    )


def calibration_markdown(report: CalibrationReport) -> str:
    """A markdown summary: headline numbers, per-bin agreement and the confusion matrix."""

    def fmt(value: float | None) -> str:
        return "n/a" if value is None else f"{value:.4f}"

    a, b = report.judge_a or "A", report.judge_b or "B"
    lines = [
        f"# Judge calibration: {a} vs {b}",
        "",
        f"- pairs scored by both: {report.n_pairs} (unpaired or not ok: {report.n_unpaired})",
        f"- exact bin agreement: {fmt(report.exact_agreement)}",
        f"- Cohen's kappa: {fmt(report.cohens_kappa)}",
        f"- mean absolute score difference: {fmt(report.mean_abs_diff)}",
        "",
        "| bin | count A | count B | both | agreement |",
        "|---|---|---|---|---|",
    ]
    lines += [f"| {r.bin:.1f} | {r.count_a} | {r.count_b} | {r.both} | {fmt(r.agreement)} |"
              for r in report.per_bin]
    header = " | ".join(f"{b}={v:.1f}" for v in report.bins)
    lines += ["", f"Confusion matrix (rows {a}, columns {b}):", "", f"| {a} \\ {b} | {header} |",
              "|---" * (len(report.bins) + 1) + "|"]
    lines += [f"| {v:.1f} | " + " | ".join(str(c) for c in counts) + " |"
              for v, counts in zip(report.bins, report.confusion, strict=True)]
    return "\n".join(lines) + "\n"
