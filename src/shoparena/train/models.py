"""Model names in training configs → local folders, and the ``student-cpu`` builder.

``tiny`` and ``smollm2`` are the offline folders of :mod:`shoparena.models`; ``student-cpu`` is a random-init
Qwen3 with 4 layers × 256 hidden and the 4k shopping BPE of the tiny model (about 4 M parameters). Why that
size: on the 2-core development host it trains at ~0.46 s per 1k tokens (spec §8 table), so 5 M corpus tokens
take ~0.6 h, against ~18 h for SmolLM2-135M, whose 49k-vocabulary output layer dominates the cost. A fidelity
experiment compares students trained the same way on differently filtered corpora, so a from-scratch student
is a fair probe; SmolLM2 remains the pretrained option.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

STUDENT_KIND = "student-cpu-qwen3"
STUDENT_LAYERS = 4
STUDENT_HIDDEN = 256


def build_student(out_dir: str | Path, *, seed: int = 0, force: bool = False) -> Path:
    """Build (or reuse) the ``student-cpu`` folder (see module docstring)."""
    from shoparena.models.folder import is_valid_model_dir, read_manifest, save_model_folder
    from shoparena.models.templates import TEMPLATE_VERSION
    from shoparena.models.tiny import random_qwen3, train_tiny_tokenizer

    out = Path(out_dir).expanduser()
    if not force and is_valid_model_dir(out, kind=STUDENT_KIND, template_version=TEMPLATE_VERSION):
        manifest = read_manifest(out)
        if manifest is not None and manifest.details.get("seed") == seed:
            return out
    tokenizer = train_tiny_tokenizer()
    model = random_qwen3(
        tokenizer,
        hidden=STUDENT_HIDDEN,
        layers=STUDENT_LAYERS,
        heads=4,
        kv_heads=2,
        seed=seed,
        max_positions=8192,
    )
    return save_model_folder(
        model,
        tokenizer,
        out,
        kind=STUDENT_KIND,
        source="random-init",
        template_version=TEMPLATE_VERSION,
        details={"seed": seed, "layers": STUDENT_LAYERS, "hidden": STUDENT_HIDDEN},
    )


def resolve_model(name: str) -> str:
    """``tiny`` / ``smollm2`` / ``student-cpu`` → a built local folder; anything else is returned as given
    (a folder or a hub id, loaded by transformers)."""
    from shoparena.models.smollm2 import default_cache_dir

    models = default_cache_dir() / "models"
    if name == "tiny":
        from shoparena.models.tiny import build_tiny_qwen3

        return str(build_tiny_qwen3(models / "tiny-qwen3"))
    if name == "smollm2":
        from shoparena.models.smollm2 import convert_smollm2

        return str(convert_smollm2())
    if name == "student-cpu":
        return str(build_student(models / "student-cpu"))
    if name == WORD_STUDENT:
        raise ValueError(
            "model student-word is built over a run's catalogue by the pipeline's model stage: pass its "
            "folder (RUN/model/<hash>) as the model"
        )
    return name


def prepare_tokenizer(tokenizer: Any) -> None:
    """Make the tokenizer trainable, in place: a padding token, a chat template with ``{% generation %}``
    markers, and a response parser for online GRPO's tool calls.

    A template with generation markers is kept; a template TRL knows (Qwen3 among them) is patched as TRL
    does; anything else gets shoparena's ChatML tools template. A template with Hermes ``<tool_call>`` tags
    gets TRL's Qwen3 response template (same tags) unless the tokenizer already has a parser.
    """
    from trl.chat_template_utils import get_training_chat_template, has_generation_markers, qwen3_template

    from shoparena.models.templates import chatml_tools_template

    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    template = tokenizer.chat_template
    if not (template and has_generation_markers(template)):
        try:
            patched = get_training_chat_template(tokenizer) if template else None
        except ValueError:
            patched = None
        tokenizer.chat_template = patched or chatml_tools_template(thinking=True)
    if getattr(tokenizer, "response_template", None) is None and "<tool_call>" in tokenizer.chat_template:
        tokenizer.response_template = qwen3_template


WORD_STUDENT = "student-word"


def catalogue_titles(catalog: str | Path) -> list[str]:
    """The first line (the title) of every catalogue document (JSONL, gzip or plain; lines through
    :mod:`shoparena.jsonl`, so blank lines are skipped and a damaged gzip names the file)."""
    import json

    from shoparena.jsonl import iter_raw_lines

    return [
        str(json.loads(raw).get("contents", "")).split("\n", 1)[0] for _, raw in iter_raw_lines(Path(catalog))
    ]


def suite_requests(suites: list[str | Path]) -> list[str]:
    """The requests of the given suites (training-side pools only: the caller never passes held-out)."""
    from shoparena.suites.loaders import load_suite

    return [p.query for suite in suites for p in load_suite(suite)[0]]


def word_student_texts(
    catalog: str | Path, suites: list[str | Path], knowledge: list[str | Path]
) -> Iterator[str]:
    """The texts whose words make ``student-word``'s vocabulary: the catalogue (JSONL, gzip or plain), the
    requests of the given suites (training and public pools only: never the held-out partition's), the
    knowledge pages behind ``web_search``, and the compact render profile's fixed text."""
    import gzip

    from shoparena.formats.profiles import COMPACT_TOOLS, compact_system

    path = Path(catalog)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        yield from fh
    yield from suite_requests(suites)
    for page_file in knowledge:
        if Path(page_file).is_file():
            yield Path(page_file).read_text(encoding="utf-8")
    yield compact_system(COMPACT_TOOLS)


def build_pipeline_student(
    out_dir: str | Path,
    *,
    catalog: str | Path,
    suites: list[str | Path],
    knowledge: list[str | Path],
    seed: int = 0,
    layers: int = 2,
    hidden: int = 128,
    pretrain_steps: int = 500,
    pretrain_batch: int = 12,
    pretrain_items: float = 0.0,
    threads: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> Path:
    """Build (or reuse) ``student-word`` over a run's catalogue and training-side suites, then copy-pretrain
    it (:mod:`shoparena.train.pretrain`; ``pretrain_items``: the share of item-listing pairs over the suites'
    requests) into ``OUT/pretrained`` (``pretrain_steps`` 0: no pretraining); the
    fingerprint is the hash of the inputs' bytes, so a changed catalogue or suite rebuilds it. Returns the
    folder to train and evaluate as the base."""
    import hashlib

    from shoparena.models.word_student import build_word_student

    digest = hashlib.sha256()
    for item in [catalog, *suites, *knowledge]:
        p = Path(item)
        digest.update(p.name.encode())
        digest.update(p.read_bytes() if p.is_file() else b"-")
    out = Path(out_dir)
    init = build_word_student(
        out / "init",
        word_student_texts(catalog, suites, knowledge),
        seed=seed,
        layers=layers,
        hidden=hidden,
        fingerprint=digest.hexdigest()[:16],
    )
    if pretrain_steps <= 0:
        return init
    pretrained = out / "pretrained"
    if (pretrained / "model.safetensors").is_file():
        # Written by a rename after training; the stage hash covers every knob, so it is this build's.
        return pretrained
    from shoparena.train.pretrain import copy_pretrain

    groups = [catalogue_titles(catalog), suite_requests(suites)]
    say = progress or (lambda _line: None)
    report = copy_pretrain(
        init,
        groups,
        pretrained,
        steps=pretrain_steps,
        batch_size=pretrain_batch,
        threads=threads,
        seed=seed,
        requests=groups[1],
        item_share=pretrain_items,
        progress=lambda step, loss, acc: say(
            f"copy pretraining step {step}/{pretrain_steps}: loss {loss:.3f}, copy accuracy {acc:.3f}"
        ),
    )
    say(f"copy pretraining done: {report}")
    return pretrained
