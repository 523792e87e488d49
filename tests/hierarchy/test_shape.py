"""LabelShape (what HierarchicalSVM learns from its labels beyond the hierarchy) merges over
parts of the data to the statistics of the whole, for any split (what a fit on several machines
relies on), and a fit given the whole's shape on one part builds the whole's label space."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from bicrit import HierarchicalSVM
from bicrit.hierarchy import Hierarchy
from bicrit.hierarchy.shape import LabelShape


@st.composite
def labelled_tree(draw):
    """A random tree (node i > 0 under a lower node) and ancestor-closed labels on it, each
    the closure of one to three random nodes."""
    n = draw(st.integers(2, 12))
    parents = [()] + [(draw(st.integers(0, i - 1)),) for i in range(1, n)]
    h = Hierarchy([f"n{i}" for i in range(n)], parents, root=0)
    m = draw(st.integers(1, 15))
    Y = []
    for _ in range(m):
        ends = draw(st.lists(st.integers(1, n - 1), min_size=1, max_size=3))
        Y.append(h.closure(ends))
    cuts = sorted(draw(st.lists(st.integers(0, m), max_size=3)))
    return h, Y, cuts


@settings(max_examples=60, deadline=None)
@given(labelled_tree())
def test_merged_parts_equal_the_whole(case):
    h, Y, cuts = case
    bounds = [0, *cuts, len(Y)]
    parts = [LabelShape.of(h, Y[a:b]) for a, b in itertools.pairwise(bounds)]
    merged = parts[0]
    for p in parts[1:]:
        merged = merged.merge(p)
    whole = LabelShape.of(h, Y)
    assert merged.n == whole.n == len(Y)
    np.testing.assert_array_equal(merged.counts, whole.counts)
    np.testing.assert_array_equal(merged.ends, whole.ends)
    assert merged.multi == whole.multi
    # brute force: a node is counted once per label holding it; ends are internal terminals
    for v in range(h.n_nodes):
        held = sum(v in set(y.tolist()) or v == h.root for y in Y)
        assert whole.counts[v] == held
    internal = {v for v in range(h.n_nodes) if h.children[v]}
    ends = set()
    for y in Y:
        s = set(y.tolist())
        ends |= {v for v in s if v in internal and not any(c in s for c in h.children[v])}
    assert set(whole.internal_terminals) == ends


def test_one_part_with_the_whole_shape_builds_the_whole_label_space():
    """Prepared with the whole data's shape, one part gets the whole's virtual leaves (and so
    its node count), which it would not from its own labels."""
    h = Hierarchy(["r", "a", "b", "a1", "a2", "b1", "b2"], [(), (0,), (0,), (1,), (1,), (2,), (2,)])
    rng = np.random.default_rng(0)
    X = rng.normal(size=(6, 3))
    Y = [
        h.closure([3]),
        h.closure([1]),
        h.closure([5]),
        h.closure([2]),
        h.closure([4]),
        h.closure([6]),
    ]
    est = HierarchicalSVM(h, model="hsvm", max_epochs=1)
    whole = LabelShape.of(h, Y)
    est._prepare_fit(X[:3], Y[:3])
    n_alone = est.hierarchy_.n_nodes
    est._prepare_fit(X[:3], Y[:3], shared={"hierarchy_labels": whole})
    assert n_alone == h.n_nodes + 1  # only 'a' ends a label among the first three
    assert est.hierarchy_.n_nodes == h.n_nodes + 2  # 'a' and 'b' end labels in the whole
