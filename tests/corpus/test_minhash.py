"""Signatures of the shared shingle signer (both near-duplicate measures of the corpus build) equal
datasketch's own MinHash over the same shingles, whatever the memo holds, and never share state."""

from __future__ import annotations

import random

import numpy as np
from datasketch import MinHash

from shoparena.corpus.gates import NUM_PERM
from shoparena.corpus.minhash import ShingleSigner


def _reference(shingles: list[str], num_perm: int, seed: int = 1) -> MinHash:
    mh = MinHash(num_perm=num_perm, seed=seed)
    mh.update_batch([s.encode("utf-8") for s in shingles])
    return mh


def test_signatures_equal_datasketch_with_a_memo_that_starts_over():
    rng = random.Random(7)
    vocabulary = [f"find_product q {i} red café" for i in range(60)]
    signer = ShingleSigner(NUM_PERM, seed=1, memo_size=25)  # small: the memo starts over mid-way
    for _ in range(40):
        shingles = rng.sample(vocabulary, rng.randint(1, 30))
        got = signer(shingles)
        want = _reference(shingles, NUM_PERM)
        assert np.array_equal(got.hashvalues, want.hashvalues)
        assert got.jaccard(want) == 1.0  # same seed and scheme: comparable with datasketch's own
        assert len(signer._hashes) <= 25


def test_an_empty_set_is_the_empty_signature_and_copies_never_share_state():
    signer = ShingleSigner(16, seed=3)
    empty = signer([])
    assert np.array_equal(empty.hashvalues, MinHash(num_perm=16, seed=3).hashvalues)
    first = signer(["a b c", "b c d"])
    second = signer(["x y z"])
    assert np.array_equal(signer([]).hashvalues, empty.hashvalues)  # the seeded one stays empty
    assert first.jaccard(second) < 0.5
    assert np.array_equal(first.hashvalues, _reference(["b c d", "a b c"], 16, seed=3).hashvalues)
    seeded = empty.hashvalues.copy()
    empty.hashvalues[:] = 0  # a signature written in place: the next one starts from the seeded values still
    assert np.array_equal(signer([]).hashvalues, seeded)
    copied = second.copy()  # a whole MinHash: datasketch's own methods work on it
    assert copied.jaccard(second) == 1.0 and copied.seed == 3 and len(copied) == 16
