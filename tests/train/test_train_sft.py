"""SFT: the loss mask token by token, loss falls and every parameter changes, the final folder loads, CLI."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from shoparena.cli.main import app
from shoparena.train.config import load_config


def _cfg(corpus, method="sft", *sets):
    return load_config("tiny", method, [f"data.corpus={corpus}", *sets])


def test_labels_cover_exactly_the_trainable_assistant_turns(tiny_path, corpus) -> None:
    import datasets
    from transformers import AutoTokenizer

    from shoparena.train.data import render_sft_record

    tok = AutoTokenizer.from_pretrained(tiny_path)
    row = datasets.load_from_disk(str(corpus / "views" / "sft"))["train"][1]  # view step written by code
    messages = row["messages"]
    enc = render_sft_record(tok, messages, row["tools"])
    # Expected mask, built independently: render every prefix and mark the tokens each assistant turn adds.
    from shoparena.train.data import clean_messages, parse_tools

    clean, tools = clean_messages(messages), parse_tools(row["tools"])
    expected = [0] * len(enc["input_ids"])
    for k, message in enumerate(messages):
        if message["role"] != "assistant":
            continue
        before = tok.apply_chat_template(
            clean[:k], tools=tools, add_generation_prompt=True, tokenize=True, return_dict=True
        )["input_ids"]
        upto = tok.apply_chat_template(clean[: k + 1], tools=tools, tokenize=True, return_dict=True)[
            "input_ids"
        ]
        end = len(upto) - 1  # the template's newline after <|im_end|> is outside the turn
        assert enc["input_ids"][:end] == upto[:end]
        if message["trainable"]:
            expected[len(before) : end] = [1] * (end - len(before))
    assert enc["assistant_masks"] == expected
    masked = [t for t, m in zip(enc["input_ids"], expected, strict=True) if m]
    text = tok.decode(masked)
    assert "find_product" in text and "recommend_product" in text and text.count("<|im_end|>") == 2
    assert "view_product_information" not in text  # the non-trainable (code-written) turn
    assert "shopping assistant" not in text and "running shoes from nike" not in text  # system, user


def test_sft_loss_falls_and_every_parameter_changes(tiny_path, corpus, tmp_path) -> None:
    import torch
    from safetensors.torch import load_file

    from shoparena.train.runner import train

    summary = train(_cfg(corpus), tmp_path / "run", progress=False)
    logs = [json.loads(line) for line in (tmp_path / "run" / "logs.jsonl").read_text().splitlines()]
    losses = [entry["loss"] for entry in logs if "loss" in entry]
    assert len(losses) == 8 and losses[-1] < losses[0]
    before = load_file(f"{tiny_path}/model.safetensors")
    after = load_file(str(tmp_path / "run" / "final" / "model.safetensors"))
    assert set(before) == set(after)
    unchanged = [name for name in before if torch.equal(before[name], after[name])]
    assert unchanged == []
    from shoparena.runs import read_manifest
    from shoparena.train.runner import TrainManifest

    manifest = read_manifest(tmp_path / "run", TrainManifest)
    data = manifest.stages["data"].outputs
    assert (
        data["rows"] == 8
        and data["selected"] == 4
        and data["not_selected"] == {"kept/recovered": 2, "judge_low/agentic": 2}
    )
    assert manifest.kind == "train-sft" and manifest.versions.shoparena and manifest.method == "sft"
    assert manifest.data_hash == data["data_hash"] != "" and manifest.rows_used == 4
    assert summary["global_step"] == 8


def test_final_folder_loads_as_hf_spec(corpus, tmp_path) -> None:
    """``hf:RUN/final`` (the spec eval and the arena's backend take) renders tools and generates."""
    from corpus_fixture import tools_json

    from shoparena.llm.factory import backend_from_spec
    from shoparena.llm.types import ChatRequest
    from shoparena.train.runner import train

    train(_cfg(corpus, "sft", "sft.max_steps=1"), tmp_path / "run", progress=False)
    backend = backend_from_spec(f"hf:{tmp_path / 'run' / 'final'}", device="cpu")
    request = ChatRequest(messages=[{"role": "user", "content": "shoes"}], max_tokens=4)
    plain = backend.complete(request)
    with_tools = backend.complete(request.model_copy(update={"tools": json.loads(tools_json(None))}))
    assert plain.usage.completion_tokens >= 1
    assert with_tools.usage.prompt_tokens > plain.usage.prompt_tokens + 100  # the tool schemas are rendered


@pytest.mark.parametrize(
    "select,expected", [("kept", 4), ("kept+recovered", 6), ("kept+failed", 8), ("raw", 6)]
)
def test_selection_counts(corpus, select, expected) -> None:
    from shoparena.train.data import select_rows

    rows, report = select_rows(_cfg(corpus, "sft", f"data.select={select}"))
    assert len(rows) == report.selected == expected
    assert report.selected + sum(report.not_selected.values()) == report.rows
    if select == "raw":  # the firehose as it came: the recovery copies are shoparena's, not the firehose's
        assert report.not_selected == {"kept/recovered": 2} and set(rows["origin"]) == {"agentic"}


def test_selected_rows_do_not_depend_on_the_views_order(corpus, tmp_path) -> None:
    """The firehose lists rows in the order its sandboxes finished; training must not see that order."""
    import shutil

    import datasets

    from shoparena.train.data import select_rows

    shuffled = tmp_path / "shuffled"
    shutil.copytree(corpus, shuffled)
    views = datasets.load_from_disk(str(corpus / "views" / "sft"))
    train = views["train"]
    reordered = train.select(list(reversed(range(len(train)))))
    assert reordered["record_id"] != train["record_id"]
    shutil.rmtree(shuffled / "views" / "sft")
    reordered_views = datasets.DatasetDict({"train": reordered, "eval": views["eval"]})
    reordered_views.save_to_disk(str(shuffled / "views" / "sft"))
    for select in ("kept", "kept+failed"):
        first, _ = select_rows(_cfg(corpus, "sft", f"data.select={select}"))
        second, _ = select_rows(_cfg(shuffled, "sft", f"data.select={select}"))
        assert first["record_id"] == second["record_id"] == sorted(first["record_id"])
        assert first["messages"] == second["messages"]


def _untrainable_row(corpus):
    """The fixture's judged-low agentic row with every assistant turn flagged untrainable (what the corpus
    writes for a sub-task loop or a shortcut answer the proxy log cannot prove model-authored)."""
    import datasets

    rows = datasets.load_from_disk(str(corpus / "views" / "sft"))["train"]
    row = next(r for r in rows if r["outcome"] == "judge_low" and r["origin"] == "agentic")
    row["messages"] = [{**m, "trainable": False} for m in row["messages"]]
    return datasets.Dataset.from_list([row], features=rows.features)


def test_raw_trains_every_assistant_turn_of_an_untrainable_row(tiny_path, corpus) -> None:
    from transformers import AutoTokenizer

    from shoparena.train.config import ConfigError
    from shoparena.train.data import DataReport, prepare_sft, render_sft_record

    tok = AutoTokenizer.from_pretrained(tiny_path)
    row = _untrainable_row(corpus)
    with pytest.raises(ConfigError, match="no SFT row keeps a trainable token"):  # flags respected
        prepare_sft(row, tok, DataReport("sft", "train", "kept+failed"), max_length=None)
    report = DataReport("sft", "train", "raw")
    raw = prepare_sft(row, tok, report, max_length=None, every_turn=True)
    assert report.used == 1 and report.dropped == {}
    # Every assistant turn's tokens carry the loss: the same spans as the row with every flag set.
    flagged = [{**m, "trainable": m["role"] == "assistant"} for m in row[0]["messages"]]
    expected = render_sft_record(tok, flagged, row[0]["tools"])["assistant_masks"]
    assert raw[0]["assistant_masks"] == expected and sum(expected) > 0
    text = tok.decode([t for t, m in zip(raw[0]["input_ids"], expected, strict=True) if m])
    assert text.count("<|im_end|>") == 3 and "view_product_information" in text


def test_raw_counts_envelopes_no_view_holds(corpus, tmp_path) -> None:
    """A quarantined envelope (unreadable) and a record without an assistant turn are skipped with their
    reasons; a recovery copy without one is not an envelope and is not counted."""
    import shutil

    from shoparena.train.data import select_rows

    copy = tmp_path / "corpus"
    shutil.copytree(corpus, copy)
    quarantined = {"source": "x", "line": 3, "record": "m/p1", "field": "steps", "reason": "not a list"}
    (copy / "quarantine.jsonl").write_text(json.dumps(quarantined) + "\n")
    system = [{"role": "system", "content": "s"}, {"role": "user", "content": "q"}]
    records = [{"origin": "agentic", "messages": system}, {"origin": "recovered", "messages": system}]
    (copy / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    _, report = select_rows(_cfg(copy, "sft", "data.select=raw"))
    assert report.skipped == {"quarantined: steps": 1, "no_assistant_turn": 1}
    _, kept = select_rows(_cfg(copy, "sft", "data.select=kept"))
    assert kept.skipped == {}


def test_max_rows_takes_the_head_or_a_seeded_uniform_sample(corpus) -> None:
    from shoparena.train.data import select_rows

    def ids(*sets):
        rows, report = select_rows(_cfg(corpus, "sft", "data.select=kept+failed", "data.max_rows=3", *sets))
        assert report.dropped["max_rows"] == 5 and len(rows) == 3
        return list(rows["record_id"])

    everything, _ = select_rows(_cfg(corpus, "sft", "data.select=kept+failed"))
    order = list(everything["record_id"])
    assert ids() == order[:3]
    samples = {tuple(ids(f"data.sample_seed={seed}")) for seed in range(6)}
    assert ids("data.sample_seed=1") == ids("data.sample_seed=1")  # reproducible
    assert len(samples) > 1 and any(s != tuple(order[:3]) for s in samples)
    for s in samples:  # a subset, kept in file order
        assert list(s) == [i for i in order if i in s]


def test_cli_runs_and_reports_bad_config(corpus, tmp_path) -> None:
    runner = CliRunner()
    out = tmp_path / "cli"
    ok = runner.invoke(
        app,
        [
            "train",
            "sft",
            "--config",
            "tiny",
            "--set",
            f"data.corpus={corpus}",
            "--set",
            "sft.max_steps=1",
            "--out",
            str(out),
            "--quiet",
        ],
    )
    assert ok.exit_code == 0, ok.output
    assert (out / "final" / "config.json").is_file() and (out / "config.yaml").is_file()
    bad = runner.invoke(
        app,
        [
            "train",
            "sft",
            "--config",
            "tiny",
            "--set",
            "sft.lerning_rate=1",
            "--set",
            f"data.corpus={corpus}",
            "--out",
            str(tmp_path / "bad"),
        ],
    )
    assert bad.exit_code == 2 and "lerning_rate" in bad.output


def test_lora_run_saves_a_merged_plain_folder(tiny_path, corpus, tmp_path) -> None:
    import torch
    from safetensors.torch import load_file

    from shoparena.train.runner import train

    train(_cfg(corpus, "sft", "sft.max_steps=2", "lora.r=4"), tmp_path / "run", progress=False)
    final = tmp_path / "run" / "final"
    assert not (final / "adapter_config.json").exists()
    before, after = load_file(f"{tiny_path}/model.safetensors"), load_file(str(final / "model.safetensors"))
    assert set(before) == set(after)  # no lora_A/lora_B keys: merged into the base weights
    changed = {k for k in before if not torch.equal(before[k], after[k])}
    assert changed and all(k.split(".")[-2] in {"q_proj", "k_proj", "v_proj", "o_proj"} for k in changed)


def test_bad_record_error_names_the_record(tiny_path) -> None:
    import datasets
    from transformers import AutoTokenizer

    from shoparena.train.config import ConfigError
    from shoparena.train.data import DataReport, prepare_sft

    tok = AutoTokenizer.from_pretrained(tiny_path)
    rows = datasets.Dataset.from_list(
        [{"record_id": "run1:p9:0", "tools": "[not json", "messages": [{"role": "user", "content": "hi"}]}]
    )
    with pytest.raises(ConfigError, match=r"record 'run1:p9:0'"):
        prepare_sft(rows, tok, DataReport(view="sft", split="train", select="kept"), max_length=None)


def test_plain_loss_equals_trls_fused_lm_head_loss(corpus, tmp_path) -> None:
    """``sft.fused_lm_head: false`` (the model's own cross-entropy) trains on the same loss as TRL's tiled
    head: same first-step loss, same tokens counted, and the same weights after two steps."""
    import torch
    from safetensors.torch import load_file

    from shoparena.train.runner import train

    runs = {}
    for fused in (False, True):
        run = tmp_path / f"fused-{fused}"
        cfg = load_config(
            "tiny",
            "sft",
            [f"data.corpus={corpus}", "sft.max_steps=2", "sft.save_steps=100", f"sft.fused_lm_head={fused}"],
        )
        train(cfg, run, progress=False)
        logs = [json.loads(line) for line in (run / "logs.jsonl").read_text().splitlines()]
        runs[fused] = ([e for e in logs if "loss" in e], load_file(str(run / "final" / "model.safetensors")))
    (plain_logs, plain_w), (fused_logs, fused_w) = runs[False], runs[True]
    assert plain_logs[0]["loss"] == pytest.approx(fused_logs[0]["loss"], rel=1e-4)
    assert [e["num_tokens"] for e in plain_logs] == [e["num_tokens"] for e in fused_logs]
    assert "mean_token_accuracy" in fused_logs[0] and "mean_token_accuracy" not in plain_logs[0]
    assert all(torch.allclose(plain_w[k], fused_w[k], atol=1e-4) for k in plain_w)


def test_repeat_weighs_categories_and_counts_distinct_rows(tiny_path, corpus) -> None:
    """``data.repeat`` trains each kept row of a named category that many times per epoch; ``used`` still
    counts distinct rows, ``repeated`` the rows of an epoch."""
    import datasets
    from transformers import AutoTokenizer

    from shoparena.train.data import DataReport, prepare_sft

    tok = AutoTokenizer.from_pretrained(tiny_path)
    rows = datasets.load_from_disk(str(corpus / "views" / "sft"))["train"].select(range(3))
    categories = ["shop", "product", "shop"]
    rows = rows.remove_columns("category").add_column("category", categories)
    plain = prepare_sft(rows, tok, DataReport(view="sft", split="train", select="kept"), max_length=None)
    report = DataReport(view="sft", split="train", select="kept")
    weighed = prepare_sft(rows, tok, report, max_length=None, repeat={"shop": 3})
    assert report.used == 3 and report.repeated == len(weighed) == 3 + 3 + 1
    assert [r["input_ids"] for r in weighed][:3] == [plain[0]["input_ids"]] * 3
    assert weighed[3]["input_ids"] == plain[1]["input_ids"]


def test_truncated_and_dropped_rows_are_counted_and_said(tiny_path, corpus) -> None:
    """Rows over max_length are counted as truncated (or dropped with ``data.overlong: drop``), and the
    line ``train`` prints says how many."""
    import datasets
    from transformers import AutoTokenizer

    from shoparena.train.data import DataReport, prepare_sft

    tok = AutoTokenizer.from_pretrained(tiny_path)
    rows = datasets.load_from_disk(str(corpus / "views" / "sft"))["train"]
    full = prepare_sft(rows, tok, DataReport(view="sft", split="train", select="kept"), max_length=None)
    lengths = sorted(len(r["input_ids"]) for r in full)
    assert lengths[0] < lengths[-1]
    cap = lengths[-1] - 1  # the longest rows are over the cap, the shortest not
    over = sum(n > cap for n in lengths)
    report = DataReport(view="sft", split="train", select="kept", rows=len(rows))
    prepare_sft(rows, tok, report, max_length=cap)
    assert report.truncated == over >= 1 and report.used == len(rows)
    assert f"{over} truncated to max_length {cap} tokens" in report.describe()
    dropped = DataReport(view="sft", split="train", select="kept", rows=len(rows))
    prepare_sft(rows, tok, dropped, max_length=cap, overlong="drop")
    assert dropped.truncated == 0 and dropped.dropped == {"too_long": over}
    assert f"dropped {over} too_long" in dropped.describe()


def test_cli_says_what_became_of_the_rows_and_names_a_missing_corpus(corpus, tmp_path) -> None:
    runner = CliRunner()
    out = tmp_path / "run"
    sets = ["--set", "sft.max_steps=1", "--out", str(out), "--quiet"]
    missing = runner.invoke(
        app, ["train", "sft", "-c", "tiny", "--set", f"data.corpus={tmp_path / 'nope'}", *sets]
    )
    assert missing.exit_code == 2 and "does not exist" in missing.stderr
    # The failed run wrote no result: the corrected command runs in the same --out.
    ok = runner.invoke(app, ["train", "sft", "-c", "tiny", "--set", f"data.corpus={corpus}", *sets])
    assert ok.exit_code == 0, ok.output
    assert "data: " in ok.stderr and " rows used" in ok.stderr


def test_the_config_help_lists_every_shipped_preset() -> None:
    from shoparena.cli.train import PRESET_HELP
    from shoparena.train.config import preset_names

    assert sorted(PRESET_HELP.split(", ")) == preset_names()
