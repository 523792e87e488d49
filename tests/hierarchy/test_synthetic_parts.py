"""synthetic_lshtc partition by partition (what a Dask worker generates alone): the partitions
are the one-shot set's rows, cut at any boundary (also inside a generation block), with the
whole hierarchy and feature dimension; the same call gives the same partition."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import bicrit.datasets.synthetic as synthetic
from bicrit.datasets import synthetic_lshtc, synthetic_lshtc_part
from bicrit.datasets.synthetic import part_rows
from bicrit.errors import InvalidParameterError

SMALL = dict(n_nodes=120, d=900, words_per_doc=12.0, seed=4)


def _same(part, whole, rows: np.ndarray) -> None:
    """``part`` is ``whole.subset(rows)`` (scipy's row indexing, not the generator's cut)."""
    want = whole.subset(rows)
    assert part.X.shape == want.X.shape == (len(rows), whole.n_features)
    assert part.X.dtype == want.X.dtype and part.X.indices.dtype == np.int32
    assert part.X.has_canonical_format
    assert np.array_equal(part.X.indptr, want.X.indptr)
    assert np.array_equal(part.X.indices, want.X.indices)
    assert np.array_equal(part.X.data, want.X.data)
    assert np.array_equal(part.leaf, want.leaf)
    assert all(np.array_equal(a, b) for a, b in zip(part.Y, want.Y, strict=True))
    assert part.hierarchy.get_config() == whole.hierarchy.get_config()
    assert part.splits == {}
    assert part.params["rows"] == (int(rows[0]), int(rows[-1]) + 1)


@settings(max_examples=25, deadline=None)
@given(
    n=st.integers(1, 260),
    n_parts=st.integers(1, 9),
    block=st.integers(1, 40),
    seed=st.integers(0, 3),
)
def test_partitions_are_the_one_shot_rows(n, n_parts, block, seed):
    """Any n, number of partitions and generation block: the partitions, in order, are the
    one-shot set's rows; every row in exactly one partition."""
    n_parts = min(n_parts, n)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(synthetic, "LSHTC_BLOCK", block)
        kw = {**SMALL, "n": n, "seed": seed}
        whole = synthetic_lshtc(**kw)
        bounds = [part_rows(n, i, n_parts) for i in range(n_parts)]
        assert bounds[0][0] == 0 and bounds[-1][1] == n
        assert all(a[1] == b[0] for a, b in itertools.pairwise(bounds))
        for i, (a, b) in enumerate(bounds):
            if b > a:
                _same(synthetic_lshtc_part(i, n_parts, **kw), whole, np.arange(a, b))


def test_a_partition_generated_again_is_identical():
    kw = {**SMALL, "n": 23_000}  # three blocks of 10,000: partition 1 crosses two of them
    a = synthetic_lshtc_part(1, 3, **kw)
    b = synthetic_lshtc_part(1, 3, **kw)
    assert (a.X != b.X).nnz == 0 and np.array_equal(a.X.indptr, b.X.indptr)
    assert np.array_equal(a.leaf, b.leaf)
    whole = synthetic_lshtc(**kw)
    _same(a, whole, np.arange(*part_rows(23_000, 1, 3)))
    assert sp.vstack([synthetic_lshtc_part(i, 3, **kw).X for i in range(3)]).shape == (23_000, 900)


def test_bad_partition_requests_say_which_parameter():
    with pytest.raises(InvalidParameterError, match="part must be < n_parts"):
        synthetic_lshtc_part(3, 3, **SMALL, n=10)
    with pytest.raises(InvalidParameterError, match="n_parts"):
        synthetic_lshtc_part(0, 0, **SMALL, n=10)
    with pytest.raises(InvalidParameterError, match="background"):
        synthetic_lshtc_part(0, 2, n_nodes=50, n=10, d=100, background=2.0)
