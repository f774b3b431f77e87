"""The synthetic-data arm (rejection sampling → SFT): the planner's episodes, kept by the strict scorer,
rendered like the firehose corpus and read by training through the same profile check and drift guard."""

from __future__ import annotations

import pytest

from shoparena.records.problem import Intent


@pytest.fixture(scope="module")
def synthetic(synth, tmp_path_factory: pytest.TempPathFactory, tiny_path):
    from shoparena.pipeline.synthetic import synthetic_corpus
    from shoparena.suites.options import SynthOptions
    from shoparena.suites.synth import synthesize_bank

    root = tmp_path_factory.mktemp("synthetic")
    bank = root / "bank.json"
    synthesize_bank(
        synth.index.index_dir, bank, SynthOptions(n=4, seed=5, intents=(Intent.PRODUCT, Intent.SHOP))
    )
    result = synthetic_corpus(
        suite=bank,
        index=synth.index.index_dir,
        out=root / "arm",
        render_profile="compact",
        max_steps=12,
        tokenizer=tiny_path,
    )
    return result


def test_kept_rows_are_exactly_the_strict_successes(synthetic) -> None:
    from shoparena.corpus.layout import CorpusRun

    records = [r for _, r in CorpusRun.at(synthetic["path"]).records()]
    assert len(records) == 4  # one greedy episode per problem, none quarantined
    kept = [r for r in records if r.outcome == "kept"]
    assert kept and synthetic["kept"] == len(kept)
    for record in records:  # rejection sampling: the strict scorer's verdict decides, nothing else
        assert (record.outcome == "kept") == (record.labels.success is True), record.outcome
        assert record.structural_label == "agentic"
        assert all(m.trainable for m in record.messages if m.role == "assistant")


def test_rows_pass_the_corpus_render_profile_and_drift_guard(synthetic, tiny_path) -> None:
    from transformers import AutoTokenizer

    from shoparena.corpus.layout import CorpusRun
    from shoparena.formats.profiles import compact_request, profile_hash
    from shoparena.train.config import ConfigError, load_config
    from shoparena.train.data import DataReport, corpus_render_profile, prepare_sft, select_rows

    corpus = CorpusRun.at(synthetic["path"])
    render = corpus.report().render
    assert render is not None
    assert render.model_dump(mode="json") == {"profile": "compact", "profile_hash": profile_hash("compact")}
    sets = [f"data.corpus={synthetic['path']}", "data.render_profile=compact"]
    cfg = load_config("tiny", "sft", sets)
    assert corpus_render_profile(cfg) == "compact"  # what training checks against the student's profile
    with pytest.raises(ConfigError, match="rendered under 'compact', not 'upstream'"):
        corpus_render_profile(load_config("tiny", "sft", [sets[0], "data.render_profile=upstream"]))
    rows, _ = select_rows(cfg)
    records = {r.record_id: r for _, r in corpus.records()}
    for row in rows:  # the compact text a student sees: request-item handles, tools named in the system turn
        user = next(m for m in row["messages"] if m["role"] == "user")
        assert user["content"] == compact_request(records[row["record_id"]].query) and row["tools"] == ""
    report = DataReport("sft", "train", "kept")
    tok = AutoTokenizer.from_pretrained(tiny_path)
    # prepare_sft runs every row through the chat-template drift guard (check_template_drift) and would
    # raise naming the record; every assistant turn carries the loss.
    dataset = prepare_sft(rows, tok, report, max_length=None)
    assert report.used == len(rows) == len(dataset) and report.dropped == {}
    turns = sum(m["role"] == "assistant" for row in rows for m in row["messages"])
    assert (
        sum(
            text.count("<|im_end|>")
            for text in tok.batch_decode(
                [[t for t, m in zip(r["input_ids"], r["assistant_masks"], strict=True) if m] for r in dataset]
            )
        )
        == turns
    )
