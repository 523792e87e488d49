"""Label conventions (root in or out), terminals, label checks and the virtual-leaf transform,
on small hierarchies and on the Clus HMC FunCat tree and GO DAG."""

from __future__ import annotations

import numpy as np
import pytest

from bicrit.errors import InvalidInputError, InvalidParameterError
from bicrit.hierarchy import (
    Hierarchy,
    add_virtual_leaves,
    check_labels,
    leaf_sums,
    power_alpha,
    terminals,
    with_root,
    without_root,
)

# root(0) → a(1) → {c(3), d(4)}; root → b(2) → e(5)
H = Hierarchy(["root", "a", "b", "c", "d", "e"], [[], [0], [0], [1], [1], [2]])


def test_root_conventions_round_trip() -> None:
    Y = [[1, 3], [], [2, 5, 1, 4]]
    withr = with_root(Y, 0)
    assert [y.tolist() for y in withr] == [[0, 1, 3], [0], [0, 1, 2, 4, 5]]
    assert [y.tolist() for y in without_root(withr, 0)] == [[1, 3], [], [1, 2, 4, 5]]


def test_terminals() -> None:
    assert terminals(H, [1, 3]).tolist() == [3]
    assert terminals(H, [0, 1, 2]).tolist() == [1, 2]
    assert terminals(H, []).tolist() == [0]
    assert terminals(H, [1, 3, 4, 2, 5]).tolist() == [3, 4, 5]


def test_check_labels_names_the_problem() -> None:
    check_labels(H, [[1, 3], [0, 2, 5], [1, 3, 4]])
    with pytest.raises(
        InvalidInputError, match=r"Y\[1\] ends at node 1 \('a'\), which is not a leaf"
    ):
        check_labels(H, [[1, 3], [1]])
    check_labels(H, [[1]], leaves=False)
    with pytest.raises(InvalidInputError, match=r"Y\[0\] is not ancestor-closed.*'a'"):
        check_labels(H, [[3]], leaves=False)
    with pytest.raises(InvalidInputError, match="2 terminal nodes"):
        check_labels(H, [[1, 3, 4]], single=True)
    with pytest.raises(InvalidInputError, match="outside"):
        check_labels(H, [[9]])


def test_virtual_leaves_on_a_small_tree() -> None:
    Y = [[1, 3], [1], [], [2, 5], [1, 2]]  # ends at a, at the root, at a and b
    vl = add_virtual_leaves(H, Y)
    h = vl.hierarchy
    assert vl.n_original == 6 and vl.virtual_parent.tolist() == [0, 1, 2]
    assert h.names[6:] == ["root/<leaf>", "a/<leaf>", "b/<leaf>"]
    assert vl.virtual_of == {0: 6, 1: 7, 2: 8}
    assert [y.tolist() for y in vl.Y] == [[1, 3], [1, 7], [6], [2, 5], [1, 2, 7, 8]]
    check_labels(h, vl.Y)  # now leaf-terminated
    assert [y.tolist() for y in vl.to_original(vl.Y)] == [list(map(int, y)) for y in map(sorted, Y)]
    # root included in the input: kept
    assert [y.tolist() for y in add_virtual_leaves(H, [[0, 1]]).Y] == [[0, 1, 6]]
    # the α constraints now normalize labels that ended at internal nodes
    alpha = power_alpha(h, 2.0)
    assert leaf_sums(h, alpha) == pytest.approx(np.ones(len(h.leaves)))
    for y in with_root(vl.Y[1:2], 0):
        assert alpha[y].sum() == pytest.approx(1.0)
    # more labels through the same transform; unknown internal terminals are refused
    assert vl.to_virtual([[2]])[0].tolist() == [2, 8]
    only_a = add_virtual_leaves(H, [[1]])
    with pytest.raises(InvalidInputError, match="no virtual leaf"):
        only_a.to_virtual([[2]])
    assert add_virtual_leaves(H, [[1]], nodes="all").virtual_parent.tolist() == [0, 1, 2]
    with pytest.raises(InvalidParameterError):
        add_virtual_leaves(H, Y, nodes="some")


def test_virtual_leaf_names_stay_unique() -> None:
    h = Hierarchy(["root", "a", "a/<leaf>", "b"], [[], [0], [1], [1]])
    vl = add_virtual_leaves(h, [[1]])
    assert vl.hierarchy.names[-1] == "a/<leaf>'"


def _load(data_dir, name):
    from bicrit.datasets import load

    try:
        return load(f"clus_hmc/{name}", "train", root=data_dir)
    except FileNotFoundError as exc:  # pragma: no cover - data missing
        pytest.skip(str(exc))


@pytest.mark.parametrize(("name", "dag"), [("cellcycle_FUN", False), ("cellcycle_GO", True)])
def test_virtual_leaves_on_clus_hmc(data_dir, name: str, dag: bool) -> None:
    ds = _load(data_dir, name)
    h = ds.hierarchy
    assert h.is_tree is not dag
    with pytest.raises(InvalidInputError, match="not a leaf"):
        check_labels(h, ds.Y)
    check_labels(h, ds.Y, leaves=False)
    vl = add_virtual_leaves(h, ds.Y)
    check_labels(vl.hierarchy, vl.Y)
    assert vl.hierarchy.n_nodes == h.n_nodes + len(vl.virtual_parent)
    back = vl.to_original(vl.Y)
    assert all(np.array_equal(a, b) for a, b in zip(back, ds.Y, strict=True))
    # structure labels include the root; the loader's do not
    assert all(int(h.root) not in y for y in ds.Y)
    assert all(y[0] == h.root for y in with_root(ds.Y[:50], h.root))
    if not dag:  # on the tree α follows in closed form; every mapped label sums to 1
        alpha = power_alpha(vl.hierarchy, 2.0)
        for y in with_root(vl.Y, vl.hierarchy.root)[:300]:
            if len(terminals(vl.hierarchy, y)) == 1:
                assert alpha[y].sum() == pytest.approx(1.0)
