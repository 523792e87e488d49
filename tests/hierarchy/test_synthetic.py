"""The synthetic hierarchical generators: determinism, sizes, label validity (ancestor-closed,
leaf-terminated), the generating rule, the fixed split; the LSHTC-like generator at a small size
and at full size (timed with peak memory in ``benches/hierarchy/bench_synthetic.py``)."""

from __future__ import annotations

import time

import numpy as np
import pytest
import scipy.sparse as sp

from bicrit.datasets import SyntheticHierarchyDataset, synthetic_hierarchy, synthetic_lshtc
from bicrit.datasets.synthetic import REPRO_SEEDS, SYNTHETIC_SIZES
from bicrit.errors import InvalidParameterError
from bicrit.hierarchy import check_labels, terminals


def _valid_labels(ds: SyntheticHierarchyDataset) -> None:
    h = ds.hierarchy
    check_labels(h, ds.Y, leaves=True, single=True)
    for y, leaf in zip(ds.Y[:2000], ds.leaf[:2000].tolist(), strict=True):
        assert np.array_equal(y, h.closure([leaf]))
        assert terminals(h, y).tolist() == [leaf]


@pytest.mark.parametrize("kind", ["balanced", "unbalanced"])
def test_sizes_split_and_validity(kind: str) -> None:
    ds = synthetic_hierarchy(kind, seed=0)
    want = SYNTHETIC_SIZES[kind]
    h = ds.hierarchy
    assert (ds.n_samples, ds.n_features) == (want["n"], want["d"])
    assert (h.n_nodes, len(h.leaves), int(h.depth.max())) == (
        want["n_nodes"],
        want["n_leaves"],
        want["depth"],
    )
    assert h.is_tree and ds.X.dtype == np.float64 and ds.X.shape == (want["n"], 1000)
    _valid_labels(ds)
    sizes = {k: len(v) for k, v in ds.splits.items()}
    assert sizes == {"train": want["n"] // 2, "valid": want["n"] // 4, "test": want["n"] // 4}
    everything = np.concatenate(list(ds.splits.values()))
    assert np.array_equal(np.sort(everything), np.arange(want["n"]))
    tr = ds.split("train")
    assert tr.n_samples == want["n"] // 2
    assert np.array_equal(tr.X, ds.X[ds.splits["train"]])
    assert np.array_equal(tr.leaf, ds.leaf[ds.splits["train"]])
    assert ds.params["kind"] == kind and ds.params["seed"] == 0
    # every leaf is used
    assert set(ds.leaf.tolist()) == set(h.leaves.tolist())


def test_unbalanced_tree_has_depth_ten_and_grows_one_side() -> None:
    ds = synthetic_hierarchy("unbalanced", n=500, d=20, seed=3)
    h = ds.hierarchy
    assert int(h.depth.max()) == 10
    internal = [v for v in range(h.n_nodes) if h.children[v]]
    assert len(internal) == 10 and all(len(h.children[v]) == 2 for v in internal)
    assert all(h.depth[v] == k for k, v in enumerate(internal))  # one internal node per level
    assert np.allclose(np.linalg.norm(ds.X, axis=1), 1.0)
    # the generating rule: the first cut whose positive side holds x
    side = ds.X @ ds.params["normals"].T >= 0
    for i in range(ds.n_samples):
        k = int(np.argmax(side[i])) if side[i].any() else 10
        assert ds.leaf[i] == (2 * k + 1 if k < 10 else 20)


def test_balanced_labels_are_the_max_potential_leaf() -> None:
    ds = synthetic_hierarchy("balanced", n=300, d=50, seed=5)
    h = ds.hierarchy
    W = ds.params["W"]
    for i in range(ds.n_samples):
        pot = [float(W[h.ancestors(int(leaf))].sum(axis=0) @ ds.X[i]) for leaf in h.leaves]
        assert ds.leaf[i] == h.leaves[int(np.argmax(pot))]
    assert h.n_nodes == 15 and len(h.leaves) == 8


@pytest.mark.parametrize("kind", ["balanced", "unbalanced"])
def test_same_seed_same_arrays(kind: str) -> None:
    a = synthetic_hierarchy(kind, n=400, d=30, seed=11)
    b = synthetic_hierarchy(kind, n=400, d=30, seed=11)
    c = synthetic_hierarchy(kind, n=400, d=30, seed=12)
    assert np.array_equal(a.X, b.X) and np.array_equal(a.leaf, b.leaf)
    assert all(np.array_equal(a.splits[k], b.splits[k]) for k in a.splits)
    assert not np.array_equal(a.X, c.X)
    assert len(REPRO_SEEDS) >= 5


def test_bad_arguments() -> None:
    with pytest.raises(InvalidParameterError, match="kind"):
        synthetic_hierarchy("tilted")
    with pytest.raises(InvalidParameterError, match="n must"):
        synthetic_hierarchy("balanced", n=0)
    with pytest.raises(InvalidParameterError, match="seed"):
        synthetic_hierarchy("balanced", seed=-1)
    with pytest.raises(InvalidParameterError, match="background"):
        synthetic_lshtc(n_nodes=50, n=10, d=100, background=2.0)
    ds = synthetic_hierarchy("balanced", n=10, d=3)
    with pytest.raises(InvalidParameterError, match="split"):
        ds.split("holdout")


def _check_lshtc(ds: SyntheticHierarchyDataset, n_nodes: int, n: int, d: int) -> None:
    X = ds.X
    assert sp.issparse(X) and X.format == "csr"
    assert X.dtype == np.float32 and X.indices.dtype == np.int32 and X.shape == (n, d)
    assert ds.hierarchy.n_nodes == n_nodes and ds.hierarchy.is_tree
    assert X.has_canonical_format
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    assert np.allclose(norms, 1.0, atol=1e-5)
    assert np.all(np.diff(X.indptr) > 0)
    leaves = set(ds.hierarchy.leaves.tolist())
    assert set(ds.leaf.tolist()) <= leaves


def test_lshtc_like_small_is_valid_and_deterministic() -> None:
    a = synthetic_lshtc(n_nodes=600, n=23_000, d=5000, seed=1)  # three blocks
    _check_lshtc(a, 600, 23_000, 5000)
    _valid_labels(a)
    b = synthetic_lshtc(n_nodes=600, n=23_000, d=5000, seed=1)
    assert (a.X != b.X).nnz == 0 and np.array_equal(a.leaf, b.leaf)
    c = synthetic_lshtc(n_nodes=600, n=3000, d=5000, seed=2)
    assert not np.array_equal(a.leaf[:3000], c.leaf)
    # the hierarchy is informative: documents of a leaf share its topic words
    topics = a.params["topics"]
    leaf = int(a.leaf[0])
    rows = a.X[np.flatnonzero(a.leaf == leaf)]
    share = np.isin(rows.indices, topics[leaf]).mean()
    assert share > 0.05


def test_lshtc_like_full_size() -> None:
    """≥ 10,000 nodes, ≥ 100,000 instances and features, float32 CSR, in seconds (peak memory
    per nnz is measured in a fresh process by ``benches/hierarchy/bench_synthetic.py``)."""
    t0 = time.perf_counter()
    ds = synthetic_lshtc()
    elapsed = time.perf_counter() - t0
    _check_lshtc(ds, 10_000, 100_000, 100_000)
    assert ds.X.nnz > 40 * 100_000
    assert elapsed < 120
