"""Synthetic hierarchical datasets (thesis hierarchical chapter, §"Synthetic Dataset", table
``syn``; docs/architecture.md, Hierarchies) and an LSHTC-like generator for the scale benchmark.

:func:`synthetic_hierarchy` — the thesis's two sets, seeded and deterministic:

* ``"balanced"`` — a complete binary tree; a weight vector ``W_n ~ N(0, I_d)`` per node and
  instances ``x_i ~ N(0, I_d)``; each instance is labelled with the leaf of maximum potential
  ``Σ_{n ∈ Ā(l)} W_n·x_i``.
* ``"unbalanced"`` — instances ``x_i ~ N(0, I_d)`` normalized to unit norm; the space is cut by a
  random hyperplane (through the origin, Gaussian normal) into two child regions, one child is
  cut again, and so on down one side to depth 10 (a binary tree growing in one direction); each
  instance is labelled with the leaf region it falls in.

**Sizes fixed here** (the thesis's text and table disagree): the text says a "complete balanced
tree with depth 4" of ``2^3 − 1`` node weights and N = 15,000; the table says 15 nodes, 8 leaves,
N = 8K. We follow the table: **balanced = 15 nodes (root + 2 + 4 + 8), 8 leaves, depth 3 below
the root (4 levels counting the root), N = 8,000**. For the unbalanced set the table's 19 nodes
and 11 leaves are inconsistent with each other for a one-sided binary tree (L leaves need
2L − 1 nodes); we follow the text, "until the depth of the binary tree reaches 10": **10 cuts,
21 nodes, 11 leaves, depth 10 (``Hierarchy.depth`` of the deepest leaves), N = 10,000**.
d = 1,000 for both.

**Split fixed here** (the thesis tunes on a hold-out set, then retrains on all training data):
a seeded permutation, **50 % train / 25 % validation / 25 % test** — balanced 4,000 / 2,000 /
2,000, unbalanced 5,000 / 2,500 / 2,500 (``dataset.splits``; ``dataset.split("train")``). The
reproduction runs seeds :data:`REPRO_SEEDS` (data and split both from the seed).

:func:`synthetic_lshtc` — a large, sparse, LSHTC-like problem for the scale benchmark: a random
tree of ≥ 10,000 nodes with skewed branching, Zipf-distributed leaf frequencies, and float32
CSR documents whose words come from a log-uniform background vocabulary and from "topic" words
of the nodes on the label's path (so the hierarchy is informative). The CSR is built chunk by
chunk without dense intermediates: peak memory is proportional to nnz.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import scipy.sparse as sp

from bicrit.datasets.clus_hmc import HierarchyDataset
from bicrit.errors import InvalidParameterError
from bicrit.hierarchy import Hierarchy

__all__ = [
    "REPRO_SEEDS",
    "SYNTHETIC_SIZES",
    "SyntheticHierarchyDataset",
    "part_rows",
    "synthetic_hierarchy",
    "synthetic_lshtc",
    "synthetic_lshtc_part",
    "synthetic_lshtc_parts",
]

SYNTHETIC_SIZES: dict[str, dict[str, int]] = {
    "balanced": {"n": 8000, "d": 1000, "depth": 3, "n_nodes": 15, "n_leaves": 8},
    "unbalanced": {"n": 10000, "d": 1000, "depth": 10, "n_nodes": 21, "n_leaves": 11},
}
"""The sizes fixed for the reproduction (see the module docstring)."""

SPLIT_FRACTIONS = (0.5, 0.25, 0.25)
"""Train / validation / test fractions."""

LSHTC_BLOCK = 10_000
"""Documents per block of :func:`synthetic_lshtc` (one random stream and one set of temporaries
per block)."""

REPRO_SEEDS = (0, 1, 2, 3, 4)
"""Seeds of the synthetic-table reproduction (mean ± spread over these)."""


@dataclass(frozen=True)
class SyntheticHierarchyDataset(HierarchyDataset):
    """A :class:`~bicrit.datasets.HierarchyDataset` with the generating parameters.

    ``Y[i]`` is, as for the Clus HMC loader, the sorted ancestor-closed node set of instance
    ``i`` without the root (add it with :func:`bicrit.hierarchy.with_root` for the ``hierarchy``
    structure). ``X`` is dense float64 for the thesis's sets and a float32 ``scipy.sparse``
    CSR array for :func:`synthetic_lshtc`.
    """

    leaf: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    """Per instance, its leaf (the terminal node of ``Y[i]``)."""
    splits: dict[str, np.ndarray] = field(default_factory=dict)
    """Instance indices of the fixed split (``train``, ``valid``, ``test``)."""
    params: dict[str, Any] = field(default_factory=dict)
    """The generating parameters (kind, sizes, seed, and the random weights or hyperplanes)."""

    def split(self, name: str) -> SyntheticHierarchyDataset:
        """The instances of split ``name`` (``train``, ``valid``, ``test``), as a dataset."""
        if name not in self.splits:
            raise InvalidParameterError(f"split must be one of {sorted(self.splits)}, got {name!r}")
        part = self.subset(self.splits[name])
        assert isinstance(part, SyntheticHierarchyDataset)  # subset keeps the class
        return part

    def __repr__(self) -> str:
        kind = self.params.get("kind", "synthetic")
        return (
            f"SyntheticHierarchyDataset({kind}, {self.n_samples} instances, "
            f"{self.n_features} features, {self.hierarchy.n_nodes} nodes, "
            f"{len(self.hierarchy.leaves)} leaves)"
        )


def _check_int(name: str, value: Any, low: int) -> int:
    try:
        v = int(value)
    except (TypeError, ValueError):
        raise InvalidParameterError(f"{name} must be an integer, got {value!r}") from None
    if v != value or v < low:
        raise InvalidParameterError(f"{name} must be an integer ≥ {low}, got {value!r}")
    return v


def _split(n: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    perm = rng.permutation(n)
    n_train = round(SPLIT_FRACTIONS[0] * n)
    n_valid = round(SPLIT_FRACTIONS[1] * n)
    return {
        "train": np.sort(perm[:n_train]),
        "valid": np.sort(perm[n_train : n_train + n_valid]),
        "test": np.sort(perm[n_train + n_valid :]),
    }


def _paths(h: Hierarchy) -> list[np.ndarray]:
    """Per node, its ancestor-closed set without the root (read-only arrays, shared)."""
    out = []
    for v in range(h.n_nodes):
        a = h.ancestors(v)
        a = a[a != h.root]
        a.setflags(write=False)
        out.append(a)
    return out


def _balanced_tree(depth: int) -> Hierarchy:
    n = 2 ** (depth + 1) - 1
    names = ["root"] + [f"n{v}" for v in range(1, n)]
    parents: list[tuple[int, ...]] = [()] + [((v - 1) // 2,) for v in range(1, n)]
    return Hierarchy(names, parents, root=0)


def _unbalanced_tree(depth: int) -> Hierarchy:
    # root 0; the k-th cut (k = 1..depth) splits node 2k − 2 into the leaf 2k − 1 (positive side)
    # and 2k (negative side, cut again; a leaf after the last cut).
    names = ["root"]
    parents: list[tuple[int, ...]] = [()]
    for k in range(1, depth + 1):
        names += [f"cut{k}+", f"cut{k}-"]
        parents += [(2 * k - 2,), (2 * k - 2,)]
    return Hierarchy(names, parents, root=0)


def synthetic_hierarchy(
    kind: Literal["balanced", "unbalanced"],
    *,
    n: int | None = None,
    d: int = 1000,
    seed: int = 0,
    depth: int | None = None,
) -> SyntheticHierarchyDataset:
    """One of the thesis's synthetic hierarchical datasets (see the module docstring).

    Parameters
    ----------
    kind:
        ``"balanced"`` or ``"unbalanced"``.
    n:
        Number of instances; default 8,000 (balanced) / 10,000 (unbalanced).
    d:
        Feature dimension (1,000 in the thesis).
    seed:
        Seeds everything (weights or hyperplanes, instances, split): the same arguments give
        identical arrays.
    depth:
        Depth below the root: 3 (balanced, 15 nodes) / 10 (unbalanced, 21 nodes) by default.
    """
    if kind not in SYNTHETIC_SIZES:
        raise InvalidParameterError(f"kind must be 'balanced' or 'unbalanced', got {kind!r}")
    sizes = SYNTHETIC_SIZES[kind]
    n = sizes["n"] if n is None else _check_int("n", n, 1)
    d = _check_int("d", d, 1)
    depth = sizes["depth"] if depth is None else _check_int("depth", depth, 1)
    seed = _check_int("seed", seed, 0)
    rng = np.random.default_rng([seed, 0 if kind == "balanced" else 1])
    if kind == "balanced":
        h = _balanced_tree(depth)
        W = rng.standard_normal((h.n_nodes, d))
        X = rng.standard_normal((n, d))
        leaves = h.leaves
        # potential of leaf l: Σ_{n ∈ Ā(l)} W_n·x = (A W x) with A the leaf-ancestor indicator
        A = h.ancestor_matrix[leaves].astype(np.float64)
        potentials = np.asarray(A @ (W @ X.T)).T  # (n, |L|)
        leaf = leaves[np.argmax(potentials, axis=1)]
        gen = {"W": W}
    else:
        h = _unbalanced_tree(depth)
        X = rng.standard_normal((n, d))
        X /= np.linalg.norm(X, axis=1, keepdims=True)
        normals = rng.standard_normal((depth, d))
        side = (X @ normals.T) >= 0.0  # (n, depth): positive side of cut k
        first = np.where(side.any(axis=1), side.argmax(axis=1), depth)  # first positive cut
        leaf = np.where(first < depth, 2 * first + 1, 2 * depth).astype(np.int64)
        gen = {"normals": normals}
    paths = _paths(h)
    Y = [paths[v] for v in leaf.tolist()]
    splits = _split(n, np.random.default_rng([seed, 2]))
    params: dict[str, Any] = {"kind": kind, "n": n, "d": d, "depth": depth, "seed": seed, **gen}
    return SyntheticHierarchyDataset(
        X=X,
        Y=Y,
        hierarchy=h,
        feature_names=[f"x{j}" for j in range(d)],
        written=[np.array([v], dtype=np.int64) for v in leaf.tolist()],
        leaf=leaf.astype(np.int64),
        splits=splits,
        params=params,
    )


# ---------------------------------------------------------------------------- LSHTC-like


def _random_tree(n_nodes: int, max_depth: int, rng: np.random.Generator) -> Hierarchy:
    """A tree with skewed (Zipf-like) branching: nodes are expanded breadth-first, each with a
    number of children drawn from a heavy-tailed law, until ``n_nodes`` exist."""
    parents: list[tuple[int, ...]] = [()]
    depth = [0]
    frontier = [0]
    head = 0
    while len(parents) < n_nodes:
        if head == len(frontier):  # everything expanded at max depth: restart from the top
            frontier = [v for v in range(len(parents)) if depth[v] < max_depth]
            head = 0
        v = frontier[head]
        head += 1
        if depth[v] >= max_depth:
            continue
        k = int(min(2 + rng.zipf(1.6), 60))
        for _ in range(min(k, n_nodes - len(parents))):
            parents.append((v,))
            depth.append(depth[v] + 1)
            frontier.append(len(parents) - 1)
    names = ["root"] + [f"c{v}" for v in range(1, n_nodes)]
    return Hierarchy(names, parents, root=0)


@dataclass(frozen=True)
class _LshtcShared:
    """What every row of one :func:`synthetic_lshtc` set shares: the hierarchy, each document's
    leaf (drawn for all ``n`` at once: the topic words are drawn after them from the same
    stream), the nodes' topic words and the paths as a padded table."""

    hierarchy: Hierarchy
    leaf: np.ndarray
    topics: np.ndarray
    paths: list[np.ndarray]
    table: np.ndarray
    plen: np.ndarray
    params: dict[str, Any]


def _lshtc_shared(
    n_nodes: int,
    n: int,
    d: int,
    words_per_doc: float,
    topic_words: int,
    background: float,
    max_depth: int,
    seed: int,
) -> _LshtcShared:
    n_nodes = _check_int("n_nodes", n_nodes, 2)
    n = _check_int("n", n, 1)
    d = _check_int("d", d, 2)
    topic_words = _check_int("topic_words", topic_words, 1)
    max_depth = _check_int("max_depth", max_depth, 1)
    seed = _check_int("seed", seed, 0)
    if d > np.iinfo(np.int32).max:
        raise InvalidParameterError(f"d must fit int32 indices, got {d}")
    if not (0.0 <= background <= 1.0):
        raise InvalidParameterError(f"background must be in [0, 1], got {background}")
    if not (words_per_doc > 0):
        raise InvalidParameterError(f"words_per_doc must be > 0, got {words_per_doc}")
    rng = np.random.default_rng([seed, 3])
    h = _random_tree(n_nodes, max_depth, rng)
    leaves = h.leaves
    # label frequencies: Zipf over a random order of the leaves (a long tail)
    freq = 1.0 / np.arange(1, len(leaves) + 1)
    freq = freq[rng.permutation(len(leaves))]
    leaf = leaves[rng.choice(len(leaves), size=n, p=freq / freq.sum())].astype(np.int64)
    # per-node topic words; per-leaf paths (root excluded) as a padded table
    topics = rng.integers(0, d, size=(h.n_nodes, topic_words), dtype=np.int64)
    paths = _paths(h)
    width = max(len(p) for p in paths)
    table = np.zeros((h.n_nodes, width), dtype=np.int64)
    plen = np.zeros(h.n_nodes, dtype=np.int64)
    for v, p in enumerate(paths):
        table[v, : len(p)] = p
        plen[v] = len(p)
    params = {
        "kind": "lshtc",
        "n_nodes": h.n_nodes,
        "n": n,
        "d": d,
        "words_per_doc": words_per_doc,
        "topic_words": topic_words,
        "background": background,
        "max_depth": max_depth,
        "seed": seed,
        "topics": topics,
    }
    return _LshtcShared(h, leaf, topics, paths, table, plen, params)


def _lshtc_block(shared: _LshtcShared, block: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows ``block·B … (block+1)·B`` (B = :data:`LSHTC_BLOCK`) as (row lengths, column
    indices, values), from the block's own seeded stream."""
    p = shared.params
    n, d, seed = p["n"], p["d"], p["seed"]
    start = block * LSHTC_BLOCK
    stop = min(n, start + LSHTC_BLOCK)
    rows = stop - start
    doc_rng = np.random.default_rng([seed, 4, block])
    counts = np.maximum(doc_rng.poisson(p["words_per_doc"], size=rows), 1)
    row_of = np.repeat(np.arange(rows, dtype=np.int64), counts)
    t = len(row_of)
    words = np.empty(t, dtype=np.int64)
    bg = doc_rng.random(t) < p["background"]
    nb = int(bg.sum())
    words[bg] = np.minimum(np.exp(doc_rng.random(nb) * np.log(d)).astype(np.int64) - 1, d - 1)
    lf = shared.leaf[start:stop][row_of[~bg]]
    pick = (doc_rng.random(t - nb) * shared.plen[lf]).astype(np.int64)
    node = shared.table[lf, pick]
    words[~bg] = shared.topics[node, doc_rng.integers(0, p["topic_words"], size=t - nb)]
    del bg, lf, pick, node
    key = row_of * d + words
    del row_of, words
    key, cnt = np.unique(key, return_counts=True)
    r = key // d
    col = (key - r * d).astype(np.int32)
    del key
    val = np.log1p(cnt).astype(np.float32)
    del cnt
    sq = np.bincount(r, weights=val.astype(np.float64) ** 2, minlength=rows)
    val /= np.sqrt(sq[r]).astype(np.float32)
    return np.bincount(r, minlength=rows), col, val


def _lshtc_rows(shared: _LshtcShared, start: int, stop: int) -> sp.csr_array:
    """Rows ``start … stop`` of the set as a float32 CSR array: the blocks that hold them are
    generated (each from its own stream) and cut to the range."""
    n_rows = stop - start
    indptr = np.zeros(n_rows + 1, dtype=np.int64)
    idx_parts: list[np.ndarray] = []
    val_parts: list[np.ndarray] = []
    for block in range(start // LSHTC_BLOCK, -(-stop // LSHTC_BLOCK)):
        lengths, col, val = _lshtc_block(shared, block)
        b0 = block * LSHTC_BLOCK
        lo, hi = max(start, b0) - b0, min(stop, b0 + len(lengths)) - b0
        ends = np.cumsum(lengths)
        first = int(ends[lo - 1]) if lo else 0
        idx_parts.append(col[first : int(ends[hi - 1])])
        val_parts.append(val[first : int(ends[hi - 1])])
        at = b0 + lo - start
        indptr[at + 1 : at + 1 + hi - lo] = indptr[at] + np.cumsum(lengths[lo:hi])
        del lengths, col, val, ends
    indices = np.concatenate(idx_parts) if idx_parts else np.zeros(0, dtype=np.int32)
    del idx_parts
    data = np.concatenate(val_parts) if val_parts else np.zeros(0, dtype=np.float32)
    del val_parts
    if indptr[-1] <= np.iinfo(np.int32).max:  # int32 indices (scipy keeps one index dtype)
        indptr = indptr.astype(np.int32)
    return sp.csr_array((data, indices, indptr), shape=(n_rows, shared.params["d"]))


def synthetic_lshtc(
    *,
    n_nodes: int = 10_000,
    n: int = 100_000,
    d: int = 100_000,
    words_per_doc: float = 60.0,
    topic_words: int = 25,
    background: float = 0.5,
    max_depth: int = 6,
    seed: int = 0,
) -> SyntheticHierarchyDataset:
    """An LSHTC-like single-label problem for the scale benchmark (see the module docstring).

    Each document draws Poisson(``words_per_doc``) word tokens: with probability
    ``background`` from a log-uniform vocabulary over all ``d`` features, otherwise from the
    ``topic_words`` words of a node drawn uniformly from its label's path (root excluded).
    Features are ``log(1 + count)``, rows L2-normalized, stored as a float32 CSR array with
    int32 indices; instances are built in blocks of :data:`LSHTC_BLOCK` rows, each from its own
    seeded stream, so no array larger than a block's tokens exists besides the output.
    :func:`synthetic_lshtc_part` generates a range of its rows alone (on a Dask worker:
    :func:`synthetic_lshtc_parts`).
    """
    shared = _lshtc_shared(n_nodes, n, d, words_per_doc, topic_words, background, max_depth, seed)
    X = _lshtc_rows(shared, 0, shared.params["n"])
    return SyntheticHierarchyDataset(
        X=X,
        Y=[shared.paths[v] for v in shared.leaf.tolist()],
        hierarchy=shared.hierarchy,
        leaf=shared.leaf,
        splits=_split(shared.params["n"], np.random.default_rng([shared.params["seed"], 5])),
        params=shared.params,
    )


def part_rows(n: int, part: int, n_parts: int) -> tuple[int, int]:
    """The rows ``(start, stop)`` of partition ``part`` of ``n_parts`` of ``n`` rows: the
    partitions are consecutive and their sizes differ by at most one."""
    n = _check_int("n", n, 1)
    n_parts = _check_int("n_parts", n_parts, 1)
    part = _check_int("part", part, 0)
    if part >= n_parts:
        raise InvalidParameterError(f"part must be < n_parts = {n_parts}, got {part}")
    return n * part // n_parts, n * (part + 1) // n_parts


def synthetic_lshtc_part(
    part: int,
    n_parts: int,
    *,
    n_nodes: int = 10_000,
    n: int = 100_000,
    d: int = 100_000,
    words_per_doc: float = 60.0,
    topic_words: int = 25,
    background: float = 0.5,
    max_depth: int = 6,
    seed: int = 0,
) -> SyntheticHierarchyDataset:
    """Partition ``part`` of ``n_parts`` of :func:`synthetic_lshtc` with the same parameters,
    generated alone: the rows :func:`part_rows` gives, equal to ``synthetic_lshtc(...)``'s
    ``subset`` of them (same ``X`` rows, ``Y``, ``leaf``, the whole ``hierarchy`` and
    ``d`` features; ``splits`` empty, as ``subset`` leaves them; ``params["rows"]`` says which).
    Deterministic: the same call gives the same partition in any process, so a partition lost
    with its Dask worker is generated again identically. Memory: the partition's rows, the
    blocks of :data:`LSHTC_BLOCK` rows that hold them, and the labels of all ``n`` documents
    (8 bytes each; the topic words are drawn after them from one stream)."""
    start, stop = part_rows(n, part, n_parts)
    shared = _lshtc_shared(n_nodes, n, d, words_per_doc, topic_words, background, max_depth, seed)
    leaf = shared.leaf[start:stop].copy()
    return SyntheticHierarchyDataset(
        X=_lshtc_rows(shared, start, stop),
        Y=[shared.paths[v] for v in leaf.tolist()],
        hierarchy=shared.hierarchy,
        leaf=leaf,
        splits={},
        params={**shared.params, "rows": (start, stop)},
    )


def synthetic_lshtc_parts(n_parts: int, **params: Any) -> list[Any]:
    """The ``n_parts`` partitions of ``synthetic_lshtc(**params)`` as ``dask.delayed`` calls of
    :func:`synthetic_lshtc_part`, for :func:`bicrit.dask.fit`: each is generated on the worker
    that keeps it, the client holds only the calls (a few hundred bytes each), and the scheduler
    can generate a lost one again. Needs the ``dask`` extra."""
    from dask.delayed import delayed

    n_parts = _check_int("n_parts", n_parts, 1)
    part_rows(int(params.get("n", 100_000)), 0, n_parts)  # bad sizes fail here, not on a worker
    return [delayed(synthetic_lshtc_part, pure=True)(i, n_parts, **params) for i in range(n_parts)]
