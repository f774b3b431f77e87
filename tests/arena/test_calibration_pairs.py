"""Pairing two judged copies of one run by (agent, problem_id), and the ``arena calibrate`` command."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from shoparena.arena.run_judging import calibrate_runs, load_run_verdicts, pair_run_verdicts
from shoparena.cli.main import app
from shoparena.judge import JudgeStatus, JudgeVerdict


def _verdict(pid: str | None, score: float | None, judge: str, status: str = "ok") -> JudgeVerdict:
    return JudgeVerdict(problem_id=pid, judge=judge, status=JudgeStatus(status), score=score)


def _write_run(root: Path, per_agent: dict[str, list[JudgeVerdict]]) -> Path:
    for agent, verdicts in per_agent.items():
        folder = root / "agents" / agent
        folder.mkdir(parents=True)
        lines = [v.model_dump_json() for v in verdicts]
        (folder / "judge.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


@pytest.fixture()
def runs(tmp_path: Path) -> tuple[Path, Path]:
    # The same problem ids under two agents: pairing must keep them apart.
    rubric = _write_run(
        tmp_path / "rubric",
        {
            "agentic": [
                _verdict("p1", 0.7, "rubric"),
                _verdict("p2", 0.9, "rubric"),
                _verdict("p3", 0.7, "rubric"),
            ],
            "shortcut": [_verdict("p1", 0.1, "rubric"), _verdict("p2", 0.1, "rubric")],
        },
    )
    llm = _write_run(
        tmp_path / "llm",
        {
            # Written in another order than run A: pairing is by key, not position.
            "agentic": [_verdict("p3", 0.5, "llm"), _verdict("p1", 0.7, "llm"), _verdict("p2", 0.9, "llm")],
            "shortcut": [_verdict("p2", None, "llm", "parse_error"), _verdict("p1", 0.7, "llm")],
        },
    )
    return rubric, llm


def test_pairs_by_agent_and_problem(runs: tuple[Path, Path]) -> None:
    a, b = pair_run_verdicts(*runs)
    assert sorted(a) == sorted(b) == ["agentic/p1", "agentic/p2", "agentic/p3", "shortcut/p1", "shortcut/p2"]
    assert a["shortcut/p1"].score == 0.1 and b["shortcut/p1"].score == 0.7
    assert b["agentic/p3"].score == 0.5


def test_calibrate_runs_counts(runs: tuple[Path, Path]) -> None:
    report = calibrate_runs(*runs)
    # ok pairs: agentic p1 (0.7/0.7), p2 (0.9/0.9), p3 (0.7/0.5), shortcut p1 (0.1/0.7); shortcut p2 not ok.
    assert (report.n_pairs, report.n_unpaired) == (4, 1)
    assert report.exact_agreement == 0.5
    assert report.mean_abs_diff == pytest.approx((0 + 0 + 0.2 + 0.6) / 4, abs=1e-4)
    bins = report.bins
    assert report.confusion[bins.index(0.7)][bins.index(0.5)] == 1
    assert report.confusion[bins.index(0.1)][bins.index(0.7)] == 1
    assert report.judge_a == "rubric" and report.judge_b == "llm"


def test_missing_ids_are_keyed_by_line_and_one_sided_keys_stay_unpaired(tmp_path: Path) -> None:
    a = _write_run(tmp_path / "a", {"x": [_verdict(None, 0.3, "rubric"), _verdict("p9", 0.5, "rubric")]})
    b = _write_run(tmp_path / "b", {"x": [_verdict("p9", 0.5, "llm")]})
    assert sorted(load_run_verdicts(a)) == ["x/#1", "x/p9"]
    report = calibrate_runs(a, b)
    assert (report.n_pairs, report.n_unpaired, report.exact_agreement) == (1, 1, 1.0)


def test_bad_lines_and_repeats_name_the_file_and_line(tmp_path: Path) -> None:
    run = _write_run(tmp_path / "r", {"x": [_verdict("p1", 0.3, "rubric")]})
    path = run / "agents" / "x" / "judge.jsonl"
    path.write_text(path.read_text() + '{"status": "ok", "score": 3}\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"judge\.jsonl:2: not a JudgeVerdict"):
        load_run_verdicts(run)
    repeated = [_verdict("p1", 0.3, "r").model_dump_json(), _verdict("p1", 0.5, "r").model_dump_json()]
    path.write_text("\n".join(repeated), encoding="utf-8")
    with pytest.raises(ValueError, match=r"judge\.jsonl:2: JudgeVerdict\.problem_id 'p1' repeats"):
        load_run_verdicts(run)
    with pytest.raises(FileNotFoundError, match="no agents/ folder"):
        load_run_verdicts(tmp_path)


def test_cli_writes_the_markdown(runs: tuple[Path, Path], tmp_path: Path) -> None:
    out = tmp_path / "docs" / "cal.md"
    result = CliRunner().invoke(app, ["arena", "calibrate", str(runs[0]), str(runs[1]), "--out", str(out)])
    assert result.exit_code == 0, result.output
    text = out.read_text()
    assert "pairs scored by both: 4 (unpaired or not ok: 1)" in text
    assert "Cohen's kappa" in text and "Cohen's kappa" in result.output
    bad = CliRunner().invoke(app, ["arena", "calibrate", str(tmp_path), str(runs[1])])
    assert bad.exit_code != 0
