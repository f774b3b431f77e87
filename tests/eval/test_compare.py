"""``compare_runs``: a planted difference is detected, a null one is not; different suites are refused."""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml

from shoparena.eval.compare import CompareError, compare_runs, mcnemar_exact
from shoparena.eval.config import EvalConfig
from shoparena.eval.leak import LeakCheck, SuiteIdentity
from shoparena.eval.run import EpisodeRecord, summarise
from shoparena.records.problem import Intent, Problem, RewardItem
from shoparena.suites.loaders import load_suite, write_oro_suite

N_PROBLEMS = 200


def _suite(tmp_path, n: int = N_PROBLEMS, tag: str = "") -> object:
    problems = [
        Problem(
            problem_id=f"p{i}{tag}",
            query=f"request number {i} {tag}",
            intent=Intent.PRODUCT,
            category="Product",
            reward=[RewardItem(product_id=str(i), title=[f"Thing {i}"])],
        )
        for i in range(n)
    ]
    path = tmp_path / f"suite{tag}.json"
    write_oro_suite(problems, path)
    return path


def _run_dir(tmp_path, name: str, suite, success_rate: float, seed: int, samples: int = 4) -> object:
    """A finished run directory whose episodes succeed with the given probability."""
    problems, _ = load_suite(suite)
    config = EvalConfig(policy="planner", suite=suite, index=tmp_path, out=tmp_path / name, samples=samples)
    rng = np.random.default_rng(seed)
    records = [
        EpisodeRecord(
            problem_id=p.problem_id,
            sample_idx=i,
            decoding="greedy",
            category="Product",
            status="SUCCESS",
            success_strict=bool(win),
            success_shoppingbench=bool(win),
        )
        for p in problems
        for i, win in enumerate(rng.random(samples) < success_rate)
    ]
    root = config.out
    root.mkdir()
    (root / "config.yaml").write_text(yaml.safe_dump(config.model_dump(mode="json")))
    (root / "episodes.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in records))
    from shoparena.env.episodes import suite_hash

    identity = SuiteIdentity(
        path=str(suite),
        sha256="0" * 64,
        content_hash=suite_hash(problems),
        problems=len(problems),
        partition="unknown",
    )
    summary = summarise(config, problems, records, identity, LeakCheck(status="unchecked"), {}, name).dump()
    summary["scoring"]["title_backend"] = "lexical:test"
    (root / "summary.json").write_text(json.dumps(summary))
    return root


def test_planted_difference_is_detected(tmp_path) -> None:
    suite = _suite(tmp_path)
    a = _run_dir(tmp_path, "a", suite, 0.3, seed=1)
    b = _run_dir(tmp_path, "b", suite, 0.6, seed=2)
    result = compare_runs(a, b, resamples=1000).profiles["strict"]
    assert result.pass_at_1.diff == pytest.approx(0.3, abs=0.07)
    assert result.pass_at_1.ci_low > 0.15
    assert (
        result.greedy is not None
        and result.greedy.p_value < 1e-4
        and result.greedy.b_only > result.greedy.a_only
    )


def test_null_difference_is_not_detected(tmp_path) -> None:
    # Same success rate in A and B: the 95 % interval excludes 0 (and McNemar rejects) about 1 time in 20.
    suite = _suite(tmp_path, n=100)
    excluded = rejected = 0
    for i in range(20):
        a = _run_dir(tmp_path, f"a{i}", suite, 0.45, seed=100 + i)
        b = _run_dir(tmp_path, f"b{i}", suite, 0.45, seed=200 + i)
        result = compare_runs(a, b, resamples=500).profiles["strict"]
        excluded += not result.pass_at_1.ci_low <= 0 <= result.pass_at_1.ci_high
        rejected += result.greedy is not None and result.greedy.p_value < 0.05
    assert excluded <= 3 and rejected <= 3


def test_different_suites_or_scoring_are_refused(tmp_path) -> None:
    a = _run_dir(tmp_path, "a", _suite(tmp_path), 0.5, seed=1)
    b = _run_dir(tmp_path, "b", _suite(tmp_path, tag="x"), 0.5, seed=1)
    with pytest.raises(CompareError, match="different suites"):
        compare_runs(a, b)
    c = _run_dir(tmp_path, "c", _suite(tmp_path), 0.5, seed=1)
    summary = json.loads((c / "summary.json").read_text())
    summary["scoring"]["title_backend"] = "embedding:qwen3"
    (c / "summary.json").write_text(json.dumps(summary))
    with pytest.raises(CompareError, match="different scoring"):
        compare_runs(a, c)


def test_mcnemar_exact_known_values() -> None:
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(1, 9) == pytest.approx(2 * 11 / 1024)  # 2·P(X ≤ 1), X ~ Bin(10, ½)
    assert mcnemar_exact(5, 5) == 1.0


def test_student_is_paired_with_the_shortcut_problem_by_problem(synth, tmp_path) -> None:
    """``compare_to_shortcut`` replays the no-LLM shortcut on the run's own problems and index: a run that
    solves exactly what the shortcut solves ties it (no discordant pair); one more solved problem is one
    student-only pair."""
    from shoparena.eval.compare import compare_to_shortcut
    from shoparena.eval.run import shortcut_wins
    from shoparena.suites.options import SynthOptions
    from shoparena.suites.synth import synthesize_problems

    products = list(synth.index.iter_products())
    problems = synthesize_problems(
        products, SynthOptions(n=12, seed=5, intents=(Intent.PRODUCT,)), engine=synth.index
    ).problems
    suite = tmp_path / "suite.json"
    write_oro_suite(problems, suite)
    floor = shortcut_wins(problems, synth.index, "lexical")["strict"]
    assert 0 < sum(floor) < len(floor)  # the bank has problems the shortcut solves and misses

    def run(name: str, wins: list[bool]) -> object:
        index = synth.catalog.parent / "index"
        config = EvalConfig(policy="planner", suite=suite, index=index, out=tmp_path / name)
        records = [
            EpisodeRecord(
                problem_id=p.problem_id,
                sample_idx=0,
                decoding="greedy",
                category="Product",
                status="SUCCESS",
                success_strict=w,
                success_shoppingbench=w,
            )
            for p, w in zip(problems, wins, strict=True)
        ]
        root = config.out
        root.mkdir()
        (root / "config.yaml").write_text(yaml.safe_dump(config.model_dump(mode="json")))
        (root / "episodes.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in records))
        from shoparena.env.episodes import suite_hash

        identity = SuiteIdentity(
            path=str(suite), sha256="0" * 64, content_hash=suite_hash(problems), problems=12, partition="x"
        )
        summary = summarise(config, problems, records, identity, LeakCheck(status="unchecked"), {}, name)
        (root / "summary.json").write_text(json.dumps(summary.dump()))
        return root

    tie = compare_to_shortcut(run("tie", floor)).profiles["strict"]
    assert tie.greedy is not None and tie.greedy.a_only == tie.greedy.b_only == 0
    assert tie.greedy.both == sum(floor) and tie.greedy_asr.diff == 0
    better = list(floor)
    better[floor.index(False)] = True
    ahead = compare_to_shortcut(run("ahead", better)).profiles["strict"]
    assert ahead.greedy.b_only == 1 and ahead.greedy.a_only == 0
    assert ahead.greedy_asr.diff == pytest.approx(1 / 12)
