"""The docstore packs documents in deflate blocks and reads each one back exactly."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import orjson
import pytest

from shoparena.search.docstore import DOCS_PER_BLOCK, DocstoreWriter, learn_zdict, read_doc


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


@pytest.mark.parametrize("n", [1, DOCS_PER_BLOCK, DOCS_PER_BLOCK + 1, 2500])
def test_every_document_reads_back(tmp_path: Path, n: int) -> None:
    docs = _docs(n)
    writer = DocstoreWriter(tmp_path)
    for blob in docs:
        writer.add(blob)
    writer.close()
    packed = np.fromfile(tmp_path / "products.deflate", dtype=np.uint8)
    offsets = np.frombuffer(writer.offsets, dtype=np.int64).astype(np.int32)
    zdict = (tmp_path / "products.zdict").read_bytes()
    assert len(offsets) == n + 1 and offsets[-1] == len(packed)
    order = list(range(n))
    random.Random(1).shuffle(order)  # any document, in any order, without reading its neighbours first
    for i in order:
        assert read_doc(packed, offsets, zdict, i) == docs[i]


def test_learnt_dictionary_is_bounded_and_holds_recurring_pieces() -> None:
    docs = _docs(3000)
    zdict = learn_zdict(docs[:2000])
    assert 0 < len(zdict) <= 32 * 1024
    assert b'"product_id":' in zdict and b'"title":' in zdict
    assert learn_zdict([]) == b""
