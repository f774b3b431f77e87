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
import zstandard

from shoparena.records.catalog import SERVICES, Product, ProductHit, ProductView
from shoparena.runs.manifest import manifest_path
from shoparena.search.analysis import LuceneEnglishAnalyzer, sanitize_query
from shoparena.search.bm25 import lucene_avgdl, norm_inverse_table
from shoparena.search.docstore import DocstoreReader
from shoparena.search.index import (
    FORMAT_VERSION,
    READABLE_FORMAT_VERSIONS,
    SERVICE_BITS,
    IndexFormatError,
    read_index_manifest,
)
from shoparena.search.retrieval import DENSE_BLOCK, Retrieval, Span

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


class SearchIndex(Retrieval):
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
        version = self.manifest.format_version
        if version not in READABLE_FORMAT_VERSIONS or self.manifest.stats is None:
            readable = ", ".join(map(str, READABLE_FORMAT_VERSIONS))
            raise IndexFormatError(
                f"{manifest_path(d)}: index format_version {version!r}, this shoparena reads "
                f"{readable} (writes {FORMAT_VERSION}); rebuild it with `shoparena catalog index`"
            )
        self._exact = exact
        try:
            self._load(d, version)
            self._check_whole(d)
        except IndexFormatError:
            raise
        except (OSError, ValueError, EOFError, IndexError, KeyError, zstandard.ZstdError) as exc:
            # A truncated .npy or products.zst, a missing or foreign zstd dictionary: one line, never a
            # traceback (nor an empty answer later).
            detail = " ".join(f"{type(exc).__name__}: {exc}".split())[:300]
            raise IndexFormatError(
                f"{d}: a damaged index file ({detail}); rebuild it with `shoparena catalog index`"
            ) from None

    def _load(self, d: Path, version: int) -> None:
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
        self._docstore = DocstoreReader(d, version, self._offsets)
        self._shop_codes: dict[str, int] = {
            s: i for i, s in enumerate(orjson.loads((d / "shops.json").read_bytes()))
        }
        self._analyzer = LuceneEnglishAnalyzer(cache_size=200_000)
        self._local = threading.local()
        self._term_cache: dict[str, int | None] = {}

    def _check_whole(self, d: Path) -> None:
        """Every file agrees with the manifest's counts and the others' lengths (a truncated ``terms.bin``
        used to answer every query with nothing), and the first document decompresses."""
        stats = self.manifest.stats
        assert stats is not None
        expected = {
            "offsets.npy": (len(self._offsets) - 1, stats.docs),
            "terms_off.npy": (len(self._terms), stats.terms),
            "indptr.csc.index.npy": (len(self._indptr) - 1, stats.terms),
            "data.csc.index.npy": (len(self._data), stats.postings),
            "indices.csc.index.npy": (len(self._indices), stats.postings),
            "terms.bin": (len(self._terms._blob), int(self._terms._off[-1]) if len(self._terms._off) else 0),
            DocstoreReader.packed_name(self._docstore.format_version): (
                len(self._docstore.packed), int(self._offsets[-1]) if len(self._offsets) else 0
            ),
        }
        for name, array in (("price.npy", self.price), ("sold_count.npy", self.sold_count),
                            ("shop.npy", self.shop), ("ids_perm.npy", self._ids_perm)):  # fmt: skip
            expected[name] = (len(array), stats.docs)
        for name, (found, wanted) in expected.items():
            if found != wanted:
                raise IndexFormatError(
                    f"{d / name}: {found} entries where the index has {wanted}: a damaged index file; "
                    "rebuild it with `shoparena catalog index`"
                )
        if self._n:
            self._docstore.doc(0)

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
        return orjson.loads(self._docstore.doc(i))

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

    # --- retrieval (the algorithms: shoparena.search.retrieval) -------------------------------------
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

    def _spans(self, text: str) -> list[Span]:
        """``(term id, posting start, posting end, query count)`` per known query term."""
        indptr = self._indptr
        return [(t, int(indptr[t]), int(indptr[t + 1]), w) for t, w in self.query_terms(text)]

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
