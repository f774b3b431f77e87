"""The tiny Qwen3 folder: loadable, the sizes the spec names, tag tokens, determinism, rebuild rules, CLI."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest
from models_support import MISSING, SKIP_REASON
from typer.testing import CliRunner

from shoparena.models.folder import MANIFEST_NAME, is_valid_model_dir, read_manifest
from shoparena.models.templates import TEMPLATE_VERSION
from shoparena.models.tiny import KIND, SPECIAL_TOKENS, TAG_TOKENS, build_tiny_qwen3

pytestmark = pytest.mark.skipif(bool(MISSING), reason=SKIP_REASON)


def _digests(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


def test_folder_loads_with_auto_classes_and_has_the_named_sizes(tiny_dir: Path, tiny_tokenizer) -> None:
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(tiny_dir)
    cfg = model.config
    shape = (cfg.model_type, cfg.hidden_size, cfg.num_hidden_layers, cfg.num_attention_heads)
    assert shape == ("qwen3", 64, 2, 4)
    params = sum(p.numel() for p in model.parameters())
    assert 300_000 <= params <= 360_000
    assert read_manifest(tiny_dir).params == params
    assert 3_900 <= len(tiny_tokenizer) <= 4_100
    assert cfg.vocab_size == len(tiny_tokenizer)
    assert tiny_tokenizer.eos_token == "<|im_end|>"
    assert cfg.eos_token_id == tiny_tokenizer.convert_tokens_to_ids("<|im_end|>")


def test_tag_tokens_are_single_ids_and_survive_skip_special_tokens(tiny_tokenizer) -> None:
    for tag in (*TAG_TOKENS, *SPECIAL_TOKENS):
        ids = tiny_tokenizer(f"x{tag}y", add_special_tokens=False)["input_ids"]
        assert tiny_tokenizer.convert_tokens_to_ids(tag) in ids, tag
    text = '<tool_call>\n{"name": "terminate", "arguments": {}}\n</tool_call><|im_end|>'
    ids = tiny_tokenizer(text, add_special_tokens=False)["input_ids"]
    # The parser needs the tags after decoding with skip_special_tokens=True; the chat frame goes away.
    assert tiny_tokenizer.decode(ids, skip_special_tokens=True) == text.removesuffix("<|im_end|>")


def test_same_seed_gives_identical_bytes_and_another_seed_other_weights(
    tiny_dir: Path, tmp_path: Path
) -> None:
    again = build_tiny_qwen3(tmp_path / "again", seed=0)
    assert _digests(again) == _digests(tiny_dir)
    other = _digests(build_tiny_qwen3(tmp_path / "other", seed=1))
    base = _digests(tiny_dir)
    assert other["model.safetensors"] != base["model.safetensors"]
    assert other["tokenizer.json"] == base["tokenizer.json"]  # the corpus, hence the tokenizer, is fixed


def test_valid_folder_is_reused_and_a_damaged_one_rebuilt(tiny_dir: Path, tmp_path: Path) -> None:
    folder = tmp_path / "tiny"
    shutil.copytree(tiny_dir, folder)
    weights = folder / "model.safetensors"
    stamp = weights.stat().st_mtime_ns
    assert build_tiny_qwen3(folder, seed=0) == folder
    assert weights.stat().st_mtime_ns == stamp  # reused, not rewritten
    weights.write_bytes(weights.read_bytes()[:-10])
    assert not is_valid_model_dir(folder, kind=KIND, template_version=TEMPLATE_VERSION)
    build_tiny_qwen3(folder, seed=0)
    assert _digests(folder) == _digests(tiny_dir)
    # A different seed than the manifest's is a different model: rebuilt, not reused.
    build_tiny_qwen3(folder, seed=3)
    assert read_manifest(folder).details["seed"] == 3
    assert not list(tmp_path.glob(".tiny.tmp-*"))


def test_cli_builds_then_reuses(tmp_path: Path) -> None:
    from shoparena.cli.main import app

    out = tmp_path / "cli-tiny"
    first = CliRunner().invoke(app, ["models", "tiny", "--out", str(out), "--seed", "2"])
    assert first.exit_code == 0, first.output
    assert str(out) in first.stdout
    assert (out / MANIFEST_NAME).is_file()
    stamp = (out / "model.safetensors").stat().st_mtime_ns
    second = CliRunner().invoke(app, ["models", "tiny", "--out", str(out), "--seed", "2"])
    assert second.exit_code == 0, second.output
    assert (out / "model.safetensors").stat().st_mtime_ns == stamp


def test_bench_generates_exactly_the_requested_tokens(tiny_dir: Path) -> None:
    from shoparena.models.bench import measure_generation

    speed = measure_generation(tiny_dir, new_tokens=5, repeats=1, threads=1)
    assert speed.new_tokens == 5  # EOS is ignored, so the rate is per generated token
    assert speed.threads == 1
    assert speed.tokens_per_s == pytest.approx(5 / speed.generate_s, rel=0.01)
