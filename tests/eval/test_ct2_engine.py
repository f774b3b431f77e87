"""``--engine ctranslate2``: greedy tokens and served episodes equal to the transformers backend, the
conversion cached by content, and bad input as one-line errors."""

from __future__ import annotations

import json
import sys

import pytest
from typer.testing import CliRunner

from shoparena.cli.main import app
from shoparena.eval.run import run_eval

pytest.importorskip("transformers")
pytest.importorskip("fastapi")


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    from shoparena.models.tiny import build_tiny_qwen3

    return build_tiny_qwen3(tmp_path_factory.mktemp("tiny") / "tiny-qwen3")


@pytest.fixture(scope="module")
def word_model(tmp_path_factory):
    from shoparena.models.word_student import build_word_student

    texts = ["find cheap red running shoes", "recommend the blue kettle with free shipping"] * 4
    return build_word_student(tmp_path_factory.mktemp("word") / "word", texts, layers=1, hidden=64)


@pytest.fixture
def ct2_cache(tmp_path, monkeypatch):
    pytest.importorskip(
        "ctranslate2", reason="engine ctranslate2 not installed (pip install 'shoparena[ct2]')"
    )
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    return tmp_path / "xdg" / "shoparena" / "ct2"


def _episodes(root) -> dict[str, tuple]:
    rows = {r["problem_id"]: r for r in map(json.loads, (root / "episodes.jsonl").read_text().splitlines())}
    texts = {
        e["problem_id"]: [t["completion"]["content"] for t in e["dialogue"]]
        for e in map(json.loads, (root / "output.jsonl").read_text().splitlines())
    }
    keys = ("status", "termination_reason", "success_strict", "steps", "prompt_tokens", "completion_tokens")
    return {p: (tuple(r[k] for k in keys), texts[p]) for p, r in rows.items()}


@pytest.mark.parametrize("which", ["tiny_model", "word_model"])
def test_greedy_tokens_equal_the_transformers_backend(which, request, ct2_cache) -> None:
    # Byte-level BPE (tiny Qwen3) and WordLevel (the word student): CTranslate2's vocabulary maps ids alike.
    from shoparena.eval.batching import BatchedGenerator, GenerationJob, load_model
    from shoparena.eval.ct2_engine import CTranslate2Backend

    folder = request.getfixturevalue(which)
    model, tokenizer = load_model(folder)
    base = tokenizer("find cheap red running shoes with free shipping")["input_ids"] * 8
    prompts = [[*base, 5, 6, 7], [*base, 8], [*base, *range(40, 70)], [*base[:20], 11, 12], [*base, 9] * 2]
    caps = [10, 3, 10, 7, 10]

    stop = (tokenizer.decode([8]),)  # the second prompt's reply repeats it: ends at the stop string

    def jobs() -> list[GenerationJob]:
        plain = [GenerationJob(p, n) for p, n in zip(prompts, caps, strict=True)]
        return [*plain, GenerationJob(prompts[1], 10, stop=stop)]

    reference = BatchedGenerator(model, tokenizer, max_batch=8, min_prefix=16)
    try:
        expected = [reference.submit(j).result(timeout=60)[0] for j in jobs()]
    finally:
        reference.close()
    backend = CTranslate2Backend(folder, max_batch=8)
    try:
        generator = backend.generator
        one_by_one = [generator.submit(j).result(timeout=60)[0] for j in jobs()]
        futures = [generator.submit(j) for j in jobs()]
        together = [f.result(timeout=60)[0] for f in futures]
    finally:
        backend.close()
    assert len(expected[1]) <= 3 and len(expected[0]) == 10  # per-row caps inside one call
    assert len(expected[-1]) < 10  # the stop string ended the row
    assert one_by_one == expected and together == expected
    assert generator.stats.prefix_hits >= 1 and generator.stats.max_batch_seen >= 2


def test_served_greedy_episodes_equal_in_process_ones(make_config, tiny_model, ct2_cache) -> None:
    from shoparena.eval.ct2_engine import CTranslate2Backend
    from shoparena.eval.server import LoopbackServer, create_app

    common = {"limit": 3, "max_steps": 2, "max_tokens": 8, "threads": 1}
    in_process = make_config(f"hf:{tiny_model}", out="inproc", concurrency=1, **common)
    summary = run_eval(in_process).dump()
    assert summary["policy"]["engine"].startswith("batched transformers")
    ct2_in_process = make_config(f"hf:{tiny_model}", out="ct2", concurrency=3, engine="ctranslate2", **common)
    assert run_eval(ct2_in_process).dump()["policy"]["engine"] == "CTranslate2 float32 (in process)"
    backend = CTranslate2Backend(tiny_model, max_batch=4)
    try:
        with LoopbackServer(create_app(backend, "tiny")) as server:
            served = make_config(f"openai:{server.base_url}#tiny", out="served", concurrency=3, **common)
            run_eval(served)
    finally:
        backend.close()
    expected = _episodes(in_process.out)
    assert len(expected) == 3 and all(texts for _, texts in expected.values())
    assert _episodes(ct2_in_process.out) == expected and _episodes(served.out) == expected
    assert backend.generator.stats.max_batch_seen >= 2  # concurrent episodes shared a call


def test_conversion_is_cached_by_content(tiny_model, tmp_path, ct2_cache, monkeypatch) -> None:
    import shutil

    from ctranslate2.converters import TransformersConverter

    from shoparena.eval.ct2_engine import converted_model

    first = converted_model(tiny_model)
    assert first.parent == ct2_cache and (first / "model.bin").is_file()
    assert not [p for p in ct2_cache.iterdir() if p.name.startswith(".")]  # no temporary folder left

    def refuse(*_a, **_k):
        raise AssertionError("converted again although the folder did not change")

    with monkeypatch.context() as patch:
        patch.setattr(TransformersConverter, "convert", refuse)
        assert converted_model(tiny_model) == first
    copy = tmp_path / "copy"
    shutil.copytree(tiny_model, copy)
    config = json.loads((copy / "config.json").read_text())
    (copy / "config.json").write_text(json.dumps({**config, "rms_norm_eps": 1e-5}))
    changed = converted_model(copy)
    assert changed != first and (changed / "model.bin").is_file()
    assert converted_model(tiny_model, compute_type="int8") not in (first, changed)


def test_bad_model_folder_is_a_one_line_error(bank, synth, tmp_path, ct2_cache) -> None:
    bad = tmp_path / "not-a-model"
    bad.mkdir()
    (bad / "config.json").write_text("{}")
    runner = CliRunner()
    args = ["--suite", str(bank), "--index", str(synth.index.index_dir), "--no-progress"]
    result = runner.invoke(
        app,
        [
            "eval",
            "run",
            "--policy",
            f"hf:{bad}",
            *args,
            "--out",
            str(tmp_path / "o"),
            "--engine",
            "ctranslate2",
        ],
    )
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and str(bad) in lines[0] and "safetensors" in lines[0]
    assert "Traceback" not in result.output
    served = runner.invoke(app, ["eval", "serve", f"hf:{bad}", "--engine", "ctranslate2"])
    assert (
        served.exit_code == 2 and len(served.stderr.strip().splitlines()) == 1 and str(bad) in served.stderr
    )
    engine = runner.invoke(app, ["eval", "serve", f"hf:{bad}", "--engine", "vllm"])
    assert engine.exit_code == 2 and "--engine must be one of" in engine.stderr


def test_a_missing_engine_says_how_to_install_it(tiny_model, monkeypatch) -> None:
    from shoparena.eval.ct2_engine import CTranslate2Backend
    from shoparena.llm.types import BackendError

    monkeypatch.setitem(sys.modules, "ctranslate2", None)  # import fails as if not installed
    with pytest.raises(BackendError, match=r"not installed \(pip install 'shoparena\[ct2\]'"):
        CTranslate2Backend(tiny_model)


def test_model_fingerprint_hashes_names_and_bytes_of_the_model_files_in_order(tmp_path):
    """sha256 over each model file's name, a NUL and its bytes, in name order; other files do not count. The
    bytes go through one shared read buffer, so a file longer than it and one after it are both whole."""
    import hashlib

    from shoparena.eval.ct2_engine import model_fingerprint
    from shoparena.jsonl import HASH_BLOCK

    files = {
        "model.safetensors": b"w" * (HASH_BLOCK + 5),
        "config.json": b'{"a": 1}',
        "tokenizer.json": b"{}",
    }
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    (tmp_path / "notes.txt").write_text("not a model file")
    expected = hashlib.sha256()
    for name in sorted(files):
        expected.update(name.encode() + b"\0" + files[name])
    assert model_fingerprint(tmp_path) == expected.hexdigest()
