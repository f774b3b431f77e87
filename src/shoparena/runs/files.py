"""Typed reads and writes of run-directory files (JSON documents, YAML configs, JSON lines).

Every file one stage writes and another reads goes through a pydantic record here: a damaged or foreign file
raises :class:`RunFileError`, one line naming the file, the record (line) and the field; the CLI turns it
into exit code 2. Readers never modify what they read (a torn line is an error or a counted skip, never
cut off in place).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from shoparena.jsonl import iter_raw_lines
from shoparena.records.unicode import dump_json

T = TypeVar("T", bound=BaseModel)


class RunFileError(ValueError):
    """A run-directory file is missing, not UTF-8, torn, or not the record it should be; names the file,
    the record (line) and the field."""


def validation_detail(exc: ValidationError) -> str:
    """``field: message`` of the first error (``<root>`` for the whole value)."""
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"]) or "<root>"
    return f"{where}: {err['msg']}"


def _text(path: Path, what: str) -> str:
    if not path.is_file():
        raise RunFileError(f"{path}: no {what}" + (" (a directory)" if path.exists() else ""))
    try:
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RunFileError(f"{path}: not UTF-8 (byte {exc.start})") from None


def validate_record(value: Any, model: type[T], path: str | Path, *, where: str = "") -> T:
    """``value`` as ``model``, or :class:`RunFileError` naming ``path``, ``where`` (a line) and the field."""
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        place = f"{path}{':' + where if where else ''}"
        raise RunFileError(f"{place}: not a {model.__name__}: {validation_detail(exc)}") from None


def load_json(path: str | Path, *, what: str = "JSON file") -> Any:
    """The JSON value of ``path`` (any shape), or :class:`RunFileError` (missing, empty, torn, not UTF-8)."""
    path = Path(path)
    text = _text(path, what)
    if not text.strip():
        raise RunFileError(f"{path}: empty {what} (a run killed while writing it?)")
    try:
        return json.loads(text)
    except ValueError as exc:
        raise RunFileError(f"{path}: torn or corrupt {what}, not JSON ({exc})") from None


def read_json_record(path: str | Path, model: type[T]) -> T:
    """``path`` (a JSON document) as ``model``."""
    return validate_record(load_json(path, what=model.__name__), model, path)


def load_yaml(path: str | Path, *, what: str = "YAML file") -> Any:
    """The YAML value of ``path`` (any shape), or :class:`RunFileError` (missing, not UTF-8, bad YAML)."""
    path = Path(path)
    text = _text(path, what)
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f":{mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or type(exc).__name__
        raise RunFileError(f"{path}{at}: not valid YAML ({problem})") from None


def read_yaml_record(path: str | Path, model: type[T]) -> T:
    """``path`` (a YAML mapping) as ``model``."""
    value = load_yaml(path, what=model.__name__)
    if not isinstance(value, dict):
        raise RunFileError(f"{path}: not a {model.__name__}: expected a mapping, got {type(value).__name__}")
    return validate_record(value, model, path)


def iter_json_lines(path: str | Path) -> Iterator[tuple[int, Any]]:
    """``(line_no, value)`` per non-blank line; a line that is not JSON raises :class:`RunFileError` naming
    the file and line (use :func:`shoparena.jsonl.iter_jsonl` to count bad lines instead)."""
    for line_no, raw in iter_raw_lines(path):
        try:
            yield line_no, json.loads(raw)
        except ValueError as exc:
            raise RunFileError(f"{path}:{line_no}: torn or corrupt line, not JSON ({exc})") from None


def iter_records(path: str | Path, model: type[T]) -> Iterator[tuple[int, T]]:
    """``(line_no, record)`` per line of a JSON-lines file, each validated as ``model``."""
    for line_no, value in iter_json_lines(path):
        yield line_no, validate_record(value, model, path, where=str(line_no))


def write_json_record(path: str | Path, record: BaseModel, *, indent: int = 2) -> Path:
    """Write ``record`` atomically (temporary file, fsync, rename): a killed writer leaves the old file or
    the new one, never half of one."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(dump_json(record, indent=indent) + "\n")
        fh.flush()
        os.fsync(fh.fileno())
    tmp.replace(path)
    return path


__all__ = [
    "RunFileError",
    "iter_json_lines",
    "iter_records",
    "load_json",
    "load_yaml",
    "read_json_record",
    "read_yaml_record",
    "validate_record",
    "validation_detail",
    "write_json_record",
]
