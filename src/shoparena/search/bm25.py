"""BM25 exactly as Lucene 9's ``BM25Similarity`` computes it, vectorised with numpy.

* idf = ln(1 + (N − df + 0.5) / (df + 0.5)), N = documents with at least one indexed term.
* term score = idf · tf / (tf + k1 · (1 − b + b · dl / avgdl)) (Lucene dropped the (k1 + 1) factor in 8.0).
* dl is the *lossy* document length Lucene stores in one byte per document: ``SmallFloat.intToByte4``
  encodes it, ``byte4ToInt`` decodes it. Lengths below 24 survive exactly; longer ones keep their
  4 most significant bits, so they round down.
* avgdl = total indexed tokens / N, with exact (not lossy) lengths.
"""

from __future__ import annotations

import numpy as np
from bm25s.scoring import _score_idf_lucene, _score_tfc_lucene

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


def lucene_idf(df: np.ndarray, n_docs: int) -> np.ndarray:
    """Vectorised Lucene idf, rounded to float32 as Lucene stores it (same formula as bm25s's lucene idf)."""
    df = np.asarray(df, dtype=np.float64)
    return np.log1p((n_docs - df + 0.5) / (df + 0.5)).astype(np.float32)


def scalar_idf(df: int, n_docs: int) -> float:
    """bm25s's own Lucene idf for one term (the reference the vectorised version is tested against)."""
    return float(_score_idf_lucene(df, N=n_docs))


def term_scores(
    tf: np.ndarray, lossy_dl: np.ndarray, idf: np.ndarray, avgdl: float, k1: float, b: float
) -> np.ndarray:
    """Per-posting BM25 scores (float32) via bm25s's Lucene term-frequency component.

    Args:
        tf: Term frequency per posting.
        lossy_dl: Decoded (lossy) document length per posting.
        idf: idf of the posting's term, per posting.
        avgdl: Average exact document length.
        k1: BM25 k1.
        b: BM25 b.
    """
    tfc = _score_tfc_lucene(tf.astype(np.float64), l_d=lossy_dl.astype(np.float64), l_avg=avgdl, k1=k1, b=b)
    return (idf.astype(np.float64) * tfc).astype(np.float32)


__all__ = [
    "NUM_FREE_VALUES",
    "decode_norm",
    "encode_norm",
    "lossy_length",
    "lucene_idf",
    "scalar_idf",
    "term_scores",
]
