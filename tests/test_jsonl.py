"""Our JSONL side-file reader splits on newline only and reports what it skips."""

from __future__ import annotations

import json
import logging

from shoparena.jsonl import read_jsonl_dicts


def test_records_with_unicode_line_separators_survive(tmp_path, caplog):
    records = [{"title": "a\u0085b"}, {"title": "c\u2028d"}, {"n": 3}]
    path = tmp_path / "out.jsonl"
    body = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    path.write_text(body + "[1, 2]\n{torn", encoding="utf-8")
    with caplog.at_level(logging.WARNING):
        assert read_jsonl_dicts(path) == records
    assert "out.jsonl:4" in caplog.text and "out.jsonl:5" in caplog.text


def test_missing_file_reads_empty(tmp_path):
    assert read_jsonl_dicts(tmp_path / "absent.jsonl") == []
