"""A race's web problems search the pages of the bank their partition came from: the race suite carries
its partition's ``knowledge.jsonl`` sidecar, and the firehose's identity covers those pages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from arena_helpers import needs_bwrap

from shoparena.arena.firehose import FirehoseConfig, run_firehose
from shoparena.env.knowledge import knowledge_path_for
from shoparena.records.problem import Intent
from shoparena.runs.identity import RunDirError
from shoparena.suites.options import SynthOptions
from shoparena.suites.synth import synthesize_bank

pytestmark = needs_bwrap


def _web_calls(envelope: dict) -> list[dict]:
    steps = envelope.get("dialogue") or []
    calls = [c for s in steps for c in s["completion"]["message"].get("tool_call") or []]
    return [c for c in calls if c["name"] == "web_search"]


def test_a_races_web_search_finds_the_brand_pages_of_its_partition(tmp_path: Path, shop_world):
    bank = tmp_path / "web.json"
    synthesize_bank(shop_world.index, bank, SynthOptions(n=2, seed=11, intents=(Intent.WEB,)))
    pages = knowledge_path_for(bank)
    assert pages.is_file()
    brand_urls = {json.loads(line)["url"] for line in pages.read_text().splitlines()}
    config = FirehoseConfig(
        suites=[bank],
        index=shop_world.index,
        out=tmp_path / "fh",
        problems_per_race=2,
        population=[("agentic-careful", "agentic", "careful")],
    )
    (race,) = run_firehose(config)
    assert knowledge_path_for(race / "race_suite.json").read_bytes() == pages.read_bytes()
    lines = (race / "agents" / "agentic-careful" / "output.jsonl").read_text().splitlines()
    searched = [c for line in lines for c in _web_calls(json.loads(line))]
    assert searched, "the teacher looks a web problem's brand up"
    seen = {page["url"] for call in searched for page in call["result"]["observation"]}
    assert seen & brand_urls, "web_search answered without the bank's brand pages"

    pages.write_text(pages.read_text().replace("Founder", "Founded by"))  # other pages: other web episodes
    with pytest.raises(RunDirError, match=r"knowledge\.0"):
        run_firehose(config.model_copy(update={"races": 2}))
