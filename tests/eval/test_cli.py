"""``shoparena eval run`` / ``eval compare`` through the CLI: exit codes and the printed summary."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from shoparena.cli.main import app


def test_eval_run_and_compare_cli(bank, synth, tmp_path) -> None:
    runner = CliRunner()
    base = [
        "eval",
        "run",
        "--policy",
        "planner",
        "--suite",
        str(bank),
        "--index",
        str(synth.index.index_dir),
        "--limit",
        "3",
        "--no-progress",
        "--max-steps",
        "12",
    ]
    first = runner.invoke(app, [*base, "--out", str(tmp_path / "a"), "--json"])
    assert first.exit_code == 0, first.output
    summary = json.loads(first.stdout.strip().splitlines()[-1])
    assert summary["episodes"]["finished"] == 3 and summary["decoding"]["mode"] == "greedy"
    assert "shortcut" in first.stderr and "pass@1" in first.stderr
    second = runner.invoke(app, [*base, "--out", str(tmp_path / "b"), "--samples", "2"])
    assert second.exit_code == 0, second.output
    compared = runner.invoke(app, ["eval", "compare", str(tmp_path / "a"), str(tmp_path / "b"), "--json"])
    assert compared.exit_code == 0, compared.output
    strict = json.loads(compared.stdout)["profiles"]["strict"]
    assert strict["pass_at_1"]["diff"] == 0.0 and strict["greedy"]["p_value"] == 1.0
    refused = runner.invoke(app, [*base, "--out", str(tmp_path / "a"), "--samples", "5"])
    assert refused.exit_code == 2 and "samples: 1 -> 5" in refused.stderr and "--restart" in refused.stderr
    restarted = runner.invoke(app, [*base, "--out", str(tmp_path / "a"), "--samples", "5", "--restart"])
    assert restarted.exit_code == 0, restarted.output
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "manifest.json").write_text('{"kind": "corpus"}')
    over = runner.invoke(app, [*base, "--out", str(corpus)])
    assert over.exit_code == 2 and "holds a run of kind corpus, not eval" in over.stderr
    assert sorted(p.name for p in corpus.iterdir()) == ["manifest.json"]  # nothing written
    bad = runner.invoke(app, [*base, "--out", str(tmp_path / "c"), "--format", "xml"])
    assert bad.exit_code == 2 and "format" in bad.stderr


def _summary(samples: int) -> dict:
    est = {"value": 0.25, "ci_low": 0.1, "ci_high": 0.4}
    group = {
        "greedy_asr": est, "pass@1": est, "pass@k": {str(samples): est}, "pass^k": {str(samples): est},
        "format_score": {"value": 1.0}, "mean_steps": 3.0, "mean_tokens": 40.0,
    }  # fmt: skip
    return {
        "suite": {"path": "/x/heldout.json", "problems": 4, "partition": "heldout", "sha256": "0" * 64},
        "decoding": {"n": samples, "mode": "greedy", "temperature": 0.0, "top_p": 1.0, "seed": 0,
                     "format": "native"},
        "policy": {"name": "planner"}, "label": "planner", "profiles": {"strict": {"overall": group}},
        "episodes": {"finished": 4, "expected": 4, "by_status": {}}, "scoring": {}, "throughput": "",
    }  # fmt: skip


@pytest.mark.parametrize("samples", [1, 4])
def test_the_summary_table_has_no_two_columns_with_one_header(monkeypatch, samples):
    from rich.console import Console

    import shoparena.cli.eval as cli_eval

    recorder = Console(record=True, width=400)
    monkeypatch.setattr(cli_eval, "console", recorder)
    cli_eval.print_summary(_summary(samples))
    text = recorder.export_text()
    header = next(line for line in text.splitlines() if "profile" in line)
    cells = [c.strip() for c in header.strip("┃│ ").split("┃")]
    assert len(cells) == len(set(cells)), cells
    assert ("pass@4 %" in cells) == (samples == 4) and "pass@1 % [95 % bootstrap]" in cells


def test_a_run_that_failed_before_any_result_does_not_block_the_corrected_command(bank, synth, tmp_path):
    """``eval run`` on an empty suite fails; the same command with the right suite and the same --out runs
    (the failed run wrote no result, so there is nothing to protect and no --restart to ask for)."""
    empty = tmp_path / "empty.json"
    empty.write_text("[]")
    out = tmp_path / "run"
    base = ["eval", "run", "--policy", "planner", "--index", str(synth.index.index_dir), "--limit", "2",
            "--no-progress", "--out", str(out)]  # fmt: skip
    failed = CliRunner().invoke(app, [*base, "--suite", str(empty)])
    assert failed.exit_code == 2 and "error" in failed.stderr
    fixed = CliRunner().invoke(app, [*base, "--suite", str(bank)])
    assert fixed.exit_code == 0, fixed.output
    assert (out / "summary.json").is_file()
    # A run that wrote results is still protected.
    other = CliRunner().invoke(app, [*base, "--suite", str(bank), "--limit", "3"])
    assert other.exit_code == 2 and "--restart" in other.stderr
