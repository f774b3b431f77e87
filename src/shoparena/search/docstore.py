"""The index's docstore: each product's JSON compressed on its own against a shared dictionary.

Index format 4 (written): ``products.zst`` holds one Zstandard frame per document (level 3, content size
in the frame, no checksum or dictionary id), back to back; ``offsets.npy`` the start of each, plus the end
(written by the index builder); ``products.zstdict`` the dictionary, trained by zstd on the first
:data:`_DICT_SAMPLE_DOCS` documents (a raw-content dictionary of them when too few to train on). A
document is read by decompressing its own frame (:meth:`DocstoreReader.doc`).

Index format 3 (read only): ``products.deflate`` raw-deflated in blocks of :data:`DOCS_PER_BLOCK`
documents against ``products.zdict``, each document ending with a sync flush.

Why the change (docs/benchmarks.md, "Index build vs Lucene"): deflate was 27 % of the build's CPU. On a
60k synthetic catalog, per document: deflate level 3 in blocks of 8 30 µs at 5.2x compression, zstd level
3 with a 112 KiB dictionary trained on 4,000 documents (0.3 s) 6-7 µs at 4.5x (the docstore 15 % larger),
and a read decompresses one frame instead of inflating up to 7 earlier documents of its block.
"""

from __future__ import annotations

import threading
import zlib
from array import array
from pathlib import Path
from typing import Any

import numpy as np
import zstandard

#: Documents per deflate stream in format 3 (the reader finds block starts with it).
DOCS_PER_BLOCK = 8
#: Format 4: documents the zstd dictionary is trained on, its size (zstd's default) and level.
_DICT_SAMPLE_DOCS = 4_000
_DICT_BYTES = 112_640
_ZSTD_LEVEL = 3
#: Documents compressed together (one after the other, each its own frame) once the dictionary exists.
_BATCH_DOCS = 512
#: A fixed dictionary id: zstd draws a random one otherwise, and the index must be byte-reproducible.
_DICT_ID = 0x5A0A
#: Format 3 files and the format 4 files, by index format version.
DOCSTORE_FILES: dict[int, tuple[str, str]] = {
    3: ("products.deflate", "products.zdict"),
    4: ("products.zst", "products.zstdict"),
}


def train_zstd_dict(samples: list[bytes]) -> bytes:
    """A zstd dictionary for documents like ``samples``: trained (fixed id, so reproducible), or, when
    the samples are too few or too small for zstd's trainer, their last 112 KiB as raw content."""
    if not samples:
        return b""
    try:
        trained = zstandard.train_dictionary(_DICT_BYTES, samples, dict_id=_DICT_ID, level=_ZSTD_LEVEL)
        return trained.as_bytes()
    except zstandard.ZstdError:
        return b"\n".join(samples)[-_DICT_BYTES:]


def _zstd_dict(data: bytes) -> zstandard.ZstdCompressionDict:
    # AUTO: a trained dictionary starts with zstd's magic number, raw content (JSON text) never does.
    return zstandard.ZstdCompressionDict(data, dict_type=zstandard.DICT_TYPE_AUTO)


class DocstoreWriter:
    """Writes format 4: one zstd frame per document against a dictionary trained on the first ones.

    The first :data:`_DICT_SAMPLE_DOCS` documents wait in memory until the dictionary is trained.
    """

    def __init__(self, out: Path) -> None:
        self._out = out
        self._fh = open(out / DOCSTORE_FILES[4][0], "wb")  # noqa: SIM115 - closed in close()
        self._pending: list[bytes] | None = []
        self._compress: Any = None
        self._batch: list[bytes] = []
        self.offsets = array("q", [0])

    def add(self, blob: bytes) -> None:
        if self._pending is not None:
            self._pending.append(blob)
            if len(self._pending) >= _DICT_SAMPLE_DOCS:
                self._start()
            return
        batch = self._batch
        batch.append(blob)
        if len(batch) >= _BATCH_DOCS:
            self._write(batch)
            batch.clear()

    def _start(self) -> None:
        pending, self._pending = self._pending or [], None
        data = train_zstd_dict(pending)
        (self._out / DOCSTORE_FILES[4][1]).write_bytes(data)
        compressor = zstandard.ZstdCompressor(
            level=_ZSTD_LEVEL,
            dict_data=_zstd_dict(data) if data else None,
            write_checksum=False,
            write_content_size=True,
            write_dict_id=False,
        )
        self._compress = compressor.compress
        self._write(pending)

    def _write(self, blobs: list[bytes]) -> None:
        """Compress documents in a tight loop (the compressor's tables stay in the CPU caches)."""
        packed = list(map(self._compress, blobs))
        offsets = self.offsets
        end = offsets[-1]
        for size in map(len, packed):
            end += size
            offsets.append(end)
        self._fh.write(b"".join(packed))

    def close(self) -> None:
        if self._pending is not None:
            self._start()
        if self._batch:
            self._write(self._batch)
            self._batch.clear()
        self._fh.close()


def read_doc(packed: np.ndarray, offsets: np.ndarray, zdict: bytes, i: int) -> bytes:
    """Format 3: document ``i``'s JSON from the memory-mapped ``products.deflate`` and its offsets."""
    first, start, end = int(offsets[i - i % DOCS_PER_BLOCK]), int(offsets[i]), int(offsets[i + 1])
    inflater = zlib.decompressobj(-15, zdict=zdict)
    if start > first:
        inflater.decompress(packed[first:start])  # the block's earlier documents
    return inflater.decompress(packed[start:end])


class DocstoreReader:
    """Documents of an index directory's docstore, format 3 or 4; safe to share between threads."""

    def __init__(self, index_dir: Path, format_version: int, offsets: np.ndarray) -> None:
        packed_name, dict_name = DOCSTORE_FILES[format_version]
        self.format_version = format_version
        self._offsets = offsets
        packed = index_dir / packed_name
        self._packed = (
            np.memmap(packed, dtype=np.uint8, mode="r").view(np.ndarray)
            if offsets[-1]
            else np.zeros(0, np.uint8)
        )
        self._dict = (index_dir / dict_name).read_bytes()
        self._local = threading.local()

    @staticmethod
    def packed_name(format_version: int) -> str:
        """The file holding the documents of an index of ``format_version``."""
        return DOCSTORE_FILES[format_version][0]

    @property
    def packed(self) -> np.ndarray:
        """The documents' bytes (memory-mapped)."""
        return self._packed

    def _decompressor(self) -> Any:
        # A ZstdDecompressor may not be used by two threads at once: one per thread.
        found = getattr(self._local, "zstd", None)
        if found is None:
            found = self._local.zstd = zstandard.ZstdDecompressor(
                dict_data=_zstd_dict(self._dict) if self._dict else None
            )
        return found

    def doc(self, i: int) -> bytes:
        """Document ``i``'s JSON."""
        if self.format_version == 3:
            return read_doc(self._packed, self._offsets, self._dict, i)
        start, end = int(self._offsets[i]), int(self._offsets[i + 1])
        return self._decompressor().decompress(self._packed[start:end])


__all__ = [
    "DOCSTORE_FILES",
    "DOCS_PER_BLOCK",
    "DocstoreReader",
    "DocstoreWriter",
    "read_doc",
    "train_zstd_dict",
]
