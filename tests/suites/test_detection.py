"""Suite files in odd encodings or wrappers are read correctly or refused clearly, never misread as JSONL."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from shoparena.jsonl import JsonlReadError
from shoparena.suites.loaders import SuiteLoadError, load_suite
from world import SHARED_DATA

ORO = SHARED_DATA / "oro" / "problem_suite_v1.json"


@pytest.fixture(scope="module")
def records() -> list[dict]:
    return json.loads(ORO.read_text())


def _expect_all(path: Path, n: int, fmt: str = "oro_json") -> None:
    problems, summary = load_suite(path)
    assert (summary.format, summary.read, summary.kept, summary.quarantined) == (fmt, n, n, 0)
    assert len(problems) == n


def test_utf8_bom(tmp_path: Path, records: list[dict]) -> None:
    path = tmp_path / "s.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(records, indent=2).encode())
    _expect_all(path, len(records))


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be", "utf-32"])
def test_utf16_and_32_with_bom(tmp_path: Path, records: list[dict], encoding: str) -> None:
    text = json.dumps(records, indent=2, ensure_ascii=False)
    bom = {"utf-16-be": "\ufeff"}.get(encoding, "")
    path = tmp_path / "s.json"
    path.write_bytes((bom + text).encode(encoding))
    _expect_all(path, len(records))


def test_crlf_array_and_jsonl(tmp_path: Path, records: list[dict]) -> None:
    path = tmp_path / "s.json"
    path.write_bytes(json.dumps(records, indent=2).replace("\n", "\r\n").encode())
    _expect_all(path, len(records))
    jsonl = tmp_path / "s.jsonl"
    jsonl.write_bytes(b"".join(json.dumps(r).encode() + b"\r\n" for r in records))
    _, summary = load_suite(jsonl)
    assert summary.format == "sb_jsonl" and summary.kept == len(records) and summary.quarantined == 0


def test_problems_wrapper_pretty_and_compact(tmp_path: Path, records: list[dict]) -> None:
    for i, indent in enumerate((2, None)):
        path = tmp_path / f"s{i}.json"
        path.write_text(json.dumps({"problems": records}, indent=indent))
        _expect_all(path, len(records))


def test_foreign_object_is_refused_clearly(tmp_path: Path, records: list[dict]) -> None:
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"data": records}, indent=2))
    with pytest.raises(SuiteLoadError, match="keys data"):
        load_suite(path)
    path.write_text(json.dumps({"problems": {"a": 1}}))
    with pytest.raises(SuiteLoadError, match="must be a list"):
        load_suite(path)


def test_single_pretty_printed_problem(tmp_path: Path, records: list[dict]) -> None:
    path = tmp_path / "one.json"
    path.write_text(json.dumps(records[0], indent=2))
    problems, summary = load_suite(path)
    assert summary.read == summary.kept == 1 and problems[0].query == records[0]["query"]


def test_nul_bytes_without_bom_are_refused(tmp_path: Path, records: list[dict]) -> None:
    path = tmp_path / "s.json"
    path.write_bytes(json.dumps(records).encode("utf-16-le"))
    with pytest.raises(SuiteLoadError, match="NUL bytes"):
        load_suite(path)


@pytest.mark.parametrize("damage", ["not_gzip", "truncated", "bad_crc"])
def test_corrupt_gzip_is_a_load_error(tmp_path: Path, records: list[dict], damage: str) -> None:
    blob = gzip.compress(json.dumps(records).encode())
    if damage == "not_gzip":
        blob = b"plain text, not gzip"
    elif damage == "truncated":
        blob = blob[: len(blob) // 2]
    else:
        blob = blob[:-8] + bytes(b ^ 0xFF for b in blob[-8:-4]) + blob[-4:]
    path = tmp_path / "s.json.gz"
    path.write_bytes(blob)
    with pytest.raises(JsonlReadError, match="gzip"):
        load_suite(path)
