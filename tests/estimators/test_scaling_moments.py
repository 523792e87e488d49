"""Feature moments of parts of the data merge into those of the whole (the scaling a fit on
several machines learns), and one part's moments give exactly the local scaling."""

from __future__ import annotations

import itertools

import numpy as np
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from bicrit.estimators.scaling import FeatureMoments, learn_scale


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(2, 60),
    d=st.integers(1, 5),
    cuts=st.lists(st.integers(1, 59), max_size=4),
    seed=st.integers(0, 2**32 - 1),
    sparse=st.booleans(),
)
def test_merged_parts_equal_the_whole(n, d, cuts, seed, sparse):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * rng.uniform(0.1, 10, size=d) + rng.normal(size=d) * 5
    X[:, 0] = 3.0  # a constant column gets scale 1
    if sparse:
        X = sp.csr_array(np.where(rng.random((n, d)) < 0.5, X, 0.0))
    bounds = [0, *sorted({c for c in cuts if c < n}), n]
    parts = [FeatureMoments.of(X[a:b]) for a, b in itertools.pairwise(bounds)]
    merged = parts[0]
    for p in parts[1:]:
        merged = merged.merge(p)
    mean, scale = merged.scale()
    dense = X.toarray() if sparse else X
    if sparse:
        assert mean is None
        ref = np.abs(dense).max(axis=0)
    else:
        np.testing.assert_allclose(mean, dense.mean(axis=0), rtol=1e-10, atol=1e-10)
        ref = dense.std(axis=0)
    ref = np.where(ref > 1e-12, ref, 1.0)
    np.testing.assert_allclose(scale, ref, rtol=1e-9, atol=1e-9)


def test_one_part_is_the_local_scaling_bit_for_bit():
    rng = np.random.default_rng(0)
    for dtype in (np.float64, np.float32):
        X = (rng.normal(size=(500, 7)) * 3 + 1).astype(dtype)
        _, mean, scale = learn_scale(X)
        assert np.array_equal(mean, X.mean(axis=0))
        assert np.array_equal(scale, X.std(axis=0))
