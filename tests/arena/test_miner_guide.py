"""docs/miners.md's complete miner, run as written in the arena: every problem SUCCESS, richness 1.0 by
nonces, and it solves what the built-in agentic miner solves."""

from __future__ import annotations

import json
import re

from arena_helpers import needs_bwrap
from miner_helpers import read_jsonl
from typer.testing import CliRunner

from shoparena.arena.miners import miner_path
from shoparena.cli.main import app
from world import REPO

pytestmark = needs_bwrap


def guide_miner() -> str:
    text = (REPO / "docs" / "miners.md").read_text(encoding="utf-8")
    section = text.split("## A complete miner", 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.DOTALL).group(1)


def test_the_guides_miner_is_honest_and_solves_like_the_agentic_one(tmp_path, shop_world):
    miner = tmp_path / "guide_miner.py"
    miner.write_text(guide_miner())
    out = tmp_path / "run"
    result = CliRunner().invoke(app, [
        "arena", "run", "--agents", str(miner), str(miner_path("agentic")), "--suite", str(shop_world.mixed),
        "--index", str(shop_world.index), "--out", str(out), "--backend", "planner", "--workers", "2",
        "--timeout", "30", "--judge", "rubric",
    ])  # fmt: skip
    assert result.exit_code == 0, result.output
    envelopes = read_jsonl(out / "agents" / "guide_miner" / "output.jsonl")
    assert envelopes and {e["status"] for e in envelopes} == {"SUCCESS"}
    scores = json.loads((out / "scores.json").read_text())
    assert scores["guide_miner"]["strict"]["success_rate"] == scores["agentic"]["strict"]["success_rate"] > 0
    incentives = {a["agent"]: a for a in json.loads((out / "incentives.json").read_text())["agents"]}
    richness = incentives["guide_miner"]["richness"]
    assert richness["agentic_richness"] == 1.0 and set(richness["proof_kinds"]) == {"nonce_valid"}
