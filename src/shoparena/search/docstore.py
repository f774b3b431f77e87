"""The index's docstore: each product's JSON raw-deflated on its own against a shared dictionary.

Files: ``products.deflate`` (the packed documents back to back), ``offsets.npy`` (start of each, plus the
end; written by the index builder) and ``products.zdict`` (the preset dictionary). A document is read with
one slice and one small inflate (:func:`inflate`).
"""

from __future__ import annotations

import zlib
from array import array
from pathlib import Path
from typing import Any

#: Documents whose JSON seeds the docstore's deflate dictionary; zlib uses at most its last 32 KiB.
_ZDICT_SAMPLE_DOCS = 400
_ZDICT_BYTES = 32 * 1024


class DocstoreWriter:
    """Writes each document raw-deflated on its own with a dictionary learnt from the first documents.

    The dictionary is the tail of the first documents' JSON (deflate's preset dictionary is a window of
    earlier text), so a document shares its field names, categories and boilerplate with it.
    """

    def __init__(self, out: Path) -> None:
        self._out = out
        self._fh = open(out / "products.deflate", "wb")  # noqa: SIM115 - closed in close()
        self._pending: list[bytes] | None = []
        self._zdict = b""
        self._primed: Any = None
        self.offsets = array("q", [0])

    def add(self, blob: bytes) -> None:
        if self._pending is not None:
            self._pending.append(blob)
            if len(self._pending) >= _ZDICT_SAMPLE_DOCS:
                self._start()
            return
        self._write(blob)

    def _start(self) -> None:
        pending, self._pending = self._pending or [], None
        self._zdict = b"\n".join(pending)[-_ZDICT_BYTES:]
        (self._out / "products.zdict").write_bytes(self._zdict)
        # Copying a compressor primed with the dictionary is cheaper than priming one per document.
        # Level 4: half the CPU of level 6 for a docstore about 4 % larger.
        self._primed = zlib.compressobj(4, zlib.DEFLATED, -15, zdict=self._zdict)
        for blob in pending:
            self._write(blob)

    def _write(self, blob: bytes) -> None:
        packer = self._primed.copy()
        packed = packer.compress(blob) + packer.flush()
        self._fh.write(packed)
        self.offsets.append(self.offsets[-1] + len(packed))

    def close(self) -> None:
        if self._pending is not None:
            self._start()
        self._fh.close()


def inflate(packed: bytes, zdict: bytes) -> bytes:
    """One document's JSON from its packed bytes."""
    return zlib.decompressobj(-15, zdict=zdict).decompress(packed)


__all__ = ["DocstoreWriter", "inflate"]
