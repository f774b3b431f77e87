"""The docstore packs each document as one zstd frame and reads any of them back exactly; indexes of the
previous format (deflate blocks) still open and answer the same; other formats are refused clearly."""

from __future__ import annotations

import hashlib
import json
import random
import threading
from pathlib import Path

import numpy as np
import orjson
import pytest
from docstore_v3 import index_docs, learn_zdict, write_v3_docstore

from shoparena.search import SearchIndex, build_index
from shoparena.search.docstore import DocstoreReader, DocstoreWriter, train_zstd_dict
from shoparena.search.index import IndexFormatError


def _docs(n: int) -> list[bytes]:
    rng = random.Random(n)
    words = ["shoe", "red", "Lazada", "official", "ñandú", "😀", '"quoted"', "back\\slash"]
    return [
        orjson.dumps(
            {
                "product_id": str(i),
                "title": " ".join(rng.choice(words) for _ in range(rng.randint(0, 40))),
                "price": float(i),
            }
        )
        for i in range(n)
    ]


@pytest.fixture(scope="module")
def shop_catalog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from shoparena.catalog.synth import SynthConfig, synthesize_catalog

    path = tmp_path_factory.mktemp("docstore") / "documents.jsonl"
    synthesize_catalog(SynthConfig(products=600, seed=4, workers=1), path, progress=False)
    return path


def _write(folder: Path, docs: list[bytes]) -> DocstoreReader:
    writer = DocstoreWriter(folder)
    for blob in docs:
        writer.add(blob)
    writer.close()
    offsets = np.frombuffer(writer.offsets, dtype=np.int64).astype(np.int32)
    assert len(offsets) == len(docs) + 1 and offsets[-1] == (folder / "products.zst").stat().st_size
    return DocstoreReader(folder, 4, offsets)


@pytest.mark.parametrize("n", [1, 9, 2500, 12_000])  # 12,000: past the dictionary's sample
def test_every_document_reads_back(tmp_path: Path, n: int) -> None:
    docs = _docs(n)
    reader = _write(tmp_path, docs)
    order = list(range(n))
    random.Random(1).shuffle(order)  # any document, in any order, without reading its neighbours first
    for i in order:
        assert reader.doc(i) == docs[i]


def test_readers_in_many_threads_each_get_their_documents(tmp_path: Path) -> None:
    docs = _docs(3000)
    reader = _write(tmp_path, docs)
    wrong: list[int] = []

    def read(seed: int) -> None:
        rng = random.Random(seed)
        for _ in range(2000):
            i = rng.randrange(len(docs))
            if reader.doc(i) != docs[i]:
                wrong.append(i)

    threads = [threading.Thread(target=read, args=(s,)) for s in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert wrong == []


def test_dictionary_is_trained_reproducibly_or_falls_back_to_raw_content() -> None:
    docs = _docs(3000)
    trained = train_zstd_dict(docs)
    assert trained[:4] == b"\x37\xa4\x30\xec"  # zstd's dictionary magic: a trained dictionary
    assert train_zstd_dict(docs) == trained  # fixed id: the same bytes every build
    few = _docs(3)
    assert train_zstd_dict(few) == b"\n".join(few)  # too few to train on: raw content
    assert train_zstd_dict([]) == b""


def test_format_3_index_opens_and_answers_like_format_4(tmp_path: Path, shop_catalog: Path) -> None:
    v4, v3 = tmp_path / "v4", tmp_path / "v3"
    build_index(shop_catalog, v4, progress=False)
    build_index(shop_catalog, v3, progress=False)
    docs = write_v3_docstore(v3)
    assert (v3 / "products.deflate").exists() and not (v3 / "products.zst").exists()
    new, old = SearchIndex.open(v4), SearchIndex.open(v3)
    assert index_docs(v3) == docs == index_docs(v4)
    for i in random.Random(2).sample(range(len(new)), 50):
        assert old.product_dict(i) == new.product_dict(i)
    titles = [str(new.product_dict(i)["title"]) for i in range(0, len(new), 60)]
    for query in titles:
        hits = new.find_product(" ".join(query.split()[:3]))
        assert hits and old.find_product(" ".join(query.split()[:3])) == hits


def test_unknown_format_is_refused_in_one_line(tmp_path: Path, shop_catalog: Path) -> None:
    build_index(shop_catalog, tmp_path / "index", progress=False)
    path = tmp_path / "index" / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    manifest["format_version"] = 2
    path.write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(IndexFormatError, match=r"format_version 2, this shoparena reads 3, 4 \(writes 4\); "
                       r"rebuild it with `shoparena catalog index`"):  # fmt: skip
        SearchIndex.open(tmp_path / "index")


def test_format_3_helper_writes_what_format_3_builds_wrote(tmp_path: Path) -> None:
    """The helper above is the old writer: on the pinned hostile catalog it reproduces commit d6d6f03's
    ``products.deflate`` and ``products.zdict`` byte for byte (tests/search/test_build_identical.py)."""
    from hostile_catalog import write_hostile_catalog
    from test_build_identical import GOLDEN_V3_DOCSTORE

    catalog = write_hostile_catalog(tmp_path / "documents.jsonl")
    build_index(catalog, tmp_path / "index", progress=False)
    write_v3_docstore(tmp_path / "index")
    for name, digest in GOLDEN_V3_DOCSTORE.items():
        assert hashlib.sha256((tmp_path / "index" / name).read_bytes()).hexdigest() == digest, name
    assert learn_zdict([]) == b""


def test_batched_writes_equal_one_frame_at_a_time(tmp_path: Path) -> None:
    # The writer compresses documents in batches once its dictionary exists (issue 35, second round): the
    # bytes and offsets must be those of compressing each document on its own, in order, as before.
    import zstandard

    from shoparena.search import docstore

    docs = _docs(docstore._DICT_SAMPLE_DOCS + 3 * docstore._BATCH_DOCS + 7)
    writer = DocstoreWriter(tmp_path)
    for blob in docs:
        writer.add(blob)
    writer.close()
    data = (tmp_path / "products.zstdict").read_bytes()
    compress = zstandard.ZstdCompressor(
        level=docstore._ZSTD_LEVEL,
        dict_data=docstore._zstd_dict(data),
        write_checksum=False,
        write_content_size=True,
        write_dict_id=False,
    ).compress
    frames = [compress(blob) for blob in docs]
    assert (tmp_path / "products.zst").read_bytes() == b"".join(frames)
    assert list(writer.offsets) == [0, *np.cumsum([len(f) for f in frames]).tolist()]
