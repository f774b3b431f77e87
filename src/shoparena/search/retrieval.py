"""Exact top-k retrieval over the memory-mapped postings: the algorithms behind ``find_product``.

:class:`Retrieval` is the part of :class:`~shoparena.search.engine.SearchIndex` that turns a query's
posting spans into the filtered, retrieve_k-capped window: the exhaustive reference path, the MaxScore-style
pruned search, and the dense window for queries made only of common terms (``docs/search.md``, "Query
path and performance"). Scores are Lucene's float32 values, summed in double in query-term order.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable

import numpy as np

from shoparena.search.bm25 import lucene_idf, term_scores

Span = tuple[int, int, int, int]
"""``(term id, posting start, posting end, query count)`` of one known query term."""


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

    def __init__(self, index: Retrieval, spans: list[Span]) -> None:
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


class Retrieval:
    """Retrieval methods of :class:`~shoparena.search.engine.SearchIndex` (which sets these attributes)."""

    retrieve_k: int
    _data: np.ndarray
    _indices: np.ndarray
    _tf: np.ndarray
    _norms: np.ndarray
    _norm_inv: np.ndarray
    _doc_count: int
    _id_rank: np.ndarray
    _term_max: np.ndarray
    _n: int
    _local: threading.local
    _strategy: str
    _dense_block: int
    _spans: Callable[[str], list[Span]]

    def _span_scores(self, span: Span, pos: np.ndarray | None = None) -> np.ndarray:
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

    def _accumulate(self, spans: list[Span]) -> np.ndarray:
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

    def _reset(self, acc: np.ndarray, spans: list[Span]) -> None:
        total = sum(e - s for _, s, e, _ in spans)
        # Zeroing by index costs ~20x more per element than a sequential fill of the whole buffer.
        if total * 20 > self._n:
            acc.fill(0.0)
        else:
            for _, s, e, _ in spans:
                acc[self._indices[s:e]] = 0.0

    def _union(self, spans: list[Span]) -> np.ndarray:
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
        self, spans: list[Span], keep: Callable[[np.ndarray], np.ndarray] | None, k: int
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

    def _rival_bound(self, order: list[Span], floor: float, limit: int) -> int:
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

    def _rivals(self, order: list[Span], floor: float) -> np.ndarray:
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


__all__ = ["DENSE_BLOCK", "DENSE_WINDOW_MIN", "LOOKUP_COST", "Retrieval", "Span"]
