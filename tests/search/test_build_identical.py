"""The index build's fast paths change nothing: every file is byte-identical to the reference build's.

The reference is twofold: the sha256 of every file the build wrote before the fast paths existed (commit
d6d6f03, recorded below), and a build in this process with the fast paths switched off (the pydantic
``IndexLine`` for every line, the Unicode tokenizer for every non-ASCII text). The catalog mixes the
Lucene-parity catalog (a third of it non-ASCII) with hostile lines: HTML entities, upper-case SKU and
attribute text, junk brands, numbers as strings, booleans, duplicates, broken JSON, bad UTF-8, emoji, CJK,
Unicode spaces, so that both the fast path and every fallback to the pydantic model are taken.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from docstore_v3 import index_docs
from hostile_catalog import write_hostile_catalog

from shoparena.catalog import io as catalog_io
from shoparena.catalog.io import IndexedLine, parse_index_line
from shoparena.catalog.synth import SynthConfig, synthesize_catalog
from shoparena.search import build_index
from shoparena.search import index as index_mod
from shoparena.search.analysis import _finish, _unicode_tokens, raw_tokens

#: sha256 of each file of the index of lucene_parity_catalog.jsonl + HOSTILE, built by commit d6d6f03, but
#: for the docstore's files: index format 4 (issue 35) packs documents with zstd (``products.zst``,
#: ``products.zstdict``, and so other ``offsets.npy``), recorded when it was introduced; the documents
#: they hold are d6d6f03's (``DOCS_SHA256``, and format 3's files in ``GOLDEN_V3_DOCSTORE``).
GOLDEN: dict[str, str] = {
    "data.csc.index.npy": "8ebe4c3208472864c51a21f5cbf8b8eb234935bc449a7a59458dffadd237a8f9",
    "id_rank.npy": "325d9231fe8e9b7a7debcb5d8272ef03ab6f9a46a1a6725290210d5945ef376d",
    "ids_perm.npy": "75d277d21b2bf360b2dfc72ed817405b10c8069e4f5f6c132c0ed4c7adc565ee",
    "ids_sorted.npy": "30221ac2e27fb44a435fe99eacf1cbfd1e8b55a16c7e1821815831fc25ec31f1",
    "indices.csc.index.npy": "a8a1938f0e01b72bacf975dfa8a8b6285b6bd88e160e9b9f2c12d4069655e42a",
    "indptr.csc.index.npy": "b244451c9b7115706a876865bb9c4e4cf47fd3a0a5644b9e8faba6e5cb14c951",
    "norms.npy": "907ef84fee77ea1c907e8c76450de0dec52ae844908369e2d3e14911c2e555a0",
    "offsets.npy": "707c5c5ab3d8596e49e5f563853ad9cbfbb8f1e6161c24f7e8a59202043babf3",
    "params.index.json": "0fd7537db39be4d090ff73f624341ac8ade285c334780ae1c597240ad3ecee34",
    "price.npy": "6b2fba051ff5373e62a735f4201eddf1e6a2cf625bd25f6beb3133d677360174",
    "products.zst": "1116b2767272ee665a4af3b31560da891f7d1e9dbf6ea6b4ac63299005ec9022",
    "products.zstdict": "5235157bda39670a737b76d36996d567999d41521fcd42ee7fa0ceb3304bc868",
    "quarantine.jsonl": "a3717aff5eabf5acc4805cdc21f4997864be465cd1d646b8b0c79b8d3d373d1f",
    "service.npy": "485c8312a06f63c3c0337135d82770832ca959d001009971942a806bfec92b00",
    "shop.npy": "eac831181f33561bbe1ae1acaf2c33a55a58dda6fa6a0bd7eb3ad046ef5327a0",
    "shops.json": "31d273a573b78e813d1d61dccb09594a35d626d9f11d36e57c94849f2ecc15f2",
    "sold_count.npy": "3c9f5c32b6208dd041f5ee528f684c8a81e9647dbbdfe5aae46a50bf8fde0762",
    "term_max.npy": "45eacb185fa7740f52e9f45221195a288c3383537a148235f041361b5c11c883",
    "terms.bin": "1fb34a6d8b493cee6e24fd270b118953319c026bfd4afa866f0e8b7dd4feb834",
    "terms_off.npy": "b7231d372f2547fa03ec3711791b5ba22aef8bbcf52faf8ed14a49a1fcf1ee56",
    "tf.csc.index.npy": "40b52e6e665c217606e053f5db7632240639e1c08f2898ab884076cddc4ba1c7",
    "vocab.index.json": "5b3100cc3fa9e21a121d08b3b1ff6b25b431cac4874fe6c6fefd3497dfa95bb1",
}

#: d6d6f03's docstore files (format 3), which tests/search/docstore_v3.py reproduces from the documents.
GOLDEN_V3_DOCSTORE: dict[str, str] = {
    "offsets.npy": "f4544cac93668902ef7d2af84e989e98f8ae946d634bfcf87aa2cdf6ee3e7ae9",
    "products.deflate": "8a68bb84e18094dec4535b60623943f1785c14faf238e7eaeec83f88e2cf82a5",
    "products.zdict": "3637b01b6e26cfc4f23d9132d69e503aaa078a04739524c7e81398264b516a22",
}
#: sha256 of the 252 documents' JSON joined by newlines, as d6d6f03's docstore held them.
DOCS_SHA256 = "a32b2149677146d4f83642e56bfd066a2a12e1e16e90f69713928a3fa3915fc7"


def _hashes(index_dir: Path) -> dict[str, str]:
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(index_dir.iterdir())
        if p.is_file() and p.name != "manifest.json"  # holds paths and timings
    }


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_hostile_catalog(tmp_path_factory.mktemp("identical") / "documents.jsonl")


def test_index_files_equal_the_recorded_build(catalog: Path, tmp_path: Path) -> None:
    stats = build_index(catalog, tmp_path / "index", progress=False)
    assert stats.docs == 252 and stats.quarantined == 20  # both paths were taken
    assert _hashes(tmp_path / "index") == GOLDEN
    assert hashlib.sha256(b"\n".join(index_docs(tmp_path / "index"))).hexdigest() == DOCS_SHA256


def _reference_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    """Switch the fast paths off: ``IndexLine`` for every line, the Unicode rules for every non-ASCII text."""

    def parse(raw: bytes) -> IndexedLine:
        line = parse_index_line(raw)
        return IndexedLine(line, line.product.model_dump_json().encode())

    def tokens(text: str) -> list[str]:
        return raw_tokens(text) if text.isascii() else _finish(_unicode_tokens(text), text)

    monkeypatch.setattr(catalog_io, "parse_index_line_fast", parse)
    monkeypatch.setattr(index_mod, "raw_tokens", tokens)


def test_fast_and_reference_paths_build_the_same_files(
    catalog: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synth = tmp_path / "synth.jsonl"
    synthesize_catalog(SynthConfig(products=400, seed=3), synth, progress=False)
    fast = [_hashes_of_build(c, tmp_path / f"fast{i}") for i, c in enumerate((catalog, synth))]
    _reference_paths(monkeypatch)
    reference = [_hashes_of_build(c, tmp_path / f"ref{i}") for i, c in enumerate((catalog, synth))]
    assert fast == reference
    assert fast[0] == GOLDEN


def _hashes_of_build(catalog: Path, out: Path) -> dict[str, str]:
    build_index(catalog, out, progress=False)
    return _hashes(out)
