"""BM25 with the arithmetic of Lucene 9's ``BM25Similarity`` (Pyserini 0.22.1 / Lucene 9.5), vectorised.

Every step is rounded where Lucene rounds it, so a term's score is bit-identical to Lucene's:

* idf = ln(1 + (N − df + 0.5) / (df + 0.5)) in double, rounded to float32; N = Lucene's ``docCount``
  (documents with at least one indexed term).
* avgdl = sumTotalTermFreq / docCount in double, rounded to float32.
* dl is the *lossy* document length Lucene stores in one byte per document (``SmallFloat.intToByte4``);
  the scorer decodes it (``byte4ToInt``). Lengths below 24 survive exactly; longer ones keep their 4 most
  significant bits, so they round down.
* Per norm byte, in float32: ``inv = 1 / (k1 · ((1 − b) + b · dl / avgdl))``; per posting, in float32:
  ``weight − weight / (1 + tf · inv)`` with ``weight = boost · idf`` (a query term repeated n times has
  boost n). This is Lucene's rewrite of idf · tf / (tf + k1 · (1 − b + b · dl / avgdl)).
* A document's score is the sum of its term scores in double, rounded to float32 (Lucene's disjunction
  scorers sum in double). The engine does the same.
"""

from __future__ import annotations

import numpy as np

#: Byte codes below this value store the length itself (Lucene's ``NUM_FREE_VALUES``).
NUM_FREE_VALUES = 24


def _int4_encode(values: np.ndarray) -> np.ndarray:
    """Lucene's ``longToInt4`` for non-negative int64 values: 3 mantissa bits plus a shift."""
    values = values.astype(np.int64, copy=False)
    nbits = np.zeros(values.shape, dtype=np.int64)
    nz = values > 0
    nbits[nz] = np.floor(np.log2(values[nz])).astype(np.int64) + 1
    # log2 of large integers can land one off at exact powers of two; fix it with integer checks.
    too_big = nz & ((values >> np.maximum(nbits - 1, 0)) == 0)
    nbits[too_big] -= 1
    too_small = nz & ((values >> nbits) > 0)
    nbits[too_small] += 1
    shift = np.maximum(nbits - 4, 0)
    encoded = ((values >> shift) & 0x07) | ((shift + 1) << 3)
    return np.where(nbits < 4, values, encoded)


def _int4_decode(codes: np.ndarray) -> np.ndarray:
    codes = codes.astype(np.int64, copy=False)
    bits = codes & 0x07
    shift = (codes >> 3) - 1
    return np.where(shift < 0, bits, (bits | 0x08) << np.maximum(shift, 0))


def encode_norm(lengths: np.ndarray | int) -> np.ndarray:
    """Encode document lengths into Lucene's one-byte norm (``SmallFloat.intToByte4``).

    Args:
        lengths: Non-negative token counts.

    Returns:
        uint8 codes, one per length.
    """
    arr = np.asarray(lengths, dtype=np.int64)
    if np.any(arr < 0):
        raise ValueError("document lengths must be non-negative")
    small = arr < NUM_FREE_VALUES
    big = NUM_FREE_VALUES + _int4_encode(np.where(small, 0, arr - NUM_FREE_VALUES))
    return np.where(small, arr, big).astype(np.uint8)


def decode_norm(codes: np.ndarray | int) -> np.ndarray:
    """Decode one-byte norms back to (rounded-down) lengths (``SmallFloat.byte4ToInt``)."""
    arr = np.asarray(codes, dtype=np.int64) & 0xFF
    small = arr < NUM_FREE_VALUES
    big = NUM_FREE_VALUES + _int4_decode(np.where(small, 0, arr - NUM_FREE_VALUES))
    return np.where(small, arr, big)


def lossy_length(lengths: np.ndarray | int) -> np.ndarray:
    """The length Lucene's scorer sees for a document of ``lengths`` tokens."""
    return decode_norm(encode_norm(lengths))


def lucene_idf(df: np.ndarray | int, n_docs: int) -> np.ndarray:
    """Lucene's idf per document frequency: ``(float) Math.log(1 + (N - df + 0.5) / (df + 0.5))``."""
    df = np.asarray(df, dtype=np.float64)
    # log(1 + x) with 1 + x rounded first, as Java computes it (log1p would differ in the last bit).
    return np.log(1.0 + (n_docs - df + 0.5) / (df + 0.5)).astype(np.float32)


def scalar_idf(df: int, n_docs: int) -> float:
    """bm25s's own Lucene idf for one term (the reference the vectorised version is tested against)."""
    from bm25s.scoring import _score_idf_lucene  # bm25s (and scipy.sparse) only for the reference

    return float(_score_idf_lucene(df, N=n_docs))


def lucene_avgdl(total_tokens: int, doc_count: int) -> np.float32:
    """``(float) (sumTotalTermFreq / (double) docCount)``; 1.0 for an empty field (never used then)."""
    return np.float32(total_tokens / doc_count) if doc_count else np.float32(1.0)


#: ``LENGTH_TABLE``: the decoded length of each norm byte, as float32.
LENGTH_TABLE: np.ndarray = decode_norm(np.arange(256)).astype(np.float32)


def norm_inverse_table(avgdl: np.float32, k1: float, b: float) -> np.ndarray:
    """Lucene's per-norm cache, float32: ``1 / (k1 · ((1 − b) + b · LENGTH_TABLE[i] / avgdl))``."""
    k1_, b_, one = np.float32(k1), np.float32(b), np.float32(1.0)
    return one / (k1_ * ((one - b_) + b_ * LENGTH_TABLE / np.float32(avgdl)))


def term_scores(tf: np.ndarray, norm_inv: np.ndarray, weight: np.ndarray | np.float32) -> np.ndarray:
    """Lucene's per-posting score, float32: ``weight − weight / (1 + tf · norm_inv)``.

    Args:
        tf: Term frequency per posting.
        norm_inv: The norm cache entry (:func:`norm_inverse_table`) of each posting's document.
        weight: boost · idf (float32), one value or one per posting.
    """
    weight = np.asarray(weight, dtype=np.float32)
    freq = np.asarray(tf).astype(np.float32)
    return weight - weight / (np.float32(1.0) + freq * np.asarray(norm_inv, dtype=np.float32))


__all__ = [
    "LENGTH_TABLE",
    "NUM_FREE_VALUES",
    "decode_norm",
    "encode_norm",
    "lossy_length",
    "lucene_avgdl",
    "lucene_idf",
    "norm_inverse_table",
    "scalar_idf",
    "term_scores",
]
