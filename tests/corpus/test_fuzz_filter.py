"""Seeded in-memory fuzz of ingest + filter; the filter order, None vs 0 and the message rule."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path

from corpus_helpers import SN15_ROWS

from shoparena.arena.episodes import line_episode
from shoparena.arena.evidence import message_rule
from shoparena.corpus.config import FilterConfig, GateConfig
from shoparena.corpus.filter import classify
from shoparena.corpus.ingest import ingest_episode
from shoparena.records.corpus import OUTCOME_ORDER, CorpusRecord, Quarantined, StructuralEvidence
from shoparena.scoring.bench import ScoringBench

ENVELOPE = {
    "problem_id": "p1",
    "status": "SUCCESS",
    "execution_time": 1.0,
    "inference_failure_count": 0,
    "inference_total": 1,
    "error": None,
    "dialogue": [
        {
            "completion": {
                "reasoning_content": "",
                "content": '<think>search</think>\n<tool_call>[{"name": '
                '"find_product", "parameters": {"q": "mug"}}]</tool_call>',
                "message": {
                    "think": "search",
                    "tool_call": [
                        {
                            "name": "find_product",
                            "parameters": {"q": "mug"},
                            "tool_call_id": "abcdefgh",
                            "result": [],
                        }
                    ],
                },
            },
            "extra_info": {
                "step": 1,
                "query": "mug",
                "timestamp": 1,
                "proxy_calls": [
                    {
                        "kind": "summary",
                        "path": "/inference/chat/completions",
                        "parsed_tool_names": ["find_product"],
                    },
                    {"kind": "summary", "path": "/search/find_product", "nonce_status": "valid"},
                ],
            },
        }
    ],
}
MUTANTS = (None, 0, -1, 1.5, "", "x", [], {}, [None], {"a": 1}, True)


def _mutate(value, rng: random.Random, depth: int = 0):
    if isinstance(value, dict) and value and rng.random() < 0.8:
        key = rng.choice(list(value))
        if rng.random() < 0.2:
            del value[key]
        else:
            value[key] = _mutate(value[key], rng, depth + 1)
        return value
    if isinstance(value, list) and value and rng.random() < 0.8:
        i = rng.randrange(len(value))
        value[i] = _mutate(value[i], rng, depth + 1)
        return value
    return rng.choice(MUTANTS)


def test_fuzz_ten_thousand_inputs_every_one_accounted_for():
    rng = random.Random(11)
    from shoparena.formats import from_oro_envelope
    from shoparena.formats.sb import to_sb_rollout

    rollout = to_sb_rollout(from_oro_envelope(ENVELOPE), system_prompt="sys")
    bases = [ENVELOPE, ENVELOPE["dialogue"], rollout]
    bases += [json.loads(line) for line in SN15_ROWS.read_text().splitlines()]
    context = ScoringBench()
    fcfg, gcfg = FilterConfig(), GateConfig()
    kept = rejected = quarantined = 0
    n = 10_000
    for i in range(n):
        obj = _mutate(copy.deepcopy(rng.choice(bases)), rng)
        for _ in range(rng.randrange(3)):
            obj = _mutate(obj, rng)
        item = ingest_episode(line_episode(obj, Path("fuzz.jsonl"), i + 1, "fuzz", {}), context)
        if isinstance(item, Quarantined):
            quarantined += 1
            assert item.record.startswith(f"line {i + 1}") and item.field and item.reason
            continue
        classify(item, fcfg, gcfg)
        assert item.outcome == "kept" or item.outcome in OUTCOME_ORDER
        kept += item.outcome == "kept"
        rejected += item.outcome != "kept"
    assert kept + rejected + quarantined == n
    assert quarantined > 100 and rejected > 100  # the mutations reach both paths


def _record(**evidence) -> CorpusRecord:
    base = {
        "envelope_status": "SUCCESS",
        "log_source": "trusted_proxy",
        "inference_calls": 2,
        "dispatches": 2,
        "nonce_counts": {"valid": 2},
        "richness_nonce": 1.0,
        "richness_pending": 1.0,
        "final_llm_emitted": True,
        "format_ok": True,
    }
    base.update(evidence)
    record = CorpusRecord(record_id="r:p:0", run_id="r", problem_id="p", evidence=StructuralEvidence(**base))
    record.labels.judge_q, record.labels.success = 0.9, True
    return record


def test_outcome_is_first_failing_reason_in_order():
    fcfg, gcfg = FilterConfig(), GateConfig()
    assert classify(_record(), fcfg, gcfg).outcome == "kept"
    both = _record(forged=["replayed nonce"], dispatches=0)
    assert classify(both, fcfg, gcfg).outcome == "forged_log" and both.structural_label == "forged"
    low = _record(nonce_counts={"valid": 1, "missing": 1}, richness_nonce=0.5)
    assert classify(low, fcfg, gcfg).outcome == "nonce_invalid"
    assert classify(low, FilterConfig(require_all_nonces_valid=False), gcfg).outcome == "low_richness"
    assert classify(low, FilterConfig(require_all_nonces_valid=False, tau=0.5), gcfg).outcome == "kept"


def test_none_richness_is_not_zero_and_judge_missing_never_passes():
    unstamped = _record(nonce_counts={}, richness_nonce=None, richness_pending=1.0)
    assert (
        classify(unstamped, FilterConfig(none_richness="reject"), GateConfig()).outcome == "no_richness_proof"
    )
    assert classify(unstamped, FilterConfig(), GateConfig()).outcome == "kept"  # falls back to Variant A
    zero = _record(nonce_counts={"missing": 2}, richness_nonce=0.0)
    assert (
        classify(zero, FilterConfig(require_all_nonces_valid=False), GateConfig()).outcome == "low_richness"
    )
    missing = _record()
    missing.labels.judge_q = None
    assert classify(missing, FilterConfig(), GateConfig()).outcome == "judge_missing"
    assert classify(missing, FilterConfig(), GateConfig(judge_bar=0.0)).outcome == "judge_missing"


def test_message_rule_for_chat_rows():
    call = {"id": "c1", "type": "function", "function": {"name": "find_product", "arguments": '{"q": "x"}'}}
    good = [
        {"role": "user", "content": "x"},
        {"role": "assistant", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "[]"},
    ]
    assert message_rule(good) == (True, "")
    orphan = [*good, {"role": "tool", "tool_call_id": "c9", "content": "[]"}]
    ok, detail = message_rule(orphan)
    assert not ok and detail.startswith("messages[3].tool_call_id")
