"""``shoparena eval run`` / ``eval compare`` through the CLI: exit codes and the printed summary."""

from __future__ import annotations

import json

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
