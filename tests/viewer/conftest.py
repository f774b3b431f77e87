"""Fixtures: two planner evaluations of one bank (different step caps) and a hand-made two-record corpus."""

from __future__ import annotations

from pathlib import Path

import pytest

from shoparena.eval.config import EvalConfig
from shoparena.eval.run import run_eval
from shoparena.records.corpus import (
    CorpusLabels,
    CorpusMessage,
    CorpusProvenance,
    CorpusRecord,
    StructuralEvidence,
)
from shoparena.records.problem import Intent
from shoparena.runs.manifest import RunManifest, write_manifest
from shoparena.suites.options import SynthOptions
from shoparena.suites.synth import synthesize_bank


@pytest.fixture(scope="session")
def view_bank(synth, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("view_bank") / "bank.json"
    synthesize_bank(
        synth.index.index_dir, out, SynthOptions(n=4, seed=5, intents=(Intent.PRODUCT, Intent.SHOP))
    )
    return out


@pytest.fixture(scope="session")
def eval_runs(view_bank, synth, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("view_runs")
    runs = []
    for name, steps in (("planner-12", 12), ("planner-2", 2)):
        config = EvalConfig(
            policy="planner",
            suite=view_bank,
            index=synth.index.index_dir,
            out=root / name,
            max_steps=steps,
            progress=False,
            bootstrap=200,
        )
        run_eval(config, engine=synth.index)
        runs.append(root / name)
    return runs[0], runs[1]


def _call(cid: str, name: str, args: str) -> dict:
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": args}}


@pytest.fixture
def corpus_run(tmp_path: Path) -> Path:
    out = tmp_path / "corpus"
    out.mkdir()
    messages = [
        CorpusMessage(role="user", content="cheap red mug"),
        CorpusMessage(
            role="assistant",
            tool_calls=[_call("a", "find_product", '{"q": "red mug", "page": 1}')],
            trainable=True,
        ),
        CorpusMessage(role="tool", tool_call_id="a", content='[{"product_id": "7", "title": "Red Mug"}]'),
        CorpusMessage(
            role="assistant",
            tool_calls=[_call("b", "recommend_product", '{"product_ids": "7"}')],
            trainable=True,
        ),
        CorpusMessage(role="tool", tool_call_id="b", content="recommended"),
    ]
    records = [
        CorpusRecord(
            record_id=f"r{i}:p{i}:0",
            run_id=f"r{i}",
            problem_id=f"p{i}",
            query="cheap red mug",
            category="product",
            messages=messages,
            evidence=StructuralEvidence(
                envelope_status="SUCCESS",
                log_source="trusted_proxy",
                dispatches=2,
                richness_proof=0.5,
                dispatch_matched=[True, False],
                nonce_counts={"valid": 1, "missing": 1},
            ),
            labels=CorpusLabels(success=i == 0, rule=1.0 - i, judge_q=0.7),
            provenance=CorpusProvenance(
                agent=f"miner-{i}", judge_status="ok", judge_explanation="Gate 4 failed: one candidate."
            ),
            structural_label="agentic",
            outcome="kept" if i == 0 else "low_richness",
            miner_kind="agentic",
        )
        for i in range(2)
    ]
    (out / "records.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in records))
    write_manifest(RunManifest(kind="corpus"), out)  # the viewer opens a run by its manifest's kind
    return out
