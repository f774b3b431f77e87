"""Index format 3's docstore as shoparena wrote it before format 4 (deflate blocks), to test that such
indexes still open: ``write_v3_docstore`` rewrites a format-4 index directory as format 3."""

from __future__ import annotations

import json
import re
import zlib
from collections import Counter
from pathlib import Path

import numpy as np

from shoparena.search.docstore import DOCS_PER_BLOCK, DocstoreReader

_JSON_PIECE = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"\s*:|"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{},]')
_ZDICT_SAMPLE_DOCS = 2000
_ZDICT_BYTES = 32 * 1024


def learn_zdict(samples: list[bytes]) -> bytes:
    """Format 3's deflate dictionary: recurring JSON pieces, then the tail of every fifth sample."""
    half = _ZDICT_BYTES // 2
    counts = Counter(piece for blob in samples for piece in _JSON_PIECE.findall(blob))
    ranked = sorted(((n - 1) * len(p), n, p) for p, n in counts.items() if n > 2)
    chosen: list[tuple[int, bytes]] = []
    size = 0
    for _, n, piece in reversed(ranked):
        if size + len(piece) <= _ZDICT_BYTES:
            chosen.append((n, piece))
            size += len(piece)
    chosen.sort()
    frequent = b"".join(p for _, p in chosen)[-half:]
    return frequent + b"\n".join(samples[::5])[-(_ZDICT_BYTES - len(frequent)) :]


def pack_v3(docs: list[bytes]) -> tuple[bytes, bytes, np.ndarray]:
    """(``products.deflate``, ``products.zdict``, offsets) of format 3 for ``docs``."""
    zdict = learn_zdict(docs[:_ZDICT_SAMPLE_DOCS])
    primed = zlib.compressobj(3, zlib.DEFLATED, -15, zdict=zdict)
    packed, offsets = bytearray(), [0]
    packer = primed
    for i, blob in enumerate(docs):
        if i % DOCS_PER_BLOCK == 0:
            packer = primed.copy()
        packed += packer.compress(blob) + packer.flush(zlib.Z_SYNC_FLUSH)
        offsets.append(len(packed))
    return bytes(packed), zdict, np.asarray(offsets, dtype=np.int64)


def index_docs(index_dir: Path) -> list[bytes]:
    """Every document of an index directory, through the docstore reader of its format."""
    manifest = json.loads((index_dir / "manifest.json").read_text(encoding="utf-8"))
    offsets = np.load(index_dir / "offsets.npy")
    reader = DocstoreReader(index_dir, manifest["format_version"], offsets)
    return [reader.doc(i) for i in range(len(offsets) - 1)]


def write_v3_docstore(index_dir: Path) -> list[bytes]:
    """Rewrite a format-4 index directory as format 3 (in place); returns its documents."""
    docs = index_docs(index_dir)
    packed, zdict, offsets = pack_v3(docs)
    (index_dir / "products.deflate").write_bytes(packed)
    (index_dir / "products.zdict").write_bytes(zdict)
    narrow = offsets.astype(np.int32) if offsets[-1] < 2**31 else offsets
    np.save(index_dir / "offsets.npy", narrow)
    (index_dir / "products.zst").unlink()
    (index_dir / "products.zstdict").unlink()
    manifest_path = index_dir / "manifest.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    manifest["format_version"] = 3
    manifest_path.write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    return docs
