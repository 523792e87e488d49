"""bicrit.hierarchy.Hierarchy: structure, closure against a brute-force walk, validation."""

from __future__ import annotations

import numpy as np
import pytest

from bicrit.errors import InvalidInputError
from bicrit.hierarchy import Hierarchy


def brute_ancestors(parents, node):
    seen, stack = {node}, [node]
    while stack:
        for p in parents[stack.pop()]:
            if p not in seen:
                seen.add(p)
                stack.append(p)
    return sorted(seen)


def random_dag(rng, n, extra):
    """Node 0 the root; node i > 0 gets a parent below i plus up to ``extra`` more."""
    parents = [()]
    for i in range(1, n):
        k = 1 + rng.integers(0, extra + 1)
        parents.append(tuple(sorted(set(rng.integers(0, i, size=k).tolist()))))
    perm = rng.permutation(n)  # ids in no particular order
    inv = np.argsort(perm)
    shuffled = [tuple(int(inv[p]) for p in parents[perm[j]]) for j in range(n)]
    return [f"n{j}" for j in range(n)], shuffled


def test_tree_structure():
    #        root
    #       /    \
    #      a      b
    #     / \
    #    c   d
    h = Hierarchy.from_parent_array([-1, 0, 0, 1, 1], ["root", "a", "b", "c", "d"])
    assert h.root == 0 and h.is_tree and h.n_nodes == len(h) == 5
    assert h.children == [(1, 2), (3, 4), (), (), ()]
    assert h.leaves.tolist() == [2, 3, 4]
    assert h.depth.tolist() == [0, 1, 1, 2, 2]
    assert h.ancestors(3).tolist() == [0, 1, 3]
    assert h.closure([3, 2]).tolist() == [1, 2, 3]
    assert h.closure([3], include_root=True).tolist() == [0, 1, 3]
    assert h.closure([]).tolist() == [] and h.closure([], include_root=True).tolist() == [0]
    assert h.parent_indptr.tolist() == [0, 0, 1, 2, 3, 4]
    assert h.parent_indices.tolist() == [0, 0, 1, 1]
    assert h.parent_indptr.dtype == h.parent_indices.dtype == np.int64
    assert h.child_indptr.tolist() == [0, 2, 4, 4, 4, 4]
    assert h.child_indices.tolist() == [1, 2, 3, 4]
    assert h.index("d") == 4 and h.ids(["b", "a"]).tolist() == [2, 1]
    assert h.is_closed([1, 3]) and not h.is_closed([3])
    assert "tree, 5 nodes, 3 leaves, depth 2" in repr(h)


def test_dag_from_edges():
    h = Hierarchy.from_edges([("r", "a"), ("r", "b"), ("a", "c"), ("b", "c"), ("c", "d")])
    assert h.names == ["r", "a", "b", "c", "d"] and not h.is_tree
    assert h.parents[3] == (1, 2)
    assert h.ancestors(4).tolist() == [0, 1, 2, 3, 4]
    assert h.closure([4]).tolist() == [1, 2, 3, 4]
    assert h.depth.tolist() == [0, 1, 1, 2, 3]  # longest path from the root
    assert h == Hierarchy(h.names, h.parents) and hash(h) == hash(Hierarchy(h.names, h.parents))


@pytest.mark.parametrize("seed", range(5))
def test_against_brute_force_on_random_dags(seed):
    rng = np.random.default_rng(seed)
    names, parents = random_dag(rng, 60, extra=2)
    h = Hierarchy(names, parents)
    order = h.topological_order.tolist()
    pos = {v: i for i, v in enumerate(order)}
    assert sorted(order) == list(range(60)) and order[0] == h.root
    for v, ps in enumerate(parents):
        assert all(pos[p] < pos[v] for p in ps)
        assert h.depth[v] == (0 if not ps else 1 + max(h.depth[p] for p in ps))
        assert h.ancestors(v).tolist() == brute_ancestors(parents, v)
    sets = [rng.choice(60, size=int(rng.integers(0, 4)), replace=False) for _ in range(30)]
    batch = h.closures(sets)
    for s, got in zip(sets, batch, strict=True):
        expect = sorted({a for v in s.tolist() for a in brute_ancestors(parents, v)} - {h.root})
        assert got.tolist() == expect == h.closure(s).tolist()
    children = h.children
    for v in range(60):
        assert children[v] == tuple(sorted(c for c in range(60) if v in parents[c]))


def test_from_paths():
    h = Hierarchy.from_paths(["01/02", "01", "02", "01/02/03", "01"])
    assert h.names == ["root", "01/02", "01", "02", "01/02/03"]
    assert h.parents == [(), (2,), (0,), (0,), (1,)]


def test_cycle_names_a_node_on_it():
    with pytest.raises(InvalidInputError, match=r"cycle through node '[bcd]'.*'b' -> "):
        Hierarchy.from_edges([("r", "a"), ("a", "b"), ("b", "c"), ("c", "d"), ("d", "b")])
    with pytest.raises(InvalidInputError, match="cycle"):
        Hierarchy(["r", "a"], [(), (1,)])  # self-loop


def test_several_roots_named_and_joined():
    edges = [("a", "x"), ("b", "y"), ("c", "z")]
    with pytest.raises(InvalidInputError, match=r"found 3 nodes without parents: 'a', 'b', 'c'"):
        Hierarchy.from_edges(edges)
    h = Hierarchy.from_edges(edges, add_root=True)
    assert h.names[h.root] == "root" and h.root == 6
    assert {h.names[c] for c in h.children[h.root]} == {"a", "b", "c"}


@pytest.mark.parametrize(
    ("names", "parents", "message"),
    [
        ([], [], "at least one node"),
        (["a", "a"], [(), (0,)], "duplicate node name 'a'"),
        (["a", "b"], [(), (5,)], "parent id 5, outside 0..1"),
        (["a", "b"], [(), (0, 0)], "lists a parent twice"),
        (["a", "b"], [()], "parents has 1 entries but there are 2"),
    ],
)
def test_invalid_tables(names, parents, message):
    with pytest.raises(InvalidInputError, match=message):
        Hierarchy(names, parents)


def test_unknown_names_and_ids():
    h = Hierarchy.from_parent_array([-1, 0])
    with pytest.raises(InvalidInputError, match="unknown node name 'zz'"):
        h.index("zz")
    with pytest.raises(InvalidInputError, match=r"node id 7 outside 0\.\.1"):
        h.closure([7])
    with pytest.raises(InvalidInputError, match="unknown node name 'q' in an edge"):
        Hierarchy.from_edges([("a", "q")], names=["a", "b"])


def test_large_dag_is_fast_enough():
    rng = np.random.default_rng(0)
    names, parents = random_dag(rng, 4000, extra=1)
    h = Hierarchy(names, parents)
    out = h.closures([[int(v)] for v in rng.integers(0, 4000, size=2000)])
    assert len(out) == 2000 and h.ancestor_matrix.shape == (4000, 4000)
