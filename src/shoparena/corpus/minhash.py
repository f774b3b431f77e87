"""MinHash signatures of shingle sets for the corpus build's two near-duplicate measures (the gate's and the
diversity report's), each distinct shingle hashed once per process.

A firehose repeats most shingles (the miners of a race call the same tools with the same arguments, and a
kept record is measured in up to four diversity groups), and hashing each one (SHA-1, datasketch's default
``sha1_hash32``) was the largest part of both measures. The values are datasketch's own: the shingles' SHA-1
hashes go through ``MinHash.update_batch`` of a copy of one seeded MinHash whose hash function passes the
precomputed hashes through, so every signature equals ``MinHash(num_perm, seed).update_batch(shingles)``
(``tests/corpus/test_minhash.py``).
"""

from __future__ import annotations

from collections.abc import Iterable

from datasketch import MinHash
from datasketch.hashfunc import sha1_hash32

#: At most this many shingle hashes are kept (then the memo starts over; a signature never depends on it).
MEMO_SIZE = 100_000


def _precomputed(value: int) -> int:
    return value


class ShingleSigner:
    """``signer(shingles)``: the MinHash of those shingles (``num_perm`` permutations drawn from ``seed``)."""

    def __init__(self, num_perm: int, seed: int = 1, memo_size: int = MEMO_SIZE) -> None:
        self._empty = MinHash(num_perm=num_perm, seed=seed, hashfunc=_precomputed)
        self._hashes: dict[str, int] = {}
        self._memo_size = memo_size

    def __call__(self, shingles: Iterable[str]) -> MinHash:
        hashes = self._hashes
        values = []
        for shingle in shingles:
            value = hashes.get(shingle)
            if value is None:
                if len(hashes) >= self._memo_size:
                    hashes.clear()
                value = hashes[shingle] = sha1_hash32(shingle.encode("utf-8"))
            values.append(value)
        signature = self._blank()
        signature.update_batch(values)
        return signature

    def _blank(self) -> MinHash:
        """A copy of the seeded empty MinHash: its attributes (the permutations drawn once, not per
        signature) and its own hash values. ``MinHash.copy`` re-parses both through ``__init__``, which cost
        more than the update itself; the values equal datasketch's (``tests/corpus/test_minhash.py``)."""
        blank = object.__new__(MinHash)
        blank.__dict__.update(self._empty.__dict__)
        blank.hashvalues = self._empty.hashvalues.copy()
        return blank


__all__ = ["MEMO_SIZE", "ShingleSigner"]
