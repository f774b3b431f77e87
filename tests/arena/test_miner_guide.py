"""docs/miners.md's complete miner, run as written in the arena: every problem SUCCESS, richness 1.0 by
nonces, it solves what the built-in agentic miner solves, and a corpus built from its race keeps its
trajectories; the guide's failing example (the same miner with an empty ``think``) is rejected as
``format_invalid``, as the guide says."""

from __future__ import annotations

import json
import re
from collections import Counter

from arena_helpers import needs_bwrap
from miner_helpers import read_jsonl
from typer.testing import CliRunner

from shoparena.arena.miners import miner_path
from shoparena.cli.main import app
from shoparena.corpus.layout import CorpusRun
from world import REPO

pytestmark = needs_bwrap

#: The guide's step line, and the failing example's (docs/miners.md, "Kept by the corpus").
KEPT_LINE = "steps.append(create_dialogue_step(think, results, response, query, len(steps) + 1))"
FAILING_LINE = 'steps.append(create_dialogue_step("", results, response, query, len(steps) + 1))'


def guide_miner() -> str:
    text = (REPO / "docs" / "miners.md").read_text(encoding="utf-8")
    section = text.split("## A complete miner", 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.DOTALL).group(1)


def test_the_guide_shows_the_failing_line_it_explains():
    text = (REPO / "docs" / "miners.md").read_text(encoding="utf-8")
    assert KEPT_LINE in guide_miner()
    assert FAILING_LINE in text.split("## Kept by the corpus", 1)[1]


def test_the_guides_miner_is_honest_solves_like_the_agentic_one_and_is_kept(tmp_path, shop_world):
    miner = tmp_path / "guide_miner.py"
    miner.write_text(guide_miner())
    failing = tmp_path / "no_think.py"
    failing.write_text(guide_miner().replace(KEPT_LINE, FAILING_LINE))
    out = tmp_path / "run"
    result = CliRunner().invoke(app, [
        "arena", "run", "--agents", str(miner), str(failing), str(miner_path("agentic")),
        "--suite", str(shop_world.mixed), "--index", str(shop_world.index), "--out", str(out),
        "--backend", "planner", "--workers", "2", "--timeout", "30", "--judge", "rubric",
    ])  # fmt: skip
    assert result.exit_code == 0, result.output
    envelopes = read_jsonl(out / "agents" / "guide_miner" / "output.jsonl")
    assert envelopes and {e["status"] for e in envelopes} == {"SUCCESS"}
    scores = json.loads((out / "scores.json").read_text())
    assert scores["guide_miner"]["strict"]["success_rate"] == scores["agentic"]["strict"]["success_rate"] > 0
    incentives = {a["agent"]: a for a in json.loads((out / "incentives.json").read_text())["agents"]}
    richness = incentives["guide_miner"]["richness"]
    assert richness["agentic_richness"] == 1.0 and set(richness["proof_kinds"]) == {"nonce_valid"}
    # The judge's quality: the guide's miner passes G1-G3 at least; without its thinking, G2 fails (0.3).
    assert incentives["guide_miner"]["reasoning_quality"] >= 0.7
    assert incentives["no_think"]["reasoning_quality"] == 0.3

    corpus = tmp_path / "corpus"
    built = CliRunner().invoke(app, ["corpus", "build", str(out), "--out", str(corpus), "--workers", "1"])
    assert built.exit_code == 0, built.output
    outcomes: dict[str, Counter] = {}
    for _, record in CorpusRun.at(corpus).records():
        outcomes.setdefault(record.provenance.agent, Counter())[str(record.outcome)] += 1
    # The guide's miner is kept on every problem it solved; the agentic miner's identical trajectories are
    # its duplicates; the failing example fails the format check on every problem.
    solved = scores["guide_miner"]["strict"]["successful_problems"]
    assert outcomes["guide_miner"] == Counter({"kept": solved}) and solved == len(envelopes)
    assert outcomes["agentic"] == Counter({"duplicate": solved})
    assert outcomes["no_think"] == Counter({"format_invalid": len(envelopes)})
