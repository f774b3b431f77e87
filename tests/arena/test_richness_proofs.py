"""Agentic richness without agent cooperation: proof kinds per dispatch, in unit and in real arena runs."""

from __future__ import annotations

import json
from pathlib import Path

from arena_helpers import needs_bwrap
from miner_helpers import read_jsonl
from typer.testing import CliRunner

from shoparena.arena.miners import miner_path
from shoparena.arena.proxy import ClientIdentity
from shoparena.arena.proxy_log import ParsedToolCall
from shoparena.arena.richness import ProofKind, normalise_arguments
from shoparena.arena.run_directory import ArenaRunConfig, run_arena
from shoparena.arena.run_judging import judge_run
from shoparena.arena.sandbox import SandboxConfig
from shoparena.cli.main import app
from shoparena.llm.planner_backend import MODEL_NAME, PlannerBackend

AGENTS = Path(__file__).parent / "agents"


def test_normalised_arguments_agree_across_transports():
    model = {"q": "red  shoes", "page": 1, "sort": "default", "shop_id": None}
    assert normalise_arguments(model) == normalise_arguments({"query": "red shoes"}) == (("q", "red shoes"),)
    assert normalise_arguments({"product_ids": ["1", "2"]}) == normalise_arguments({"product_id": "1, 2"})
    assert normalise_arguments({"q": "x", "page": 2}) != normalise_arguments({"q": "x", "page": "3"})


def _identity(tmp_path: Path) -> ClientIdentity:
    return ClientIdentity("t", "run", "agent", "p1", tmp_path / "log.jsonl")


def test_each_emitted_call_proves_at_most_one_dispatch(tmp_path):
    ident = _identity(tmp_path)
    ident.remember_emitted([
        ParsedToolCall("c1", "find_product", json.dumps({"q": "red shoes"})),
        ParsedToolCall("c2", "view_product_information", json.dumps({"product_ids": "7"})),
        ParsedToolCall("c3", "recommend_product", json.dumps({"product_ids": "7"})),  # not a catalogue tool
    ])
    claim = ident.claim
    assert claim("view_product_information", [{"product_ids": "7"}], None, False) is ProofKind.MATCHED_EMITTED
    assert claim("find_product", [{"q": "blue shoes"}], None, False) is ProofKind.UNMATCHED  # never emitted
    # The '+'-encoded form ORO's miner sends matches once decoded; the claim is used up afterwards.
    encoded = [{"q": "red+shoes"}, {"q": "red shoes"}]
    assert claim("find_product", encoded, None, False) is ProofKind.MATCHED_EMITTED
    assert claim("find_product", [{"q": "red shoes"}], None, False) is ProofKind.UNMATCHED  # replay
    assert ident.outstanding == []


def test_a_valid_nonce_is_the_strongest_proof_and_consumes_its_call(tmp_path):
    ident = _identity(tmp_path)
    ident.remember_emitted([ParsedToolCall("c1", "find_product", json.dumps({"q": "lamp"}))])
    assert ident.claim("find_product", [{"q": "lamp"}], "c1", True) is ProofKind.NONCE_VALID
    assert ident.claim("find_product", [{"q": "lamp"}], None, False) is ProofKind.UNMATCHED


def _problems_suite(shop_world, path: Path, n: int) -> Path:
    from shoparena.records.problem import Intent
    from shoparena.suites.loaders import write_oro_suite
    from shoparena.suites.synth import SynthOptions, synthesize_problems

    products = list(shop_world.engine.iter_products())
    problems = synthesize_problems(
        products, SynthOptions(n=n, seed=11, intents=(Intent.PRODUCT, Intent.SHOP)), engine=shop_world.engine
    ).problems
    write_oro_suite(problems, path)
    return path


@needs_bwrap
def test_richness_of_native_tagged_subtask_and_forging_miners(tmp_path, shop_world):
    agents = [miner_path("agentic"), AGENTS / "oro_style_miner.py", miner_path("subtask"),
              AGENTS / "forging_miner.py"]
    out = tmp_path / "run"
    config = ArenaRunConfig(agents=agents, suite=shop_world.mixed, out=out, workers=2, timeout_s=20,
                            sandbox=SandboxConfig(grace_s=1, memory_bytes=1024**3))
    run_arena(config, backend=PlannerBackend(), search=shop_world.engine)
    report = judge_run(out, "rubric")
    native, tagged, subtask, forging = (report.agent(n).richness for n in
                                        ("agentic", "oro_style_miner", "subtask", "forging_miner"))
    assert native.agentic_richness == 1.0 and set(native.proof_kinds) == {"nonce_valid"}
    # No nonce ever sent, yet every dispatch is one the model emitted: credited by matching.
    assert tagged.agentic_richness == 1.0 and set(tagged.proof_kinds) == {"matched_emitted"}
    assert tagged.nonce_stamped == 0.0  # Variant B cannot see it; the published Variant A does
    assert tagged.pending_target == 1.0
    assert subtask.agentic_richness == 0.0 and subtask.model_replies > 0
    # Forger: 2 problems x (1 honest + 2 replays + 3 invented) dispatches; only the honest ones count.
    assert forging.total_dispatch_count == 12
    assert forging.proof_kinds == {"matched_emitted": 2, "unmatched": 10}
    assert forging.agentic_richness == round(2 / 12, 4)
    # Every dispatch of the trusted log carries its proof.
    for path in (out / "proxy" / "forging_miner").glob("*.jsonl"):
        dispatches = [e for e in read_jsonl(path) if e.get("path", "").startswith("/search/")]
        assert dispatches and all(e["proof"] in {k.value for k in ProofKind} for e in dispatches)


@needs_bwrap
def test_oro_style_miner_through_cli_solves_most_and_is_agentic(tmp_path, shop_world):
    suite = _problems_suite(shop_world, tmp_path / "suite.json", 4)
    out = tmp_path / "cli-run"
    result = CliRunner().invoke(app, [
        "arena", "run", "--agents", str(AGENTS / "oro_style_miner.py"), "--suite", str(suite),
        "--index", str(shop_world.index), "--out", str(out), "--backend", "planner", "--workers", "2",
        "--timeout", "30", "--judge", "rubric",
    ])
    assert result.exit_code == 0, result.output
    envelopes = read_jsonl(out / "agents" / "oro_style_miner" / "output.jsonl")
    assert len(envelopes) == 4 and {e["status"] for e in envelopes} == {"SUCCESS"}
    scores = json.loads((out / "scores.json").read_text())["oro_style_miner"]
    assert scores["strict"]["success_rate"] >= 0.75
    incentives = json.loads((out / "incentives.json").read_text())["agents"][0]
    assert incentives["richness"]["agentic_richness"] == 1.0
    # The run's model reached the miner (SANDBOX_MODEL) and is what the proxy served and logged.
    logs = [e for p in (out / "proxy" / "oro_style_miner").glob("*.jsonl") for e in read_jsonl(p)]
    inference = [e for e in logs if e.get("path") == "/inference/chat/completions"]
    assert inference and all(e["model"] == MODEL_NAME and "requested_model" not in e for e in inference)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["proxy"]["served_model"] == MODEL_NAME
    # Envelope counts equal the trusted log's.
    assert sum(e["inference_total"] for e in envelopes) == len(inference)
    # The corpus keeps what the proxy proved: the default 'proof' variant credits the matched calls of this
    # nonce-less miner, the nonce-stamped variant alone would reject every trajectory.
    from shoparena.corpus import CorpusConfig, build_corpus
    from shoparena.corpus.config import FilterConfig, GateConfig

    outcomes = {}
    for variant in ("proof", "nonce"):
        config = CorpusConfig(
            run_dirs=[out], out=tmp_path / f"corpus-{variant}",
            filter=FilterConfig(richness_variant=variant), gates=GateConfig(judge_bar=None),
        )
        build_corpus(config)
        records = read_jsonl(config.out / "records.jsonl")
        outcomes[variant] = [(r["origin"], r["outcome"]) for r in records if r["origin"] == "agentic"]
    assert len(outcomes["proof"]) == len(outcomes["nonce"]) == 4
    assert sum(o == "kept" for _, o in outcomes["proof"]) >= 3
    assert {o for _, o in outcomes["nonce"]} == {"nonce_invalid"}


@needs_bwrap
def test_web_problems_run_in_the_arena(tmp_path, shop_world):
    from shoparena.records.problem import Intent
    from shoparena.suites.synth import SynthOptions, synthesize_bank

    suite = tmp_path / "web.json"  # with its knowledge-page sidecar web.json.knowledge.jsonl
    synthesize_bank(shop_world.index, suite, SynthOptions(n=2, seed=4, intents=(Intent.WEB,)))
    out = tmp_path / "run"
    config = ArenaRunConfig(agents=[miner_path("agentic")], suite=suite, out=out, workers=2, timeout_s=20,
                            sandbox=SandboxConfig(grace_s=1, memory_bytes=1024**3))
    summary = run_arena(config, backend=PlannerBackend(), search=shop_world.engine)
    logs = [e for p in (out / "proxy" / "agentic").glob("*.jsonl") for e in read_jsonl(p)]
    web = [e for e in logs if e.get("path") == "/search/web_search"]
    assert len(web) >= 2 and all(e["status_code"] == 200 for e in web)
    assert all(e.get("response", {}).get("success", True) for e in web)
    assert summary.agents[0].success == 2
    # The brand found through web_search reached the recommendation (web keyword check); the title check
    # needs an embedding similarity (lexical titles are not comparable), so success is not asserted here.
    assert summary.agents[0].scores["shoppingbench"]["web_kw_score"] == 1.0
    for envelope in read_jsonl(out / "agents" / "agentic" / "output.jsonl"):
        calls = [c for s in envelope["dialogue"] for c in s["completion"]["message"].get("tool_call", [])]
        assert calls[0]["name"] == "web_search" and calls[0]["result"]["observation"]
        brand = calls[0]["result"]["observation"][0]["title"].split(" (")[0]
        assert any(brand in c["parameters"].get("q", "") for c in calls if c["name"] == "find_product")
