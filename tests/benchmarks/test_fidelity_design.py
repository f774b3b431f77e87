"""The fidelity run's design file and its tables (benchmarks/fidelity_design.py), offline and in milliseconds:
every arm and pair the paper's argument needs, a bad design refused in one line, the shortcut floor beside
every arm."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from fidelity_design import REQUIRED_PAIRS, load_design, markdown

ARMS = ("base", "sft-filtered", "sft-raw", "sft-kept+failed", "sft-recovered", "sft-synthetic", "grpo", "kto")


def test_the_shipped_design_has_every_arm_and_pair_of_the_issue() -> None:
    design = load_design()
    assert set(ARMS) | {"leaked"} == set(design.arms)
    assert design.missing_pairs() == []
    assert design.arms["sft-raw"].select == "raw" and design.arms["sft-kept+failed"].select == "kept+failed"
    assert design.arms["sft-synthetic"].corpus == "synthetic" and design.arms["leaked"].suite == "leaked"
    assert {design.arms[a].start for a in ("grpo", "kto", "leaked")} == {"sft-filtered"}
    quick = design.pipeline_config(quick=True)
    assert quick["name"] == "fidelity-quick" and quick["model"]["layers"] == 2  # overlay merged, rest kept
    assert design.pipeline_config(quick=False)["name"] == "fidelity"
    grpo = design.arms_for(quick=True)["grpo"]
    assert grpo.trainer == {"max_steps": 2, "learning_rate": 5.0e-5, "max_completion_length": 32}
    assert grpo.start == "sft-filtered" and design.arms["grpo"].trainer["max_steps"] == 24


@pytest.mark.parametrize(
    "edit,needle",
    [
        (("arms", "kto", "from", "nobody"), "arms.kto.from: no arm 'nobody'"),
        (("arms", "sft-raw", "select", "unfiltered"), "select 'unfiltered'"),
        (("pairs", None, None, [["sft-raw", "ghost"]]), "unknown arms ['ghost']"),
    ],
)
def test_a_bad_design_is_refused_naming_the_field(tmp_path, edit, needle) -> None:
    import yaml

    from fidelity_design import DEFAULT_DESIGN

    raw = yaml.safe_load(DEFAULT_DESIGN.read_text())
    section, arm, key, value = edit
    if arm is None:
        raw[section] = value
    else:
        raw[section][arm][key] = value
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(raw))
    with pytest.raises(ValueError, match=r"bad\.yaml") as info:
        load_design(path)
    assert needle in str(info.value) and "\n" not in str(info.value)


def _estimate(value: float) -> dict[str, float]:
    return {"value": value, "ci_low": value - 0.05, "ci_high": value + 0.05}


def _pair(diff: float, a_only: int, b_only: int, both: int, problems: int) -> dict:
    d = {"diff": diff, "ci_low": diff - 0.02, "ci_high": diff + 0.02}
    mcnemar = {"a_only": a_only, "b_only": b_only, "both": both, "neither": 0, "p_value": 0.25}
    return {"problems": problems, "pass_at_1": d, "greedy_asr": d, "greedy": mcnemar}


def test_the_table_shows_the_shortcut_floor_and_the_required_pairs() -> None:
    arms = {
        name: {
            "label": "held_out",
            "strict_overall": {"greedy_asr": _estimate(0.1 * i)},
            "vs_shortcut": _pair(0.1 * i - 0.25, 3, i, 7, 40),
        }
        for i, name in enumerate(ARMS)
    }
    rows = {"used": 3, "dropped": {}, "skipped": {"quarantined: steps": 2}}
    arms["sft-raw"]["train"] = {"train_loss": 0.5, "global_step": 6, "rows": rows}
    result = {
        "date": "2026-12-03",
        "machine": "test",
        "mode": "quick",
        "complete": True,
        "command": "python benchmarks/fidelity_bench.py --quick",
        "config": {"eval": {"limit": None, "max_tokens": 96, "max_steps": 4}, "sft": {"trainer": {}}},
        "pass_at_k": {"samples": 2, "temperature": 0.7, "limit": 8, "arms": ["sft-filtered", "grpo"]},
        "arms": arms,
        "comparisons": {f"{b} - {a}": _pair(0.05, 1, 3, 10, 40) for a, b in REQUIRED_PAIRS},
    }
    text = markdown(result)
    rows = {line.split(" | ")[0].strip("| "): line for line in text.splitlines() if line.startswith("| ")}
    for i, name in enumerate(ARMS):  # the shortcut's count (shortcut-only + both) and the arm's difference
        assert f"| 10/40 | {100 * (0.1 * i - 0.25):+.1f} [" in rows[name] and f"3/{i}, p=0.25" in rows[name]
    assert "sft-raw 0.5 / 6 / 3, {}, skipped {'quarantined: steps': 2}" in text  # counted, with the reason
    for a, b in REQUIRED_PAIRS:
        assert f"| {b} - {a} | +5.0 [+3.0, +7.0] | 1/3, p=0.25 |" in rows[f"{b} - {a}"]
