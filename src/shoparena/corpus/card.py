"""The corpus folder as the Hugging Face ecosystem loads it: the card's YAML metadata, and publishing.

:func:`card_metadata` writes the Hub's dataset-card header (license, one config per view with its splits
and its features, read from the Parquet files themselves), so ``datasets.load_dataset(CORPUS_DIR, "sft")``
works offline on a built corpus. :func:`prepare_publish` stages what goes to the Hub (the card, the Parquet
views, ``report.json`` and ``diversity.json`` when present) and :func:`publish` uploads it with
``huggingface_hub``; when the Hub cannot be reached it fails with one line that names the repository and
the prepared folder.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import yaml

from shoparena.corpus.layout import CorpusRun
from shoparena.corpus.views import SPLITS, VIEWS
from shoparena.jsonl import iter_raw_lines
from shoparena.records.corpus import CorpusReport
from shoparena.runs.identity import IDENTITY_NAME, LOCK_NAME

LICENSE = "apache-2.0"
#: Files staged for the Hub besides the card and the Parquet views.


class PublishError(RuntimeError):
    """Publishing failed (one line: the repository, the reason, the prepared folder)."""


def _features(path: Path) -> list[dict[str, Any]] | None:
    import pyarrow.parquet as pq
    from datasets import Features

    try:
        return Features.from_arrow_schema(pq.read_schema(path))._to_yaml_list()
    except Exception:  # an unreadable view: leave the features to the loader
        return None


def _rows(path: Path) -> int:
    import pyarrow.parquet as pq

    return int(pq.read_metadata(path).num_rows)


def _split_size(path: Path) -> dict[str, int]:
    import pyarrow.parquet as pq

    meta = pq.read_metadata(path)
    size = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
    return {"num_bytes": int(size), "num_examples": int(meta.num_rows)}


#: The card's configurations: (config name, corpus view). The first is the default, what
#: ``load_dataset(CORPUS)`` loads: the training selection in TRL's prompt-completion form. ``sft_all`` is
#: every trajectory with an assistant turn (every outcome, per-message ``trainable`` flags): filter research.
CONFIGS = (("sft", "sft_kept"), ("sft_all", "sft"), ("steps", "steps"), ("kto", "kto"))


def _sft_kept_rows(views_dir: Path) -> Iterator[dict[str, Any]]:
    """The ``sft_kept`` rows of both splits, from the JSONL view (the same rows as the Parquet view, read
    with orjson: Arrow's ``to_pylist`` of the nested messages cost ten times more), else from Parquet."""
    import orjson
    import pyarrow.parquet as pq

    for split in SPLITS:
        jsonl, parquet = views_dir / f"sft_kept-{split}.jsonl", views_dir / f"sft_kept-{split}.parquet"
        if jsonl.exists():
            for _, line in iter_raw_lines(jsonl):
                yield orjson.loads(line)
        elif parquet.exists():
            yield from pq.read_table(parquet, columns=["prompt", "completion", "tools"]).to_pylist()


def sft_row_lengths(
    views_dir: Path, tokenizer: Any, count: Callable[[str], int] | None = None
) -> dict[str, Any] | None:
    """Token lengths of the published ``sft`` rows (``sft_kept`` view, both splits): the whole conversation
    with its tools through ``tokenizer``'s chat template. ``max_length`` is the smallest power of two that
    holds the longest row (a shorter window cuts late turns out of the loss, and TRL drops a row whose
    trainable turns all fall outside it). None without rows or without a chat template.

    ``count``: the token count of a rendered text by the same tokenizer (the build passes the token gate's
    :class:`shoparena.corpus.gates.TokenCounter`, which has counted most pieces of these texts already);
    default: ``len(tokenizer(text, add_special_tokens=False)["input_ids"])``."""
    import json

    if not getattr(tokenizer, "chat_template", None):
        return None
    lengths = []
    for row in _sft_kept_rows(views_dir):
        conversation = row["prompt"] + row["completion"]
        messages = [{k: v for k, v in m.items() if v not in (None, [])} for m in conversation]
        for m in messages:
            m.setdefault("content", "")
        tools = json.loads(row["tools"]) or None
        text = tokenizer.apply_chat_template(messages, tools=tools, tokenize=False)
        if count is not None:
            lengths.append(count(text))
        else:
            lengths.append(len(tokenizer(text, add_special_tokens=False)["input_ids"]))
    if not lengths:
        return None
    lengths.sort()
    at = lambda q: lengths[min(len(lengths) - 1, int(q * len(lengths)))]  # noqa: E731
    return {
        "rows": len(lengths),
        "p50": at(0.5),
        "p95": at(0.95),
        "max": lengths[-1],
        "max_length": 1 << (lengths[-1] - 1).bit_length(),
        "tokenizer": str(getattr(tokenizer, "name_or_path", "") or "tiny Qwen3 (the token gate's)"),
    }


def card_metadata(corpus_dir: str | Path, report: CorpusReport) -> dict[str, Any]:
    """The Hub's YAML header for the corpus card: license, configs per view and split, features, sizes."""
    corpus = CorpusRun.at(corpus_dir)
    configs, infos = [], []
    named = {view for _, view in CONFIGS}
    # A view added to VIEWS (one entry) is published under its own name.
    for name, view in [*CONFIGS, *((view, view) for view in VIEWS if view not in named)]:
        files = [(split, corpus.view_file(view, split, "parquet")) for split in SPLITS]
        # An empty split is left out: datasets' Parquet reader fails on a file without rows.
        present = [(split, path) for split, path in files if path.exists() and _rows(path)]
        if not present:
            continue
        config: dict[str, Any] = {
            "config_name": name,
            "data_files": [
                {"split": split, "path": f"{corpus.views_dir.name}/{path.name}"} for split, path in present
            ],
        }
        if name == CONFIGS[0][0]:
            config["default"] = True
        configs.append(config)
        info: dict[str, Any] = {"config_name": name}
        features = _features(present[0][1])
        if features is not None:
            info["features"] = features
        info["splits"] = [{"name": split, **_split_size(path)} for split, path in present]
        infos.append(info)
    return {
        "license": LICENSE,
        "pretty_name": "shoparena trajectory corpus",
        "language": ["en"],
        "task_categories": ["text-generation"],
        "tags": ["agents", "tool-use", "shopping", "trajectories"],
        "configs": configs,
        "dataset_info": infos,
    }


def card_header(corpus_dir: str | Path, report: CorpusReport) -> str:
    """The card's front matter block (``---`` YAML ``---``)."""
    body = yaml.safe_dump(card_metadata(corpus_dir, report), sort_keys=False, allow_unicode=True)
    return f"---\n{body}---\n"


#: What a staging folder holds that is not for the Hub (the claim's identity and lock).
STAGING_BOOKKEEPING = (IDENTITY_NAME, LOCK_NAME, "*.tmp")


def prepare_publish(corpus_dir: str | Path, out: str | Path) -> Path:
    """Stage the folder the Hub receives: ``README.md`` (the card), ``views/*.parquet`` and the reports.

    ``out`` is claimed like a run directory (:func:`shoparena.runs.identity.claim_run_dir`, kind
    ``publish``): a destination that is, holds or lies inside what is staged (the corpus itself, its
    ``views/``, its parent), a symbolic link, or a non-empty folder that no ``corpus publish`` wrote is
    refused before anything is written; an earlier staging folder has its own files replaced, nothing else.

    Raises:
        PublishError: one line naming the corpus or the destination.
    """
    from shoparena.runs.identity import (
        RunDirError,
        RunIdentity,
        RunKind,
        claim_run_dir,
    )

    src, dst = CorpusRun.at(corpus_dir), CorpusRun.at(out)  # the staging folder mirrors the corpus layout
    card = src.card_path
    if not card.is_file() or not card.read_text(encoding="utf-8").startswith("---\n"):
        raise PublishError(f"{src.path}: no dataset card with Hub metadata ({card.name}); rebuild the corpus")
    parquet = sorted(src.views_dir.glob("*.parquet"))
    if not parquet:
        raise PublishError(f"{src.path}: no Parquet views under {src.views_dir.name}/")
    reports = (src.report_path, src.diversity_path)
    extras = [extra for extra in reports if extra.is_file()]
    try:
        claim = claim_run_dir(
            dst.path,
            RunIdentity.of(RunKind.PUBLISH, {}, {}),
            own=(card.name, src.views_dir.name, *(extra.name for extra in reports)),
            input_paths=[card, *parquet, *extras],
            restart=True,  # a staging folder is always staged afresh (its own files only)
        )
    except RunDirError as exc:
        raise PublishError(str(exc)) from None
    with claim:
        dst.views_dir.mkdir(parents=True)
        shutil.copy2(card, dst.card_path)
        for path in parquet:
            shutil.copy2(path, dst.views_dir / path.name)
        for extra in extras:
            shutil.copy2(extra, dst.path / extra.name)
    return dst.path


def publish(
    folder: str | Path,
    repo_id: str,
    *,
    private: bool = True,
    token: str | None = None,
    endpoint: str | None = None,
) -> str:
    """Upload a prepared folder to the Hub dataset repository ``repo_id``; returns the commit URL.

    Raises:
        PublishError: the Hub cannot be reached (offline) or refused the upload.
    """
    try:
        from huggingface_hub import HfApi
    except ImportError:
        raise PublishError("publishing needs huggingface_hub (pip install huggingface_hub)") from None
    api = HfApi(endpoint=endpoint, token=token)
    try:
        api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
        info = api.upload_folder(
            folder_path=str(folder),
            repo_id=repo_id,
            repo_type="dataset",
            ignore_patterns=list(STAGING_BOOKKEEPING),
        )
    except Exception as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise PublishError(
            f"cannot publish {repo_id} to {endpoint or 'the Hugging Face Hub'}: {reason}; "
            f"the prepared folder is {folder}"
        ) from None
    return str(getattr(info, "commit_url", info))


__all__ = [
    "CONFIGS",
    "LICENSE",
    "STAGING_BOOKKEEPING",
    "PublishError",
    "card_header",
    "card_metadata",
    "prepare_publish",
    "publish",
    "sft_row_lengths",
]
