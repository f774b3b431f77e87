"""Query an index built by :func:`shoparena.search.index.build_index` with upstream semantics (spec §3).

Everything is memory-mapped, so opening a 2.5 M-product index costs little resident memory. A document's
score is the sum of its query terms' Lucene BM25 scores (precomputed per posting at boost 1; computed from
tf and the norm byte for a repeated query term) in double, rounded to float32, as Lucene sums them. Hits
rank by score descending, ties by product_id ascending (byte order), as Pyserini's search sorts them.
"""

from __future__ import annotations

import bisect
import json
import math
import re
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from shoparena.records.catalog import SERVICES, Product, ProductHit, ProductView
from shoparena.search.analysis import LuceneEnglishAnalyzer, sanitize_query
from shoparena.search.bm25 import lucene_avgdl, lucene_idf, norm_inverse_table, term_scores
from shoparena.search.docstore import read_doc
from shoparena.search.index import FORMAT_VERSION, SERVICE_BITS, IndexFormatError, read_index_manifest

#: Survivors kept after filtering (5 pages of 10).
WINDOW = 50
PAGE_SIZE = 10
MAX_PAGE = 5
#: Distinct product ids one view/raw request looks up; the rest are ignored (upstream has no cap, so a
#: request repeating an id 10,000 times returned 10,000 copies).
MAX_VIEW_IDS = 100
#: ORO's retrieval depth; ShoppingBench uses 100 000.
DEFAULT_RETRIEVE_K = 10_000
SORTS = ("order", "priceasc", "pricedesc")
HIT_FIELDS = ("product_id", "shop_id", "title", "price", "service", "sold_count")
VIEW_FIELDS = ("product_id", "short_description", "description", "sku_options", "attributes")
_PAGE_RE = re.compile(r"[0-9]+")


def parse_page(page: int | str | None) -> int | None:
    """Upstream page rule: a digit string (or int) of value 1-5, else ``None`` (the caller returns [])."""
    if isinstance(page, bool) or page is None:
        return None
    if isinstance(page, int):
        value = page
    elif isinstance(page, str) and _PAGE_RE.fullmatch(page):
        value = int(page)
    else:
        return None
    return value if 1 <= value <= MAX_PAGE else None


def parse_price(price: str | None) -> tuple[float | None, float | None] | None:
    """Upstream price rule: ``lo-hi`` with exactly one ``-``; an empty/unparsable side is open.

    Returns:
        ``(lo, hi)`` with ``None`` for an open side, or ``None`` for "no filter".
    """
    if not price:
        return None
    parts = price.split("-")
    if len(parts) != 2:
        return None

    def bound(text: str) -> float | None:
        try:
            value = float(text)
        except ValueError:
            return None
        # NaN compares false with everything, so upstream's "drop if price < lo" never drops: no bound.
        return None if math.isnan(value) else value

    lo, hi = bound(parts[0]), bound(parts[1])
    return None if lo is None and hi is None else (lo, hi)


def parse_service(service: str | None) -> int:
    """Upstream service rule: comma list of exact tokens, unknown ones ignored; returns the AND bitmask."""
    if not service:
        return 0
    mask = 0
    for token in service.split(","):
        mask |= SERVICE_BITS.get(token, 0)
    return mask


def _merge_unique(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Sorted union of two sorted arrays of distinct values."""
    docs = np.concatenate([a, b])
    docs.sort(kind="stable")  # timsort merges the two sorted runs in linear time
    keep = np.empty(len(docs), dtype=bool)
    keep[:1] = True
    np.not_equal(docs[1:], docs[:-1], out=keep[1:])
    return docs[keep]


#: Before a threshold is known, this many times k of the best-bounded documents are scored first.
_SEED = 4


def _absent_mask(cand: np.ndarray, docs: np.ndarray) -> np.ndarray:
    """Which documents of sorted ``docs`` are not in sorted, non-empty ``cand``."""
    pos = np.searchsorted(cand, docs)
    np.minimum(pos, len(cand) - 1, out=pos)
    return cand[pos] != docs


def _kth(scores: np.ndarray, k: int) -> float:
    """The k-th highest score, or -inf with fewer than ``k``."""
    if len(scores) < k:
        return -math.inf
    return float(np.partition(scores, len(scores) - k)[len(scores) - k])


def _merge_scored(
    a: np.ndarray, a_scores: np.ndarray, b: np.ndarray, b_scores: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Sorted union of two disjoint sorted document arrays, carrying their scores along."""
    if not len(a):
        return b, b_scores
    docs = np.concatenate([a, b])
    order = np.argsort(docs, kind="stable")  # timsort merges the two sorted runs in linear time
    return docs[order], np.concatenate([a_scores, b_scores])[order]


def _at_least(
    values: np.ndarray, floor: np.float32, starts: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Documents whose float32 score (the rounded double in ``values``) is ``floor`` or more.

    ``values`` is the whole buffer (document = position) or selected rows of its block view whose
    first documents are ``starts``.
    """
    # A double that rounds to floor or more exceeds the float32 just below floor.
    hit = np.flatnonzero(values > float(np.nextafter(floor, np.float32(-np.inf))))
    flat = values.ravel()
    scores = flat[hit].astype(np.float32)
    if starts is not None:
        size = values.shape[1]
        hit = starts[hit // size] + hit % size
    ok = scores >= floor
    return hit[ok], scores[ok]


#: Documents per block of the dense window's block maxima (:meth:`SearchIndex._window_dense`).
DENSE_BLOCK = 1024

#: The pruned search switches to the dense window once one term leaves more than 1/this of the
#: catalog to score (below that, merging candidates costs less than a pass over the buffer).
DENSE_WINDOW_MIN = 50

#: One binary-search lookup of a document in a posting list costs about this many postings of
#: scatter-add work (measured on 2.5 M products); :class:`_Scorer` picks the cheaper way with it.
LOOKUP_COST = 10.0


class _Scorer:
    """Full BM25 scores of chosen documents for one query, bit-identical to the dense accumulator.

    Few documents are scored by binary search in each query term's posting list, summing the terms in
    query order in double exactly as the accumulator does (a missing term adds 0.0, which changes
    nothing), then rounding to float32. Once that would cost more than scattering every posting, the
    query's postings are accumulated into the thread's dense float64 buffer once and later calls read it.
    """

    def __init__(self, index: SearchIndex, spans: list[tuple[int, int, int, int]]) -> None:
        self._index = index
        self.spans = spans
        self.total = sum(e - s for _, s, e, _ in spans)
        self._acc: np.ndarray | None = None
        self.mode = index._strategy

    def prefers_dense(self, n_docs: int) -> bool:
        """Whether scoring ``n_docs`` documents is cheaper from the dense buffer than by lookups."""
        return self._acc is not None or (
            self.mode == "dense"
            or (self.mode == "auto" and n_docs * len(self.spans) * LOOKUP_COST > self.total)
        )

    @property
    def has_dense(self) -> bool:
        return self._acc is not None

    def dense(self) -> np.ndarray:
        """The thread's float64 buffer holding every matching document's summed score (built once)."""
        if self._acc is None:
            self._acc = self._index._accumulate(self.spans)
        return self._acc

    def scores(self, docs: np.ndarray) -> np.ndarray:
        if self.prefers_dense(len(docs)):
            self.dense()
        if self._acc is not None:
            return self._acc[docs].astype(np.float32)
        index = self._index
        out = np.zeros(len(docs), dtype=np.float64)
        for span in self.spans:
            _, s, e, _ = span
            postings = index._indices[s:e]
            pos = np.searchsorted(postings, docs)
            np.minimum(pos, e - s - 1, out=pos)
            hit = postings[pos] == docs
            out[hit] += index._span_scores(span, pos[hit])
        return out.astype(np.float32)

    def close(self) -> None:
        if self._acc is not None:
            self._index._reset(self._acc, self.spans)
            self._acc = None


class _Terms:
    """Sorted terms stored as one UTF-8 blob; a sequence ``bisect`` can search without a dict."""

    def __init__(self, blob: bytes | np.memmap, offsets: np.ndarray) -> None:
        self._blob = blob
        self._off = offsets

    def __len__(self) -> int:
        return len(self._off) - 1

    def __getitem__(self, i: int) -> bytes:
        return bytes(self._blob[int(self._off[i]) : int(self._off[i + 1])])

    def lookup(self, term: str) -> int | None:
        key = term.encode()
        i = bisect.bisect_left(self, key)
        return i if i < len(self) and self[i] == key else None


class SearchIndex:
    """A memory-mapped BM25 index with ShoppingBench/ORO ``find_product`` semantics.

    Use :meth:`open`; the instance is safe to share between threads.
    """

    def __init__(self, index_dir: Path, retrieve_k: int, exact: bool = False) -> None:
        if retrieve_k < 1:
            raise ValueError(f"SearchIndex.retrieve_k must be >= 1, got {retrieve_k}")
        d = Path(index_dir)
        self.index_dir = d
        self.retrieve_k = retrieve_k
        self.manifest = read_index_manifest(d)
        if self.manifest.format_version != FORMAT_VERSION or self.manifest.stats is None:
            raise IndexFormatError(
                f"{d / 'manifest.json'}: index format_version {self.manifest.format_version!r}, this "
                f"shoparena reads {FORMAT_VERSION}; rebuild it with `shoparena catalog index`"
            )
        self.params: dict[str, Any] = json.loads((d / "params.index.json").read_text())

        def load(name: str) -> np.ndarray:
            # A plain ndarray view of the map: slicing np.memmap objects costs microseconds each.
            return np.load(d / name, mmap_mode="r").view(np.ndarray)

        self._data = load("data.csc.index.npy")
        self._indices = load("indices.csc.index.npy")
        self._indptr = load("indptr.csc.index.npy")
        self._tf = load("tf.csc.index.npy")
        self._norms = load("norms.npy")
        self._id_rank = load("id_rank.npy")
        stats = self.manifest.stats
        self._doc_count = stats.docs_with_terms
        self._norm_inv = norm_inverse_table(
            lucene_avgdl(stats.total_tokens, self._doc_count), stats.k1, stats.b
        )
        self._offsets = load("offsets.npy")
        self.price = load("price.npy")
        self.sold_count = load("sold_count.npy")
        self.service = load("service.npy")
        self.shop = load("shop.npy")
        self._ids_sorted = load("ids_sorted.npy")
        self._ids_perm = load("ids_perm.npy")
        self._n = len(self._offsets) - 1
        self._exact = exact
        #: How :class:`_Scorer` scores candidates: "auto", or "lookup"/"dense" (tests force each path).
        self._strategy = "auto"
        #: Documents per block of the dense buffer's block maxima (tests use small blocks).
        self._dense_block = DENSE_BLOCK
        term_max = d / "term_max.npy"
        if term_max.exists():
            self._term_max = load("term_max.npy")
        elif len(self._data):
            # Older index without the per-term maxima: derive them once (reads the whole score array).
            self._term_max = np.maximum.reduceat(np.asarray(self._data), np.asarray(self._indptr[:-1]))
        else:
            self._term_max = np.zeros(len(self._indptr) - 1, dtype=np.float32)
        term_blob = d / "terms.bin"
        blob: bytes | np.memmap = (
            np.memmap(term_blob, dtype=np.uint8, mode="r").view(np.ndarray)
            if term_blob.stat().st_size
            else b""
        )
        self._terms = _Terms(blob, load("terms_off.npy"))
        self._docs = (
            np.memmap(d / "products.deflate", dtype=np.uint8, mode="r").view(np.ndarray)
            if self._offsets[-1]
            else np.zeros(0, np.uint8)
        )
        self._zdict = (d / "products.zdict").read_bytes()
        self._shop_codes: dict[str, int] = {
            s: i for i, s in enumerate(orjson.loads((d / "shops.json").read_bytes()))
        }
        self._analyzer = LuceneEnglishAnalyzer(cache_size=200_000)
        self._local = threading.local()
        self._term_cache: dict[str, int | None] = {}

    @classmethod
    def open(
        cls, index_dir: str | Path, *, retrieve_k: int = DEFAULT_RETRIEVE_K, exact: bool = False
    ) -> SearchIndex:
        """Open an index directory.

        Args:
            index_dir: A directory written by :func:`~shoparena.search.index.build_index`.
            retrieve_k: BM25 hits considered before filtering (ORO 10 000, ShoppingBench 100 000).
            exact: Score every candidate instead of pruning (same results, slower; for checking).
        """
        return cls(Path(index_dir), retrieve_k, exact)

    # --- documents --------------------------------------------------------------------------------
    def __len__(self) -> int:
        return self._n

    def _raw_doc(self, i: int) -> dict[str, Any]:
        return orjson.loads(read_doc(self._docs, self._offsets, self._zdict, i))

    def doc_index(self, product_id: str) -> int | None:
        """Document index of ``product_id`` (exact string match), or ``None``."""
        try:
            key = product_id.encode("ascii")
        except (UnicodeEncodeError, AttributeError):
            return None
        if not key or len(key) > self._ids_sorted.dtype.itemsize:
            return None
        pos = int(np.searchsorted(self._ids_sorted, key))
        if pos < len(self._ids_sorted) and self._ids_sorted[pos] == key:
            return int(self._ids_perm[pos])
        return None

    def product_dict(self, i: int) -> dict[str, Any]:
        """The stored product JSON of document ``i`` as a dict (upstream key order)."""
        return self._raw_doc(i)

    def get_product(self, product_id: str) -> Product | None:
        """The full product, or ``None`` for an unknown id."""
        i = self.doc_index(product_id)
        return None if i is None else Product.model_validate(self._raw_doc(i))

    def iter_products(self) -> Iterator[Product]:
        """Every indexed product in index order."""
        for i in range(self._n):
            yield Product.model_validate(self._raw_doc(i))

    def _ids_in_request(self, product_ids: str, *, dedupe: bool = True) -> list[int]:
        # Upstream splits on "," without stripping: "a, b" asks for "a" and " b". Unlike upstream, at most
        # MAX_VIEW_IDS ids are looked up and (views) repeated ids are answered once (docs/search.md).
        out: list[int] = []
        seen: set[str] = set()
        for n, pid in enumerate(product_ids.split(",")):
            if dedupe and pid in seen:
                continue
            seen.add(pid)
            if len(seen) > MAX_VIEW_IDS or n >= MAX_VIEW_IDS * 100:
                break
            i = self.doc_index(pid)
            if i is not None:
                out.append(i)
        return out

    def view_dicts(self, product_ids: str) -> list[dict[str, Any]]:
        """``view_product_information`` items as dicts in §2.3 field order."""
        out = []
        for i in self._ids_in_request(product_ids):
            doc = self._raw_doc(i)
            out.append({k: doc.get(k) for k in VIEW_FIELDS})
        return out

    def raw_dicts(self, product_ids: str) -> list[dict[str, Any]]:
        """``get_product_raw`` items: full product dicts."""
        return [self._raw_doc(i) for i in self._ids_in_request(product_ids, dedupe=False)[:MAX_VIEW_IDS]]

    def view_product_information(self, product_ids: str) -> list[ProductView]:
        """Upstream ``view_product_information``: unknown ids skipped, request order kept; repeated ids
        are answered once and at most :data:`MAX_VIEW_IDS` distinct ids are looked up."""
        return [ProductView.model_validate(d) for d in self.view_dicts(product_ids)]

    def get_product_raw(self, product_ids: str) -> list[Product]:
        """ORO's scorer-only ``get_product_raw``: full products, same id splitting, duplicates kept."""
        return [Product.model_validate(d) for d in self.raw_dicts(product_ids)]

    # --- retrieval --------------------------------------------------------------------------------
    def _span_scores(self, span: tuple[int, int, int, int], pos: np.ndarray | None = None) -> np.ndarray:
        """Lucene's float32 scores of one query term's postings (all, or those at positions ``pos``).

        At boost 1 they are stored; a term repeated w times has weight w · idf, so its scores are
        computed from tf and the norm byte with Lucene's arithmetic (scaling the stored ones would round
        differently).
        """
        _, s, e, w = span
        if w == 1:
            data = self._data[s:e]
            return data if pos is None else data[pos]
        tf, docs = self._tf[s:e], self._indices[s:e]
        if pos is not None:
            tf, docs = tf[pos], docs[pos]
        weight = np.float32(w) * lucene_idf(e - s, self._doc_count)
        return term_scores(tf, self._norm_inv[self._norms[docs]], weight)

    def _accumulator(self) -> np.ndarray:
        acc = getattr(self._local, "acc", None)
        if acc is None:
            # Padded to whole blocks so the dense window can view it as (blocks, BLOCK).
            size = self._dense_block
            acc = np.zeros(-(-self._n // size) * size, dtype=np.float64)
            self._local.acc = acc
        return acc

    def _term_id(self, term: str) -> int | None:
        cache = self._term_cache
        if term in cache:
            return cache[term]
        tid = self._terms.lookup(term)
        if len(cache) > 100_000:
            cache.clear()
        cache[term] = tid
        return tid

    def query_terms(self, q: str) -> list[tuple[int, int]]:
        """``(term id, count)`` of the analysed query's known terms, in first-seen order.

        Pyserini's bag-of-words query boosts a repeated term by its count, i.e. scores it that often.
        """
        counts: dict[int, int] = {}
        for term in self._analyzer.analyze(q):
            tid = self._term_id(term)
            if tid is not None:
                counts[tid] = counts.get(tid, 0) + 1
        return list(counts.items())

    def _spans(self, text: str) -> list[tuple[int, int, int, int]]:
        """``(term id, posting start, posting end, query count)`` per known query term."""
        indptr = self._indptr
        return [(t, int(indptr[t]), int(indptr[t + 1]), w) for t, w in self.query_terms(text)]

    def _accumulate(self, spans: list[tuple[int, int, int, int]]) -> np.ndarray:
        """Sum the query terms' posting scores into this thread's float64 accumulator (query-term order)."""
        acc = self._accumulator()
        for n, span in enumerate(spans):
            _, s, e, _ = span
            values = self._span_scores(span).astype(np.float64)
            if n == 0:
                acc[self._indices[s:e]] = values  # the buffer is clean and 0.0 + v == v: a plain store
                continue
            # Postings of one term hold each document once; np.add.at is the fastest exact scatter-add,
            # but only with matching dtypes (float32 values into the float64 buffer take a ~40x slower path).
            np.add.at(acc, self._indices[s:e], values)
        return acc

    def _reset(self, acc: np.ndarray, spans: list[tuple[int, int, int, int]]) -> None:
        total = sum(e - s for _, s, e, _ in spans)
        # Zeroing by index costs ~20x more per element than a sequential fill of the whole buffer.
        if total * 20 > self._n:
            acc.fill(0.0)
        else:
            for _, s, e, _ in spans:
                acc[self._indices[s:e]] = 0.0

    def _union(self, spans: list[tuple[int, int, int, int]]) -> np.ndarray:
        """Sorted distinct documents of the given terms' postings."""
        parts = [self._indices[s:e] for _, s, e, _ in spans]
        if len(parts) == 1:
            return np.asarray(parts[0])
        docs = np.concatenate(parts)
        docs.sort(kind="stable")  # timsort merges the already sorted runs in linear time
        keep = np.empty(len(docs), dtype=bool)
        keep[0] = True
        np.not_equal(docs[1:], docs[:-1], out=keep[1:])
        return docs[keep]

    def _score(self, q: str) -> tuple[np.ndarray, np.ndarray]:
        """All matching documents (ascending index) and their float32 BM25 scores (unpruned)."""
        spans = self._spans(q)
        if not spans:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        if len(spans) == 1:
            _, s, e, _ = spans[0]
            return np.asarray(self._indices[s:e]), np.asarray(self._span_scores(spans[0]))
        acc = self._accumulate(spans)
        try:
            docs = self._union(spans)
            return docs, acc[docs].astype(np.float32)
        finally:
            self._reset(acc, spans)

    def _top(self, docs: np.ndarray, scores: np.ndarray, k: int) -> np.ndarray:
        """Positions of the best ``k`` by (score desc, product_id asc), in ascending position order."""
        n = len(scores)
        if n <= k:
            return np.arange(n)
        kth = np.partition(scores, n - k)[n - k]
        above = scores > kth
        need = k - int(np.count_nonzero(above))
        tied = np.flatnonzero(scores == kth)
        if len(tied) > need:
            tied = tied[np.argsort(self._id_rank[docs[tied]], kind="stable")[:need]]
        above[tied] = True
        return np.flatnonzero(above)

    def _rank(self, docs: np.ndarray, scores: np.ndarray) -> np.ndarray:
        """Order positions by score desc, then product_id asc (Pyserini's tie order)."""
        return np.lexsort((self._id_rank[docs], -scores))

    def search(self, q: str, k: int = 10) -> tuple[np.ndarray, np.ndarray]:
        """Top ``k`` unfiltered BM25 hits of the (sanitised) query: document indices and scores."""
        docs, scores = self._score(sanitize_query(q))
        top = self._top(docs, scores, k)
        docs, scores = docs[top], scores[top]
        order = self._rank(docs, scores)
        return docs[order], scores[order]

    def _filter_fn(
        self, shop_code: int | None, bounds: tuple[float | None, float | None] | None, service_mask: int
    ) -> Callable[[np.ndarray], np.ndarray] | None:
        if shop_code is None and bounds is None and not service_mask:
            return None

        def keep(docs: np.ndarray) -> np.ndarray:
            ok = np.ones(len(docs), dtype=bool)
            if shop_code is not None:
                ok &= self.shop[docs] == shop_code
            if bounds is not None:
                lo, hi = bounds
                prices = self.price[docs]
                # Written as upstream's "drop if price < lo / price > hi": inclusive, NaN-safe bounds.
                if lo is not None:
                    ok &= ~(prices < lo)
                if hi is not None:
                    ok &= ~(prices > hi)
            if service_mask:
                ok &= (self.service[docs] & service_mask) == service_mask
            return ok

        return keep

    def _window_exact(
        self, docs: np.ndarray, scores: np.ndarray, keep: Callable[[np.ndarray], np.ndarray] | None, k: int
    ) -> np.ndarray:
        """Reference path over every candidate: cap at retrieve_k, filter, top ``k``, relevance order."""
        if keep is not None:
            cap = self._top(docs, scores, self.retrieve_k)
            docs, scores = docs[cap], scores[cap]
            ok = keep(docs)
            docs, scores = docs[ok], scores[ok]
        top = self._top(docs, scores, k)
        docs, scores = docs[top], scores[top]
        return docs[self._rank(docs, scores)]

    def _window_pruned(
        self, spans: list[tuple[int, int, int, int]], keep: Callable[[np.ndarray], np.ndarray] | None, k: int
    ) -> np.ndarray:
        """Exact top ``k`` (filtered) without scoring every matching document (MaxScore-style).

        Terms are taken rarest first. A document first met in term j's postings holds none of the terms
        before it, so its score is at most its own term-j score plus the remaining terms' maximum scores;
        documents whose bound is below the current k-th best candidate score are never scored (that
        holds for good: a later term cannot lift a document above a bound that already counted it).
        Once the k-th best score beats the remaining terms' maxima outright, no unseen document can
        enter. Only the surviving candidates are scored (:class:`_Scorer`). With a filter, the
        retrieve_k cap is then checked by ranking the worst survivor among the documents whose bound
        reaches its score: first by counting such postings (one comparison each), then, if needed, by
        scoring the deduplicated rivals or reading the dense buffer (:meth:`_rank_dense`).

        When a term leaves so many candidates that scoring them needs a pass over every posting anyway
        (all query terms common), the search stops and takes the window from the dense buffer instead
        (:meth:`_window_dense`), which costs one scatter of the postings plus one pass over the buffer.
        """
        scorer = _Scorer(self, spans)
        try:
            order = sorted(spans, key=lambda sp: sp[2] - sp[1])
            maxes = [float(self._term_max[t]) * w for t, _, _, w in order]
            rest = [sum(maxes[j:]) for j in range(len(maxes) + 1)]
            cand = np.zeros(0, dtype=self._indices.dtype)
            cand_scores = np.zeros(0, dtype=np.float32)
            theta = -math.inf  # k-th best candidate score so far
            for j, (_, s, e, w) in enumerate(order):
                postings, own = self._indices[s:e], self._data[s:e]
                if theta == -math.inf and len(postings) > _SEED * k:
                    # Score the most promising documents first, to learn a threshold for the rest: the
                    # best own scores (the bound ranks like them) that pass the filter and are new.
                    pick = _SEED * k * 4
                    seed, seed_own = postings, own
                    if len(own) > pick:
                        best = np.sort(np.argpartition(own, len(own) - pick)[len(own) - pick :])
                        seed, seed_own = postings[best], own[best]
                    if keep is not None:
                        ok = keep(seed)
                        seed, seed_own = seed[ok], seed_own[ok]
                    if len(cand):
                        fresh = _absent_mask(cand, seed)
                        seed, seed_own = seed[fresh], seed_own[fresh]
                    if len(seed) > _SEED * k:
                        seed = np.sort(seed[np.argpartition(seed_own, len(seed) - _SEED * k)[-_SEED * k :]])
                    if len(seed):
                        cand, cand_scores = _merge_scored(cand, cand_scores, seed, scorer.scores(seed))
                        theta = _kth(cand_scores, k)
                if theta > -math.inf:
                    # Drop hopeless postings first: the masks commute, and this one is the cheapest.
                    # A small margin absorbs float32 summation rounding.
                    hopeful = (own.astype(np.float64) * w + rest[j + 1]) * (1 + 1e-5) + 1e-6 >= theta
                    postings = postings[hopeful]
                if (
                    len(postings) * DENSE_WINDOW_MIN > self._n
                    and scorer.mode != "lookup"
                    and scorer.prefers_dense(len(postings))
                ):
                    # Scoring this many documents costs a pass over every posting anyway: take the top
                    # from the dense buffer's block maxima instead of continuing term by term.
                    return self._window_dense(scorer, keep, k)
                # Candidates are kept filtered: each term's postings pass the filter once.
                if keep is not None and len(postings):
                    postings = postings[keep(postings)]
                if len(cand) and len(postings):
                    postings = postings[_absent_mask(cand, postings)]
                if len(postings):
                    cand, cand_scores = _merge_scored(cand, cand_scores, postings, scorer.scores(postings))
                    theta = _kth(cand_scores, k)
                if j < len(order) - 1 and rest[j + 1] * (1 + 1e-5) + 1e-6 < theta:
                    break
            top = self._top(cand, cand_scores, k)
            docs, scores = cand[top], cand_scores[top]
            ranked_pos = self._rank(docs, scores)
            docs, scores = docs[ranked_pos], scores[ranked_pos]
            total = sum(e - s for _, s, e, _ in spans)
            if keep is None or not len(docs) or total <= self.retrieve_k:
                return docs
            # Filters apply only to the first retrieve_k hits: check the worst survivor's global rank.
            last, s_last = int(docs[-1]), float(scores[-1])
            K = self.retrieve_k
            bound = self._rival_bound(order, s_last, 8 * K)
            if bound <= K:
                return docs  # the survivor is a rival itself, so at most retrieve_k - 1 rank above it
            if scorer.mode == "dense" or (scorer.mode == "auto" and (bound > 8 * K or scorer.has_dense)):
                rank = self._rank_dense(scorer, last, s_last)
            else:
                rivals = self._rivals(order, s_last)
                if len(rivals) <= K:
                    return docs
                rival_scores = scorer.scores(rivals)
                rank = int(np.count_nonzero(rival_scores > s_last))
                tied = rival_scores == s_last
                rank += int(np.count_nonzero(self._id_rank[rivals[tied]] < self._id_rank[last]))
            if rank < K:
                return docs
            return self._window_dense(scorer, keep, k)
        finally:
            scorer.close()

    def _rival_bound(self, order: list[tuple[int, int, int, int]], floor: float, limit: int) -> int:
        """An upper bound on how many documents (unfiltered) may score ``floor`` or more.

        Counts, term by term, the postings whose bound (as in :meth:`_rivals`) reaches ``floor``,
        without removing documents counted at an earlier term: one comparison per posting. Stops
        once the count exceeds ``limit``.
        """
        maxes = [float(self._term_max[t]) * w for t, _, _, w in order]
        rest = [sum(maxes[j:]) for j in range(len(maxes) + 1)]
        count = 0
        for j, (_, s, e, w) in enumerate(order):
            if rest[j] * (1 + 1e-5) + 1e-6 < floor:
                break
            need = (floor - 1e-6) / (1 + 1e-5) - rest[j + 1]
            if need > 0:
                # Rounded down to float32, so no posting reaching the bound is left out of the count.
                least = np.nextafter(np.float32(need / w), np.float32(-np.inf))
                count += int(np.count_nonzero(self._data[s:e] >= least))
            else:
                count += e - s
            if count > limit:
                break  # enough to decide
        return count

    def _rank_dense(self, scorer: _Scorer, last: int, floor: float) -> int:
        """How many documents (unfiltered) rank above document ``last`` scoring ``floor``.

        Only blocks whose maximum reaches ``floor`` are read from the dense buffer.
        """
        blocks, block_max = self._blocks(scorer)
        sel = np.flatnonzero(block_max >= floor)
        docs, scores = _at_least(blocks[sel], np.float32(floor), sel * self._dense_block)
        rank = int(np.count_nonzero(scores > floor))
        tied = docs[scores == floor]
        return rank + int(np.count_nonzero(self._id_rank[tied] < self._id_rank[last]))

    def _blocks(self, scorer: _Scorer) -> tuple[np.ndarray, np.ndarray]:
        """The dense buffer as (blocks, :data:`DENSE_BLOCK`) and each block's float32 maximum."""
        blocks = scorer.dense().reshape(-1, self._dense_block)
        return blocks, blocks.max(axis=1).astype(np.float32)  # float32 rounding is monotone

    def _window_dense(
        self, scorer: _Scorer, keep: Callable[[np.ndarray], np.ndarray] | None, k: int
    ) -> np.ndarray:
        """Exact window from the dense buffer of every matching document's score.

        The answer is always the filtered top ``k`` within the unfiltered top ``retrieve_k``, so
        :meth:`_window_exact` over the set C of *all* documents scoring t or more gives it when C holds
        the unfiltered top ``retrieve_k`` (at least that many documents score t or more), or when at
        least ``k`` documents of C pass the filter (then the k-th survivor scores t or more, and each
        window document has fewer than ``|C|`` documents ranked above it, all in C); without a filter,
        at least ``k`` documents in C suffice.

        t starts as the k-th largest maximum of blocks of :data:`DENSE_BLOCK` documents (at least k
        documents reach it). With a selective filter it is lowered so that about twice the documents
        needed at the pass rate seen so far reach it: by block maxima while that count is small, then
        from a strided sample of the buffer (counted, not assumed).
        """
        acc = scorer.dense()
        if scorer.total * 16 < len(acc):
            # Few postings: reading the matches' scores costs less than a pass over the buffer.
            docs = self._union(scorer.spans)
            return self._window_exact(docs, acc[docs].astype(np.float32), keep, k)
        blocks, block_max = self._blocks(scorer)
        n_blocks = len(block_max)
        step = 64
        sample: np.ndarray | None = None
        want = k
        while True:
            floor = np.float32(0.0)
            if want * 2 <= n_blocks:
                floor = np.partition(block_max, n_blocks - want)[n_blocks - want]
            else:
                if sample is None:
                    sample = acc[::step]  # every 8th cache line: a fair sample wherever matches lie
                    sample = sample[sample > 0]  # numpy's partition is slow on many equal values
                rank = want // step + 1
                if rank < len(sample):
                    floor = np.float32(np.partition(sample, len(sample) - rank)[len(sample) - rank])
            if floor <= 0:
                docs = np.flatnonzero(acc > 0)
                return self._window_exact(docs, acc[docs].astype(np.float32), keep, k)
            sel = np.flatnonzero(block_max >= floor)
            if len(sel) * 2 < n_blocks:
                docs, scores = _at_least(blocks[sel], floor, sel * self._dense_block)
            else:
                docs, scores = _at_least(acc, floor)
            if len(docs) >= self.retrieve_k or (keep is None and len(docs) >= k):
                return self._window_exact(docs, scores, keep, k)
            passing = int(np.count_nonzero(keep(docs))) if keep is not None else len(docs)
            if passing >= k:
                return self._window_exact(docs, scores, keep, k)
            rate = max(passing, 1) / max(len(docs), 1)
            want = max(want * 4, int(2 * k / rate))

    def _rivals(self, order: list[tuple[int, int, int, int]], floor: float) -> np.ndarray:
        """Sorted documents (unfiltered) that may score ``floor`` or more: a superset of them.

        Same bound as the candidate search: a document first met in term j's postings (terms rarest
        first) scores at most its term-j score plus the later terms' maxima. A document left out at an
        earlier term already had a bound below ``floor``, so meeting it again changes nothing.
        """
        maxes = [float(self._term_max[t]) * w for t, _, _, w in order]
        rest = [sum(maxes[j:]) for j in range(len(maxes) + 1)]
        docs = np.zeros(0, dtype=self._indices.dtype)
        for j, (_, s, e, w) in enumerate(order):
            if rest[j] * (1 + 1e-5) + 1e-6 < floor:
                break  # nobody first met from here on can reach the floor
            postings = self._indices[s:e]
            need = (floor - 1e-6) / (1 + 1e-5) - rest[j + 1]  # the margin mirrors the pruning's
            if need > 0:
                postings = postings[self._data[s:e] * np.float32(w) >= need]
            if len(docs) and len(postings):
                postings = postings[_absent_mask(docs, postings)]
            if len(postings):
                docs = _merge_unique(docs, postings)
        return docs

    def find_window(
        self,
        q: str,
        shop_id: str | None = None,
        price: str | None = None,
        sort: str | None = None,
        service: str | None = None,
    ) -> np.ndarray:
        """Document indices of the whole (at most 50) survivor window, sorted as requested.

        The page rule is not applied here; :meth:`find_doc_indices` slices one page out of this.
        """
        empty = np.zeros(0, dtype=np.int64)
        text = sanitize_query(q or "")
        if not text:
            return empty
        shop_code: int | None = None
        if shop_id:
            shop_code = self._shop_codes.get(shop_id)
            if shop_code is None:
                return empty
        keep = self._filter_fn(shop_code, parse_price(price), parse_service(service))
        spans = self._spans(text)
        if not spans:
            return empty
        k = min(WINDOW, self.retrieve_k)
        if len(spans) == 1 or self._exact:
            docs, scores = self._score(text)
            ranked = self._window_exact(docs, scores, keep, k)
        else:
            ranked = self._window_pruned(spans, keep, k)
        if sort == "order":
            ranked = ranked[np.argsort(-self.sold_count[ranked], kind="stable")]
        elif sort == "priceasc":
            ranked = ranked[np.argsort(self.price[ranked], kind="stable")]
        elif sort == "pricedesc":
            ranked = ranked[np.argsort(-self.price[ranked], kind="stable")]
        return ranked

    def find_doc_indices(
        self,
        q: str,
        page: int | str | None = 1,
        shop_id: str | None = None,
        price: str | None = None,
        sort: str | None = None,
        service: str | None = None,
    ) -> list[int]:
        """Document indices of one ``find_product`` page (see :meth:`find_product`)."""
        page_no = parse_page(page)
        if page_no is None:
            return []
        ranked = self.find_window(q, shop_id, price, sort, service)
        start = (page_no - 1) * PAGE_SIZE
        return [int(i) for i in ranked[start : start + PAGE_SIZE]]

    def find_product_dicts(
        self,
        q: str,
        page: int | str | None = 1,
        shop_id: str | None = None,
        price: str | None = None,
        sort: str | None = None,
        service: str | None = None,
    ) -> list[dict[str, Any]]:
        """``find_product`` items as dicts in §2.3 field order (what the server sends)."""
        out = []
        for i in self.find_doc_indices(q, page, shop_id, price, sort, service):
            doc = self._raw_doc(i)
            out.append({k: doc[k] for k in HIT_FIELDS})
        return out

    def find_product(
        self,
        q: str,
        page: int | str | None = 1,
        shop_id: str | None = None,
        price: str | None = None,
        sort: str | None = None,
        service: str | None = None,
    ) -> list[ProductHit]:
        """Upstream ``find_product`` (spec §3.2).

        Args:
            q: Query text; Lucene special characters become spaces; empty after that gives ``[]``.
            page: 1-5 as an int or a digit string; anything else gives ``[]`` before searching.
            shop_id: Exact shop id; empty means no filter.
            price: ``"lo-hi"`` with open sides allowed (``"100-"``, ``"-500"``); inclusive; any other
                shape means no filter.
            sort: ``order`` (sold_count desc), ``priceasc`` or ``pricedesc``, applied stably to the
                50-survivor window only; anything else keeps relevance order.
            service: Comma list of ``official, freeShipping, COD, flashsale`` (all required); unknown
                tokens are ignored.

        Returns:
            Up to 10 hits of the requested page.
        """
        # Stored documents were validated when indexed: construct without validating them again.
        return [
            ProductHit.model_construct(**d)
            for d in self.find_product_dicts(q, page, shop_id, price, sort, service)
        ]


__all__ = [
    "DEFAULT_RETRIEVE_K",
    "HIT_FIELDS",
    "MAX_VIEW_IDS",
    "SERVICES",
    "SORTS",
    "VIEW_FIELDS",
    "WINDOW",
    "SearchIndex",
    "parse_page",
    "parse_price",
    "parse_service",
]
