"""``corpus publish --out`` claims its destination: it never deletes or overwrites what it did not write
(issue 31, finding 1: an unconditional ``rmtree`` of the destination)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from shoparena.cli.main import app


def _corpus(root: Path) -> Path:
    """A folder shaped like a built corpus: the card, one Parquet view, a report, a user's notes."""
    corpus = root / "corpus"
    (corpus / "views").mkdir(parents=True)
    (corpus / "README.md").write_text("---\nlicense: apache-2.0\n---\n# card\n", encoding="utf-8")
    pq.write_table(pa.table({"text": ["a", "b"]}), corpus / "views" / "sft-train.parquet")
    (corpus / "report.json").write_text("{}", encoding="utf-8")
    (corpus / "records.jsonl").write_text('{"x": 1}\n', encoding="utf-8")
    (corpus / "notes.txt").write_text("mine", encoding="utf-8")
    return corpus


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _publish(corpus: Path, out: Path | None) -> object:
    args = ["corpus", "publish", str(corpus), "--repo-id", "org/shop", "--prepare-only"]
    return CliRunner().invoke(app, [*args, *(["--out", str(out)] if out is not None else [])])


@pytest.mark.parametrize("where", ["corpus", "corpus_parent", "views", "foreign"])
def test_publish_refuses_a_destination_it_did_not_write_and_touches_nothing(tmp_path, where) -> None:
    corpus = _corpus(tmp_path / "work")
    foreign = tmp_path / "work" / "index"
    foreign.mkdir()
    (foreign / "manifest.json").write_text("{}", encoding="utf-8")
    (foreign / "docs.jsonl").write_text("{}\n", encoding="utf-8")
    out = {
        "corpus": corpus,
        "corpus_parent": corpus.parent,
        "views": corpus / "views",
        "foreign": foreign,
    }[where]
    before = _snapshot(tmp_path)
    result = _publish(corpus, out)
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: --out ") and str(out) in lines[0]
    assert "Traceback" not in result.output
    assert _snapshot(tmp_path) == before  # not one file lost or changed


def test_publish_refuses_a_symlinked_destination(tmp_path) -> None:
    corpus = _corpus(tmp_path)
    target = tmp_path / "elsewhere"
    target.mkdir()
    (target / "keep.txt").write_text("keep", encoding="utf-8")
    link = tmp_path / "link"
    link.symlink_to(target, target_is_directory=True)
    result = _publish(corpus, link)
    assert result.exit_code == 2 and "symbolic link" in result.stderr
    assert (target / "keep.txt").read_text() == "keep" and link.is_symlink()


def test_publish_restages_its_own_folder_and_keeps_anything_else_there(tmp_path) -> None:
    corpus = _corpus(tmp_path)
    first = _publish(corpus, None)
    assert first.exit_code == 0, first.output
    stage = corpus / "publish"
    assert (stage / "views" / "sft-train.parquet").is_file() and (stage / "report.json").is_file()
    (stage / "upload-notes.txt").write_text("mine", encoding="utf-8")
    (corpus / "report.json").unlink()  # gone from the corpus: gone from the next staging
    again = _publish(corpus, None)
    assert again.exit_code == 0, again.output
    assert not (stage / "report.json").exists()
    assert (stage / "upload-notes.txt").read_text() == "mine"
    assert (corpus / "notes.txt").read_text() == "mine" and (corpus / "records.jsonl").is_file()


def test_an_empty_or_new_destination_is_staged(tmp_path) -> None:
    corpus = _corpus(tmp_path)
    empty = tmp_path / "empty"
    empty.mkdir()
    assert _publish(corpus, empty).exit_code == 0
    assert (empty / "README.md").is_file()
    assert _publish(corpus, tmp_path / "new" / "stage").exit_code == 0


def test_a_folder_of_only_bookkeeping_names_that_no_run_wrote_is_not_cleared(tmp_path) -> None:
    corpus = _corpus(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    (other / "manifest.json").write_text('{"someone": "else"}', encoding="utf-8")
    result = _publish(corpus, other)
    assert result.exit_code == 2 and "not empty" in result.stderr
    assert (other / "manifest.json").read_text() == '{"someone": "else"}'
