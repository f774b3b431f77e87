"""train.models helpers that read files: catalogue titles through shoparena.jsonl."""

from __future__ import annotations

import json

from shoparena.jsonl import write_jsonl
from shoparena.train.models import catalogue_titles


def test_catalogue_titles_read_lines_through_jsonl(tmp_path):
    docs = [{"contents": "Mug\u2028blue\nfull text"}, {"contents": "Lamp"}]
    path = tmp_path / "documents.jsonl.gz"
    write_jsonl(path, docs)
    assert catalogue_titles(path) == ["Mug\u2028blue", "Lamp"]
    plain = tmp_path / "documents.jsonl"
    plain.write_text("\n".join(json.dumps(d) for d in docs) + "\n\n", encoding="utf-8")  # a blank last line
    assert catalogue_titles(plain) == ["Mug\u2028blue", "Lamp"]
