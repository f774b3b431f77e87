"""Which of a training run's checkpoints is whole: a kill while one is written must not block the resume.

A checkpoint (``checkpoints/checkpoint-N``) is written file by file: the weights, the optimizer and
scheduler, each process's random state, then ``trainer_state.json``. A process killed in between leaves a
folder that transformers picks as the last one and then refuses ("Can't find a valid checkpoint at ...") or
fails to read. :func:`last_whole_checkpoint` checks each folder, newest first, without loading it:

* ``trainer_state.json`` parses and its ``global_step`` is ``N`` (it is written last);
* weights are there (``model.safetensors``, ``adapter_model.safetensors``, a ``.bin`` of either, a sharded
  index with every shard it names, or an FSDP shard folder);
* every ``.safetensors`` file holds as many bytes as its header declares, every ``.pt`` / ``.pth`` /
  ``.bin`` (``torch.save``'s zip format) ends with its zip directory, every ``.json`` parses.

Only the shape of the files is checked (cheap, no torch import); a file damaged in its middle with its
length intact is not found here.
"""

from __future__ import annotations

import json
import re
import struct
import zipfile
from pathlib import Path

_CHECKPOINT = re.compile(r"^checkpoint-(\d+)$")
_WEIGHTS = ("model.safetensors", "adapter_model.safetensors", "pytorch_model.bin", "adapter_model.bin")
_INDEXES = ("model.safetensors.index.json", "pytorch_model.bin.index.json")


def _safetensors_damage(path: Path) -> str | None:
    size = path.stat().st_size
    with open(path, "rb") as fh:
        head = fh.read(8)
        if len(head) < 8:
            return "no header"
        (length,) = struct.unpack("<Q", head)
        if length > size - 8:
            return f"a header of {length:,} bytes in a {size:,}-byte file"
        try:
            header = json.loads(fh.read(length))
        except ValueError:
            return "a header that is not JSON"
    ends = [
        int(v["data_offsets"][1])
        for k, v in header.items()
        if k != "__metadata__" and isinstance(v, dict) and isinstance(v.get("data_offsets"), list)
    ]
    want = 8 + length + max(ends, default=0)
    return None if size == want else f"{size:,} bytes, its header declares {want:,}"


def file_damage(path: Path) -> str | None:
    """Why the checkpoint file ``path`` is torn, or None when its shape is whole."""
    suffix = path.suffix
    try:
        if suffix == ".safetensors":
            return _safetensors_damage(path)
        if suffix in (".pt", ".pth", ".bin"):
            return None if zipfile.is_zipfile(path) else "not a whole torch.save file (no zip directory)"
        if suffix == ".json":
            json.loads(path.read_bytes())
    except (OSError, ValueError) as exc:
        return f"{type(exc).__name__}: {exc}"[:200]
    return None


def checkpoint_damage(folder: Path) -> str | None:
    """Why ``folder`` (``checkpoint-N``) cannot be resumed from, or None when it is whole."""
    found = _CHECKPOINT.match(folder.name)
    if found is None:
        return "not a checkpoint-N folder"
    state = folder / "trainer_state.json"
    if not state.is_file():
        return "no trainer_state.json"
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    for path in files:
        damage = file_damage(path)
        if damage is not None:
            return f"{path.relative_to(folder)}: {damage}"
    step = json.loads(state.read_bytes()).get("global_step")
    if step != int(found.group(1)):
        return f"trainer_state.json is at step {step}"
    shards = [p for p in folder.iterdir() if p.is_dir() and p.name.startswith("pytorch_model_fsdp")]
    if shards or any((folder / name).is_file() for name in _WEIGHTS):
        return None
    for name in _INDEXES:
        if (folder / name).is_file():
            weight_map = json.loads((folder / name).read_bytes()).get("weight_map") or {}
            missing = sorted({str(v) for v in weight_map.values()} - {p.name for p in files})
            return f"{name} names missing shards {missing[:3]}" if missing else None
    return "no model weights"


def last_whole_checkpoint(checkpoints: Path) -> tuple[Path | None, list[tuple[Path, str]]]:
    """The newest whole checkpoint in ``checkpoints`` (None: none) and each newer torn one with why."""
    if not checkpoints.is_dir():
        return None, []
    folders = [p for p in checkpoints.iterdir() if p.is_dir() and _CHECKPOINT.match(p.name)]
    folders.sort(key=lambda p: int(p.name.rpartition("-")[2]), reverse=True)
    torn: list[tuple[Path, str]] = []
    for folder in folders:
        damage = checkpoint_damage(folder)
        if damage is None:
            return folder, torn
        torn.append((folder, damage))
    return None, torn


__all__ = ["checkpoint_damage", "file_damage", "last_whole_checkpoint"]
