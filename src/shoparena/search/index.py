"""Build an on-disk BM25 index of a catalog (streaming; bounded memory).

The directory holds:

* bm25s's saved-index layout, so ``bm25s.BM25.load(dir, mmap=True)`` works: ``data.csc.index.npy``
  (float32 per-posting Lucene BM25 scores at boost 1), ``indices.csc.index.npy`` (int32 document indices),
  ``indptr.csc.index.npy`` (int64 column starts), ``vocab.index.json`` and ``params.index.json``.
  Term ids are the ranks of the terms in sorted (code point) order.
* ``terms.bin`` + ``terms_off.npy``: the sorted terms as one UTF-8 blob, for lookups without a dict;
  ``term_max.npy``: each term's highest posting score (lets queries skip hopeless documents).
* the docstore (:mod:`shoparena.search.docstore`): each product's JSON (upstream key order) as one zstd
  frame against the shared trained dictionary ``products.zstdict`` (about 4.5x smaller than plain JSON),
  in ``products.zst``, with ``offsets.npy`` (start of each document, plus the end). Format 3 indexes (the
  deflate docstore, ``products.deflate`` + ``products.zdict``) still open.
* column arrays ``price.npy`` (float64), ``shop.npy`` (int32 codes into ``shops.json``), ``service.npy``
  (uint8 bitmask, bit i = ``SERVICES[i]``), ``sold_count.npy``. Integer files (``sold_count``, ``offsets``,
  ``ids_perm``, ``terms_off``) are int32 when their values fit, else int64.
* ``tf.csc.index.npy`` (term frequency per posting, uint8 unless a frequency needs more) and ``norms.npy``
  (Lucene's one-byte length norm per document): with them the engine scores repeated query terms
  (boost > 1) with Lucene's arithmetic.
* ``ids_sorted.npy`` (byte strings), ``ids_perm.npy`` (document index of each sorted id) and
  ``id_rank.npy`` (each document's position in id order: the tie-break order of equal scores).
* ``quarantine.jsonl`` (bad and duplicate lines) and ``manifest.json``.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from array import array
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import orjson
from pydantic import BaseModel, ConfigDict, Field

from shoparena.catalog.io import LoadSummary, QuarantinedLine, dump_index_line, iter_index_lines
from shoparena.jsonl import LineWriter, fewer_gc_passes, sha256_file
from shoparena.records.catalog import SERVICES
from shoparena.runs.manifest import (
    FileRef,
    ManifestError,
    RunManifest,
    manifest_path,
    read_manifest,
    write_manifest,
)
from shoparena.runs.stale import pid_alive
from shoparena.search.analysis import LUCENE_ENGLISH_STOP_WORDS, LuceneEnglishAnalyzer, raw_tokens
from shoparena.search.bm25 import encode_norm, lucene_avgdl, lucene_idf, norm_inverse_table, term_scores
from shoparena.search.docstore import DocstoreWriter

#: The format this version writes (4: the zstd docstore) and the formats it opens (3: the deflate docstore;
#: every other file is the same in both).
FORMAT_VERSION = 4
#: The index directory's own quarantine: catalogue lines that could not be indexed, with the reason (the
#: corpus directory's ``quarantine.jsonl`` is another layout's, ``corpus.layout``).
INDEX_QUARANTINE_NAME = "quarantine.jsonl"
READABLE_FORMAT_VERSIONS = (3, 4)
CHUNK_DOCS = 50_000
SERVICE_BITS: dict[str, int] = {name: 1 << i for i, name in enumerate(SERVICES)}
_STOP = -1  # term id of stop words while streaming


class IndexStats(BaseModel):
    """What one build did; also stored in ``manifest.json``."""

    model_config = ConfigDict(extra="forbid")

    catalog: str
    out_dir: str
    read: int = Field(description="Non-blank catalog lines read.")
    docs: int = Field(description="Documents indexed (kept lines minus duplicates).")
    quarantined: int = Field(description="Invalid lines plus duplicate product ids.")
    duplicates: int
    reasons: dict[str, int]
    docs_with_terms: int = Field(description="Lucene's docCount: documents with at least one term (N).")
    terms: int
    postings: int
    total_tokens: int
    avgdl: float
    k1: float
    b: float
    build_seconds: float
    index_bytes: int


class IndexParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    k1: float
    b: float
    idf: str = "lucene"
    norms: str = "lucene-smallfloat-byte4"


class CatalogRef(FileRef):
    """The indexed catalog (absolute path), with its size in bytes."""

    size: int


class IndexManifest(RunManifest):
    """``manifest.json`` of an index directory."""

    kind: str = "index"
    format: str = "shoparena-bm25"
    format_version: int = FORMAT_VERSION
    bm25s_version: str
    analyzer: str
    params: IndexParams
    services: list[str]
    catalog: CatalogRef
    stats: IndexStats | None = None


class _Columns:
    """Per-document values appended while streaming (compact typed arrays, not Python objects)."""

    def __init__(self) -> None:
        self.price = array("d")
        self.sold = array("q")
        self.service = array("B")
        self.shop = array("i")
        self.shop_codes: dict[str, int] = {}
        self.ids: list[bytes] = []


def _narrow(values: np.ndarray) -> np.ndarray:
    """The same integers as int32 when they fit (half the bytes on disk), else unchanged."""
    if not len(values) or (int(values.min()) > -(2**31) and int(values.max()) < 2**31):
        return values.astype(np.int32)
    return values


def _dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.iterdir() if p.is_file())


class _ProgressSink:
    """Rich progress (count of documents) when asked for; a no-op otherwise."""

    def __init__(self, enabled: bool | Callable[[int], None]) -> None:
        self._callback = enabled if callable(enabled) else None
        self._progress: Any = None
        if enabled is True:
            from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

            self._progress = Progress(
                SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(), transient=True
            )
            self._progress.start()
            self._task = self._progress.add_task("indexing", total=None)

    def update(self, docs: int, stage: str = "indexing") -> None:
        if self._callback is not None:
            self._callback(docs)
        if self._progress is not None:
            self._progress.update(self._task, description=f"{stage}: {docs:,} products")

    def close(self) -> None:
        if self._progress is not None:
            self._progress.stop()


class _ChunkSpool:
    """Postings of finished chunks, spooled to ``.npy`` files so memory stays bounded."""

    def __init__(self, tmp_dir: Path) -> None:
        self.tmp_dir = tmp_dir
        self.files: list[tuple[Path, Path, Path]] = []

    def add(self, docs: np.ndarray, terms: np.ndarray, tf: np.ndarray) -> None:
        i = len(self.files)
        paths = tuple(self.tmp_dir / f"chunk{i:05d}.{name}.npy" for name in ("docs", "terms", "tf"))
        for path, arr in zip(paths, (docs, terms, tf), strict=True):
            np.save(path, arr)
        self.files.append(paths)  # type: ignore[arg-type]

    def __iter__(self):
        for paths in self.files:
            yield tuple(np.load(p) for p in paths)


def _flush_chunk(
    chunk_ids: array, chunk_counts: array, first_doc: int, spool: _ChunkSpool, doc_len: array
) -> None:
    """Turn one chunk's token ids into sorted (doc, term, tf) postings and record document lengths."""
    n_docs = len(chunk_counts)
    ids = np.frombuffer(chunk_ids, dtype=np.int32)
    counts = np.frombuffer(chunk_counts, dtype=np.int32)
    local_doc = np.repeat(np.arange(n_docs, dtype=np.int64), counts)
    keep = ids != _STOP
    ids, local_doc = ids[keep], local_doc[keep]
    doc_len.extend(np.bincount(local_doc, minlength=n_docs).astype(np.int32).tolist())
    keys = (local_doc << 32) | ids.astype(np.int64)
    uniq, tf = np.unique(keys, return_counts=True)
    docs = (uniq >> 32).astype(np.int32) + np.int32(first_doc)
    terms = (uniq & 0xFFFFFFFF).astype(np.int32)
    spool.add(docs, terms, tf.astype(np.int32))


class IndexFormatError(ManifestError):
    """An index written by another format version (or without build stats): it must be rebuilt."""


class IndexBuildError(ValueError):
    """An index build refused before it started (it would destroy its input or a foreign directory)."""


def _side_dirs(out: Path, kind: str) -> list[tuple[Path, int]]:
    """``.<name>.<kind>-<pid>`` siblings of ``out`` with their pid."""
    found = []
    for path in out.parent.glob(f".{out.name}.{kind}-*"):
        pid = path.name.rsplit("-", 1)[-1]
        if pid.isdigit():
            found.append((path, int(pid)))
    return found


def clean_stale_builds(out: Path) -> list[Path]:
    """Remove what killed builds of ``out`` left behind; restore an index a crash left mid-swap.

    Returns:
        The removed directories.
    """
    removed = []
    if not out.exists():
        # A crash between the two renames of the swap: the previous index is still complete.
        for old, pid in _side_dirs(out, "old"):
            if not pid_alive(pid) and manifest_path(old).exists():
                old.rename(out)
                break
    for kind in ("build", "old"):
        for path, pid in _side_dirs(out, kind):
            if pid != os.getpid() and not pid_alive(pid):
                shutil.rmtree(path, ignore_errors=True)
                removed.append(path)
    shutil.rmtree(out / "_build_tmp", ignore_errors=True)  # left by builds before the atomic swap
    return removed


def _check_paths(catalog_path: Path, out: Path) -> None:
    catalog = catalog_path.resolve()
    target = out.resolve()
    if target == catalog or target in catalog.parents:
        raise IndexBuildError(
            f"the catalog {catalog_path} lies inside the index directory {out}, which a build replaces; "
            "choose another --out"
        )
    if out.exists() and not out.is_dir():
        raise IndexBuildError(f"{out} exists and is not a directory")
    if out.is_dir() and any(out.iterdir()) and not manifest_path(out).exists():
        raise IndexBuildError(
            f"{out} is a non-empty directory that is not an index (no manifest.json); refusing to replace it"
        )


def _swap_in(built: Path, out: Path) -> None:
    """Make ``built`` the index at ``out``; the previous index stays complete until the last rename."""
    if not out.exists():
        built.rename(out)
        return
    old = out.parent / f".{out.name}.old-{os.getpid()}"
    out.rename(old)
    built.rename(out)
    shutil.rmtree(old, ignore_errors=True)


def build_index(
    catalog_path: str | Path,
    out_dir: str | Path,
    *,
    k1: float = 0.9,
    b: float = 0.4,
    progress: bool | Callable[[int], None] = True,
) -> IndexStats:
    """Index a catalog for BM25 search, streaming it once.

    The index is built in a hidden sibling directory (``.<name>.build-<pid>``) and swapped in only when
    complete, so a failed or killed rebuild leaves the previous index working; what killed builds left
    behind is removed at the next build.

    Args:
        catalog_path: ``documents.jsonl`` or ``.jsonl.gz`` in the upstream index-line format.
        out_dir: Index directory (created, or an existing index replaced as a whole).
        k1: BM25 k1 (Pyserini default 0.9).
        b: BM25 b (Pyserini default 0.4).
        progress: ``True`` for a Rich progress display, a callable for a callback with the document
            count, ``False`` for silence.

    Returns:
        Counts and timings of the build (also written to ``manifest.json``).

    Raises:
        IndexBuildError: the catalog lies inside ``out_dir``, or ``out_dir`` holds something else.
    """
    catalog_path = Path(catalog_path)
    out = Path(out_dir)
    out.parent.mkdir(parents=True, exist_ok=True)
    clean_stale_builds(out)
    _check_paths(catalog_path, out)
    build = out.parent / f".{out.name}.build-{os.getpid()}"
    shutil.rmtree(build, ignore_errors=True)
    build.mkdir()
    try:
        stats = _build_into(catalog_path, build, out, k1=k1, b=b, progress=progress)
        _swap_in(build, out)
    except BaseException:
        shutil.rmtree(build, ignore_errors=True)
        raise
    return stats


def _build_into(
    catalog_path: Path,
    out: Path,
    final_out: Path,
    *,
    k1: float,
    b: float,
    progress: bool | Callable[[int], None],
) -> IndexStats:
    started = time.perf_counter()
    tmp_dir = out / "_build_tmp"
    tmp_dir.mkdir()
    sink = _ProgressSink(progress)
    with fewer_gc_passes():
        streamed = _stream_catalog(catalog_path, out, tmp_dir, sink)
    stem_ids, doc_len, spool, n_docs = streamed.stem_ids, streamed.doc_len, streamed.spool, streamed.n_docs
    sink.update(n_docs, "scoring")

    # --- global statistics -------------------------------------------------------------------------
    vocab_size = len(stem_ids)
    lengths = np.frombuffer(doc_len, dtype=np.int32).astype(np.int64)
    docs_with_terms = int(np.count_nonzero(lengths))
    total_tokens = int(lengths.sum())
    avgdl = total_tokens / docs_with_terms if docs_with_terms else 0.0
    df = np.zeros(vocab_size, dtype=np.int64)
    max_tf = 0
    for _docs, terms, tf in spool:
        df += np.bincount(terms, minlength=vocab_size)
        max_tf = max(max_tf, int(tf.max(initial=0)))
    n_postings = int(df.sum())
    idf = lucene_idf(df, docs_with_terms)
    norms = encode_norm(lengths)
    norm_inv = norm_inverse_table(lucene_avgdl(total_tokens, docs_with_terms), k1, b)
    tf_dtype = np.uint8 if max_tf <= 0xFF else np.uint16 if max_tf <= 0xFFFF else np.uint32

    # Final term ids are sorted-term ranks, so the CSC columns and terms.bin share one order.
    terms_sorted = sorted(stem_ids)
    remap = np.empty(vocab_size, dtype=np.int32)
    remap[np.fromiter((stem_ids[t] for t in terms_sorted), dtype=np.int64, count=vocab_size)] = np.arange(
        vocab_size, dtype=np.int32
    )
    df_sorted = np.empty_like(df)
    df_sorted[remap] = df
    idf_sorted = np.empty_like(idf)
    idf_sorted[remap] = idf
    indptr = np.zeros(vocab_size + 1, dtype=np.int64)
    np.cumsum(df_sorted, out=indptr[1:])

    # --- CSC matrix: each chunk's postings are scattered to their final place -----------------------
    term_max = _write_csc(out, spool, remap, norm_inv[norms], idf_sorted, indptr, tf_dtype)
    np.save(out / "indptr.csc.index.npy", indptr)
    np.save(out / "term_max.npy", term_max)
    shutil.rmtree(tmp_dir, ignore_errors=True)

    # --- vocabulary, bm25s params, docstore offsets, columns, id lookup ----------------------------
    _write_lookups(out, terms_sorted, k1=k1, b=b, n_docs=n_docs, offsets=streamed.offsets, cols=streamed.cols)
    np.save(out / "norms.npy", norms)
    del terms_sorted, stem_ids
    stats = IndexStats(
        catalog=str(catalog_path),
        out_dir=str(final_out),
        read=streamed.summary.read,
        docs=n_docs,
        quarantined=streamed.summary.quarantined + streamed.duplicates,
        duplicates=streamed.duplicates,
        reasons={
            **streamed.summary.reasons,
            **({"duplicate product_id": streamed.duplicates} if streamed.duplicates else {}),
        },
        docs_with_terms=docs_with_terms,
        terms=vocab_size,
        postings=n_postings,
        total_tokens=total_tokens,
        avgdl=avgdl,
        k1=k1,
        b=b,
        build_seconds=0.0,
        index_bytes=0,
    )
    _write_index_manifest(out, catalog_path, stats, k1=k1, b=b, started=started)
    sink.close()
    return stats


@dataclass(slots=True)
class _Streamed:
    """What the one pass over the catalogue leaves: term ids by stem, columns, lengths, spooled chunks."""

    stem_ids: dict[str, int]
    cols: _Columns
    doc_len: array
    spool: _ChunkSpool
    summary: LoadSummary
    duplicates: int
    n_docs: int
    offsets: Any


class _TokenIds(dict[str, int]):
    """Raw token -> provisional term id (``_STOP`` for stop words), stemming each token the first time.

    Looked up with ``map(ids.__getitem__, tokens)``: the known tokens of a document cost no Python code.
    """

    def __init__(self, stem_ids: dict[str, int], analyzer: LuceneEnglishAnalyzer) -> None:
        super().__init__()
        self.stem_ids = stem_ids
        self.stem_words = analyzer.stem_words

    def __missing__(self, token: str) -> int:
        if token in LUCENE_ENGLISH_STOP_WORDS:
            tid = _STOP
        else:
            stem = self.stem_words([token])[0]
            tid = self.stem_ids.setdefault(stem, len(self.stem_ids))
        self[token] = tid
        return tid


def _stream_catalog(catalog_path: Path, out: Path, tmp_dir: Path, sink: _ProgressSink) -> _Streamed:
    """One pass over the catalogue: tokens to provisional term ids (spooled in chunks of documents), the
    docstore, the columns; bad and duplicate lines go to the quarantine."""
    analyzer = LuceneEnglishAnalyzer()
    stem_ids: dict[str, int] = {}  # stem -> provisional term id
    token_ids = _TokenIds(stem_ids, analyzer)
    term_id = token_ids.__getitem__
    cols = _Columns()
    price, sold, service, shop, shop_codes = cols.price, cols.sold, cols.service, cols.shop, cols.shop_codes
    doc_ids = cols.ids
    doc_len = array("i")
    spool = _ChunkSpool(tmp_dir)
    summary = LoadSummary(path=str(catalog_path))
    seen: dict[str, int] = {}
    duplicates = 0
    chunk_ids = array("i")
    chunk_counts = array("i")
    chunk_first = 0

    qfh = LineWriter(out / INDEX_QUARANTINE_NAME)  # closed in finally
    docstore = DocstoreWriter(out)
    try:

        def quarantine(item: QuarantinedLine) -> None:
            qfh.write(item.to_json())

        for line, blob in iter_index_lines(catalog_path, summary=summary, quarantine=quarantine):
            product = line.product
            pid = product.product_id
            first = seen.get(pid)
            if first is not None:
                # Upstream de-duplicates by docid: the first occurrence wins.
                duplicates += 1
                raw = dump_index_line(line).decode()
                quarantine(
                    QuarantinedLine(summary.line_no, f"duplicate product_id: first at line {first}", raw)
                )
                continue
            seen[pid] = summary.line_no

            tokens = raw_tokens(line.contents)
            chunk_ids.fromlist(list(map(term_id, tokens)))
            chunk_counts.append(len(tokens))

            docstore.add(blob)
            price.append(product.price)
            sold.append(product.sold_count)
            mask = 0
            for name in product.service:
                mask |= SERVICE_BITS[name]
            service.append(mask)
            shop.append(shop_codes.setdefault(product.shop_id, len(shop_codes)))
            doc_ids.append(pid.encode())

            if len(chunk_counts) >= CHUNK_DOCS:
                _flush_chunk(chunk_ids, chunk_counts, chunk_first, spool, doc_len)
                chunk_first += len(chunk_counts)
                chunk_ids, chunk_counts = array("i"), array("i")
                sink.update(chunk_first)
                if len(token_ids) > 4_000_000:
                    # Bound memory on catalogs full of one-off tokens.
                    token_ids = _TokenIds(stem_ids, analyzer)
                    term_id = token_ids.__getitem__
        if chunk_counts:
            _flush_chunk(chunk_ids, chunk_counts, chunk_first, spool, doc_len)
            chunk_first += len(chunk_counts)
    finally:
        qfh.close()
        docstore.close()

    return _Streamed(
        stem_ids=stem_ids,
        cols=cols,
        doc_len=doc_len,
        spool=spool,
        summary=summary,
        duplicates=duplicates,
        n_docs=chunk_first,
        offsets=docstore.offsets,
    )


def _write_csc(
    out: Path,
    spool: _ChunkSpool,
    remap: np.ndarray,
    doc_norm_inv: np.ndarray,
    idf_sorted: np.ndarray,
    indptr: np.ndarray,
    tf_dtype: Any,
) -> np.ndarray:
    """The CSC matrix (Lucene scores, doc indices, term frequencies), each chunk's postings scattered to
    their final place; returns each term's highest score (query-time pruning)."""
    vocab_size = len(remap)
    n_postings = int(indptr[-1])
    data = np.lib.format.open_memmap(
        out / "data.csc.index.npy", mode="w+", dtype=np.float32, shape=(n_postings,)
    )
    indices = np.lib.format.open_memmap(
        out / "indices.csc.index.npy", mode="w+", dtype=np.int32, shape=(n_postings,)
    )
    tf_out = np.lib.format.open_memmap(
        out / "tf.csc.index.npy", mode="w+", dtype=tf_dtype, shape=(n_postings,)
    )
    cursor = indptr[:-1].copy()  # next free slot of each term
    term_max = np.zeros(vocab_size, dtype=np.float32)  # per-term best score, for query-time pruning
    for docs, terms, tf in spool:
        t_new = remap[terms]
        # Lucene's score of the term at boost 1 (the boost of a query term that occurs once).
        scores = term_scores(tf, doc_norm_inv[docs], idf_sorted[t_new])
        order = np.argsort(t_new, kind="stable")  # docs ascend within each term (chunks are doc-sorted)
        t_ord = t_new[order]
        counts = np.bincount(t_ord, minlength=vocab_size)
        starts_in_chunk = np.cumsum(counts) - counts
        dest = cursor[t_ord] + (np.arange(len(t_ord), dtype=np.int64) - starts_in_chunk[t_ord])
        data[dest] = scores[order]
        np.maximum.at(term_max, t_new, scores)
        indices[dest] = docs[order]
        tf_out[dest] = tf[order]
        cursor += counts
    data.flush()
    indices.flush()
    tf_out.flush()
    del data, indices, tf_out
    return term_max


def _write_lookups(
    out: Path, terms_sorted: list[str], *, k1: float, b: float, n_docs: int, offsets: Any, cols: _Columns
) -> None:
    """Vocabulary, bm25s params, docstore offsets, the columns and the id lookup."""
    vocab_size = len(terms_sorted)
    with open(out / "vocab.index.json", "wb") as fh:
        fh.write(orjson.dumps({t: i for i, t in enumerate(terms_sorted)}))
    encoded = [t.encode() for t in terms_sorted]
    term_off = np.zeros(vocab_size + 1, dtype=np.int64)
    np.cumsum(np.fromiter((len(e) for e in encoded), dtype=np.int64, count=vocab_size), out=term_off[1:])
    (out / "terms.bin").write_bytes(b"".join(encoded))
    np.save(out / "terms_off.npy", _narrow(term_off))
    del encoded
    params = {
        "k1": k1,
        "b": b,
        "delta": 0.5,
        "method": "lucene",
        "idf_method": "lucene",
        "dtype": "float32",
        "int_dtype": "int32",
        "num_docs": n_docs,
        "version": _bm25s_version(),
        "backend": "numpy",
    }
    (out / "params.index.json").write_text(json.dumps(params, indent=4))
    np.save(out / "offsets.npy", _narrow(np.frombuffer(offsets, dtype=np.int64)))
    np.save(out / "price.npy", np.frombuffer(cols.price, dtype=np.float64))
    np.save(out / "sold_count.npy", _narrow(np.frombuffer(cols.sold, dtype=np.int64)))
    np.save(out / "service.npy", np.frombuffer(cols.service, dtype=np.uint8))
    np.save(out / "shop.npy", np.frombuffer(cols.shop, dtype=np.int32))
    (out / "shops.json").write_bytes(orjson.dumps(list(cols.shop_codes)))
    ids = np.array(cols.ids, dtype=f"S{max((len(i) for i in cols.ids), default=1)}")
    perm = np.argsort(ids, kind="stable").astype(np.int64)
    np.save(out / "ids_sorted.npy", ids[perm])
    np.save(out / "ids_perm.npy", _narrow(perm))
    # Rank of each document's product_id in byte order: the tie order of Pyserini's search, which sorts
    # equal scores by the "id" field ascending.
    id_rank = np.empty(n_docs, dtype=np.int32)
    id_rank[perm] = np.arange(n_docs, dtype=np.int32)
    np.save(out / "id_rank.npy", id_rank)


def _write_index_manifest(
    out: Path, catalog_path: Path, stats: IndexStats, *, k1: float, b: float, started: float
) -> None:
    """``manifest.json`` with the stats, written again once the index's size is known."""
    catalog_ref = CatalogRef(
        path=str(catalog_path.resolve()), size=catalog_path.stat().st_size, sha256=sha256_file(catalog_path)
    )
    manifest = IndexManifest(
        bm25s_version=_bm25s_version(),
        analyzer=LuceneEnglishAnalyzer.name,
        params=IndexParams(k1=k1, b=b),
        services=list(SERVICES),
        catalog=catalog_ref,
        inputs={"catalog": FileRef(path=catalog_ref.path, sha256=catalog_ref.sha256)},
    )
    stats.build_seconds = round(time.perf_counter() - started, 3)
    manifest.stats = stats
    write_manifest(manifest, out)
    stats.index_bytes = _dir_bytes(out)
    manifest.stats = stats.model_copy()
    write_manifest(manifest, out)


def _bm25s_version() -> str:
    import bm25s

    return str(bm25s.__version__)


def read_index_manifest(index_dir: str | Path) -> IndexManifest:
    """The typed ``manifest.json`` of an index directory.

    Raises:
        ManifestError: missing, empty, torn or not an index manifest (names the file).
    """
    return read_manifest(index_dir, IndexManifest)


__all__ = [
    "SERVICE_BITS",
    "IndexBuildError",
    "IndexFormatError",
    "IndexManifest",
    "IndexStats",
    "build_index",
    "clean_stale_builds",
    "read_index_manifest",
]
