"""The near-duplicate gate's signatures are copies of one seeded MinHash: equal to a freshly seeded one,
and updating a copy leaves the shared one empty."""

from __future__ import annotations

import numpy as np
from datasketch import MinHash

from shoparena.corpus.gates import NUM_PERM, _empty_signature


def test_copied_signatures_equal_fresh_ones_and_never_share_state():
    shingles = [f"find_product q{i}".encode() for i in range(40)]
    fresh = MinHash(num_perm=NUM_PERM, seed=1)
    fresh.update_batch(shingles)
    copied = _empty_signature().copy()
    copied.update_batch(shingles)
    assert np.array_equal(copied.hashvalues, fresh.hashvalues)
    assert np.array_equal(_empty_signature().hashvalues, MinHash(num_perm=NUM_PERM, seed=1).hashvalues)
    other = _empty_signature().copy()
    other.update_batch([b"something else"])
    assert copied.jaccard(fresh) == 1.0 and other.jaccard(fresh) < 0.5
