"""A manifest written last into a built model folder, so rebuilds can be skipped safely.

A folder counts as valid only when its manifest parses and every file it lists is present with the recorded
size; an interrupted build (no manifest) or a later edit (size mismatch) is rebuilt.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

MANIFEST_NAME = "shoparena-model.json"


class ModelManifest(BaseModel):
    """What a builder produced.

    Attributes:
        kind: Builder name (``smollm2-135m-instruct`` or ``tiny-qwen3``).
        source: Where the weights came from (a GGUF path, or ``random-init``).
        template_version: Version of the chat template written (a bump forces a rebuild).
        files: File name -> size in bytes, for every file of the folder except the manifest.
        params: Parameter count of the model.
        details: Builder-specific facts (seed, timings, ...).
    """

    model_config = ConfigDict(extra="forbid")

    kind: str
    source: str
    template_version: int = Field(ge=1)
    files: dict[str, int]
    params: int = Field(ge=0)
    details: dict[str, Any] = Field(default_factory=dict)


def read_manifest(model_dir: str | Path) -> ModelManifest | None:
    """Return the folder's manifest, or None when it is missing or unreadable."""
    path = Path(model_dir) / MANIFEST_NAME
    try:
        return ModelManifest.model_validate_json(path.read_bytes())
    except (OSError, ValidationError, ValueError):
        return None


def is_valid_model_dir(model_dir: str | Path, *, kind: str, template_version: int) -> bool:
    """Whether ``model_dir`` holds a complete build of ``kind`` with the given chat template version."""
    root = Path(model_dir)
    manifest = read_manifest(root)
    if manifest is None or manifest.kind != kind or manifest.template_version != template_version:
        return False
    for name, size in manifest.files.items():
        path = root / name
        if not path.is_file() or path.stat().st_size != size:
            return False
    return True


def finish_build(
    tmp_dir: Path,
    out_dir: Path,
    *,
    kind: str,
    source: str,
    template_version: int,
    params: int,
    details: dict[str, Any] | None = None,
) -> Path:
    """Write the manifest into ``tmp_dir`` and move it to ``out_dir`` (replacing an old folder).

    Building in a sibling temporary folder and renaming at the end means a crash never leaves a folder that
    looks complete.
    """
    files = {
        str(p.relative_to(tmp_dir)): p.stat().st_size
        for p in sorted(tmp_dir.rglob("*"))
        if p.is_file() and p.name != MANIFEST_NAME
    }
    manifest = ModelManifest(
        kind=kind,
        source=source,
        template_version=template_version,
        files=files,
        params=params,
        details=details or {},
    )
    (tmp_dir / MANIFEST_NAME).write_text(
        json.dumps(manifest.model_dump(), indent=2, sort_keys=True) + "\n", encoding="utf-8"
    )
    if out_dir.exists():
        shutil.rmtree(out_dir)
    os.replace(tmp_dir, out_dir)
    return out_dir


def fresh_tmp_dir(out_dir: Path) -> Path:
    """An empty sibling folder of ``out_dir`` to build into (removed first if a crash left one)."""
    tmp = out_dir.with_name(f".{out_dir.name}.tmp-{os.getpid()}")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    return tmp


def save_model_folder(
    model: Any,
    tokenizer: Any,
    out_dir: Path,
    *,
    kind: str,
    source: str,
    template_version: int,
    details: dict[str, Any] | None = None,
    say: Callable[[str], None] = lambda _msg: None,
) -> Path:
    """Save a transformers model + tokenizer as a finished folder: temp sibling, manifest, atomic rename.

    Raises:
        RunDirError: ``out_dir`` is a symbolic link, a file, or a non-empty folder that holds no model
            manifest (replacing it would delete what this command did not write); nothing is touched.
    """
    from shoparena.runs.identity import refuse_foreign_destination

    refuse_foreign_destination(out_dir, markers=(MANIFEST_NAME,))
    params = sum(p.numel() for p in model.parameters())
    tmp = fresh_tmp_dir(out_dir)
    say(f"saving {params:,} parameters to {out_dir}")
    try:
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return finish_build(
        tmp,
        out_dir,
        kind=kind,
        source=source,
        template_version=template_version,
        params=params,
        details=details,
    )
