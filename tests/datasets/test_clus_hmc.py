"""Clus HMC ARFF: every dataset of ../shared/data/clus_hmc against its README; bad input."""

from __future__ import annotations

import re
from functools import cache

import numpy as np
import pytest

from bicrit.datasets import HierarchyDataset, column_means, load, read_clus_hmc, spec
from bicrit.errors import DataFormatError

# clus_hmc/README.md: dataset -> (DAG?, nodes, features, train, valid, test, avg labels/instance
# written in the training file).
README = {
    "cellcycle_FUN": (False, 499, 77, 1628, 848, 1281, 3.233),
    "church_FUN": (False, 499, 27, 1630, 844, 1281, 3.229),
    "derisi_FUN": (False, 499, 63, 1608, 842, 1275, 3.247),
    "eisen_FUN": (False, 461, 79, 1058, 529, 837, 3.422),
    "gasch1_FUN": (False, 499, 173, 1634, 846, 1284, 3.226),
    "gasch2_FUN": (False, 499, 52, 1639, 849, 1291, 3.223),
    "pheno_FUN": (False, 455, 69, 656, 353, 582, 3.409),
    "seq_FUN": (False, 499, 478, 1701, 879, 1339, 3.185),
    "spo_FUN": (False, 499, 80, 1600, 837, 1266, 3.238),
    "cellcycle_GO": (True, 4125, 77, 1625, 848, 1278, 4.913),
    "derisi_GO": (True, 4119, 63, 1605, 842, 1272, 4.925),
    "eisen_GO": (True, 3573, 79, 1055, 528, 835, 5.137),
    "gasch1_GO": (True, 4125, 173, 1631, 846, 1281, 4.911),
    "gasch2_GO": (True, 4131, 52, 1636, 849, 1288, 4.908),
    "pheno_GO": (True, 3127, 69, 653, 352, 581, 5.037),
    "seq_GO": (True, 4133, 478, 1692, 876, 1332, 4.933),
    "spo_GO": (True, 4119, 80, 1597, 837, 1263, 4.92),
    "Diatoms": (False, 398, 371, 2065, None, 1054, 1.0),
    "Enron_corr": (False, 56, 1001, 988, None, 660, 2.739),
    "ImCLEF07A": (False, 96, 80, 10000, None, 1006, 3.0),
    "ImCLEF07D": (False, 46, 80, 10000, None, 1006, 3.0),
}


@cache
def _load(root, name, split, impute=None):
    return load(f"clus_hmc/{name}", split, root=root, impute=impute)


@pytest.mark.parametrize("name", list(README))
def test_counts_equal_readme(data_dir, name):
    dag, nodes, features, n_train, n_valid, n_test, avg = README[name]
    expected = {"train": n_train, "valid": n_valid, "test": n_test}
    hierarchies = []
    for split, n in expected.items():
        if n is None:
            continue
        ds = _load(data_dir, name, split)
        assert isinstance(ds, HierarchyDataset)
        assert (ds.n_samples, ds.n_features, ds.n_labels) == (n, features, nodes)
        assert spec(f"clus_hmc/{name}").counts[split] == n
        assert ds.X.dtype == np.float64 and ds.X.shape == (n, features)
        h = ds.hierarchy
        assert h.is_tree is not dag and h.names[h.root] == "root" and h.root == 0
        # Every label set is ancestor-closed, sorted, without the root, and holds what the
        # file wrote.
        ind = ds.indicator()
        closed = (ind.astype(np.int32) @ h.ancestor_matrix.astype(np.int32)).toarray() > 0
        closed[:, h.root] = False
        np.testing.assert_array_equal(closed, ind.toarray() > 0)
        for y, w in zip(ds.Y, ds.written, strict=True):
            assert y.dtype == np.int64 and np.all(np.diff(y) > 0)
            assert np.isin(w, y).all()
        if split == "train":
            assert np.mean([len(w) for w in ds.written]) == pytest.approx(avg, abs=5e-4)
        hierarchies.append(h)
    assert all(h == hierarchies[0] for h in hierarchies)  # same node ids in every split
    if dag:  # "about 1,150-1,480 nodes have more than one parent"
        assert 1140 <= int((np.diff(hierarchies[0].parent_indptr) > 1).sum()) <= 1490


def test_tree_paths_and_dag_edges(data_dir):
    fun = _load(data_dir, "cellcycle_FUN", "train").hierarchy
    i = fun.index("01/01/03/01")
    assert [fun.names[p] for p in fun.parents[i]] == ["01/01/03"]
    assert fun.names[fun.parents[fun.index("01")][0]] == "root"
    assert fun.depth.max() == 6
    go = _load(data_dir, "cellcycle_GO", "train").hierarchy
    assert go.parents[go.index("GO0003674")] == (go.root,)
    assert not go.is_tree and go.depth.max() > 6


def test_labels_end_at_internal_nodes(data_dir):
    # in cellcycle_FUN two thirds of the training instances end a label at an
    # internal node.
    ds = _load(data_dir, "cellcycle_FUN", "train")
    internal = np.diff(ds.hierarchy.child_indptr) > 0
    share = np.mean([internal[w].any() for w in ds.written])
    assert 0.6 < share < 0.72


def test_missing_values_and_imputation_with_training_means(data_dir):
    train = _load(data_dir, "cellcycle_FUN", "train")
    test = _load(data_dir, "cellcycle_FUN", "test")
    assert np.isnan(train.X).any() and np.isnan(test.X).any()
    filled = _load(data_dir, "cellcycle_FUN", "test", "mean")
    assert not np.isnan(filled.X).any()
    r, c = np.argwhere(np.isnan(test.X))[0]
    assert filled.X[r, c] == pytest.approx(np.nanmean(train.X[:, c]))
    keep = ~np.isnan(test.X)
    np.testing.assert_array_equal(filled.X[keep], test.X[keep])
    np.testing.assert_allclose(column_means(train.X), np.nanmean(train.X, axis=0))
    assert not np.isnan(train.impute().X).any()


def test_nominal_features(data_dir):
    ds = _load(data_dir, "pheno_FUN", "train")
    assert len(ds.nominal) == 69
    values = next(iter(ds.nominal.values()))
    assert values == ("w", "n", "s", "r")
    assert set(np.unique(ds.X[~np.isnan(ds.X)]).tolist()) <= {0.0, 1.0, 2.0, 3.0}


# ---------------------------------------------------------------------------- bad input

TREE = """@RELATION t
@ATTRIBUTE f1 numeric
@ATTRIBUTE f2 {u,v}
@ATTRIBUTE class hierarchical 01,01/01,01/02,02,02/05
@DATA
"""
DAG = """@RELATION d
@ATTRIBUTE f1 numeric
@ATTRIBUTE class hierarchical root/A,root/B,A/C,B/C,C/D
@DATA
"""


def write(tmp_path, text):
    p = tmp_path / "h.arff"
    p.write_text(text)
    return p


def test_small_tree(tmp_path):
    ds = read_clus_hmc(write(tmp_path, TREE + "0.5,u,01/02@02\n?,v,01\n1,u,?\n"))
    h = ds.hierarchy
    assert h.names == ["root", "01", "01/01", "01/02", "02", "02/05"]
    assert [y.tolist() for y in ds.Y] == [[1, 3, 4], [1], []]
    assert [w.tolist() for w in ds.written] == [[3, 4], [1], []]
    assert np.isnan(ds.X[1, 0]) and ds.X[1, 1] == 1.0


def test_small_dag(tmp_path):
    ds = read_clus_hmc(write(tmp_path, DAG + "1,D\n2,B@A\n"))
    h = ds.hierarchy
    assert h.names == ["root", "A", "B", "C", "D"] and not h.is_tree
    assert [y.tolist() for y in ds.Y] == [[1, 2, 3, 4], [1, 2]]


def raises_at(path, line, message):
    return pytest.raises(DataFormatError, match=re.escape(f"{path}, line {line}: ") + message)


def test_cyclic_hierarchy(tmp_path):
    p = write(tmp_path, DAG.replace("C/D", "C/D,D/A") + "1,D\n")
    with raises_at(p, 3, "the hierarchy has a cycle through node '[ACD]'"):
        read_clus_hmc(p)


def test_two_roots(tmp_path):
    p = write(tmp_path, DAG.replace("root/B,", "") + "1,D\n")
    with raises_at(p, 3, "a hierarchy needs one root, found 2 nodes without parents: 'root', 'B'"):
        read_clus_hmc(p)


def test_tree_path_without_parent(tmp_path):
    p = write(tmp_path, TREE.replace("02,02/05", "02/05/07") + "1,u,01\n")
    with raises_at(p, 4, "node '02/05/07' has parent path '02/05', which is not a node"):
        read_clus_hmc(p)


def test_unknown_label(tmp_path):
    p = write(tmp_path, TREE + "1,u,01\n1,u,01@03/01\n")
    with raises_at(p, 7, "unknown class '03/01': not a node of the hierarchy declared on line 4"):
        read_clus_hmc(p)


def test_wrong_column_count(tmp_path):
    p = write(tmp_path, TREE + "1,u,01\n1,01\n")  # truncated line
    with raises_at(p, 7, "expected 3 comma-separated values, found 2"):
        read_clus_hmc(p)


def test_nan_feature(tmp_path):
    p = write(tmp_path, TREE + "nan,u,01\n")
    with raises_at(p, 6, "attribute 'f1': non-finite value 'nan'"):
        read_clus_hmc(p)


def test_dag_item_that_is_not_an_edge(tmp_path):
    p = write(tmp_path, DAG.replace("C/D", "C/D/E") + "1,D\n")
    with raises_at(p, 3, "DAG item 'C/D/E' is not an edge"):
        read_clus_hmc(p)
