"""MULAN multi-label ARFF + XML: every dataset of ../shared/data against its README's counts."""

from __future__ import annotations

import re
from functools import cache

import numpy as np
import pytest
import scipy.sparse as sp

from bicrit.datasets import load, load_bundled, read_mulan, spec
from bicrit.errors import DataFormatError

# From each folder's README.md: split -> (instances, features, labels, cardinality, no label),
# and whether the ARFF is dense.
README = {
    "yeast": (True, {"train": (1500, 103, 14, 4.228, 0), "test": (917, 103, 14, 4.252, 0)}),
    "scene": (True, {"train": (1211, 294, 6, 1.062, 0), "test": (1196, 294, 6, 1.086, 0)}),
    "emotions": (True, {"train": (391, 72, 6, 1.813, 0), "test": (202, 72, 6, 1.975, 0)}),
    "enron": (False, {"train": (1123, 1001, 53, 3.387, 0), "test": (579, 1001, 53, 3.363, 0)}),
    "medical": (False, {"train": (333, 1449, 45, 1.255, 0), "test": (645, 1449, 45, 1.240, 0)}),
    "birds": (True, {"train": (322, 260, 19, 1.059, 143), "test": (323, 260, 19, 0.969, 151)}),
    "genbase": (True, {"train": (463, 1185, 27, 1.261, 0), "test": (199, 1185, 27, 1.231, 0)}),
    "delicious": (
        False,
        {"train": (12920, 500, 983, 19.047, 10), "test": (3185, 500, 983, 18.910, 4)},
    ),
    "tmc2007-500": (
        False,
        {"train": (21519, 500, 22, 2.226, 0), "test": (7077, 500, 22, 1.952, 0)},
    ),
    "corel5k": (False, {"train": (4500, 499, 374, 3.522, 0), "test": (500, 499, 374, 3.526, 0)}),
}
CASES = [(name, split) for name, (_, splits) in README.items() for split in splits]


@cache
def _load(root, name, split):
    return load(name, split, root=root)


@pytest.mark.parametrize(("name", "split"), CASES)
def test_counts_equal_readme(data_dir, name, split):
    dense, splits = README[name]
    n, d, k, card, empty = splits[split]
    ds = _load(data_dir, name, split)
    assert (ds.n_samples, ds.n_features, ds.n_labels) == (n, d, k)
    assert spec(name).counts[split] == n
    assert len(ds.feature_names) == d and len(set(ds.label_names)) == k
    # The README rounds to 3 decimals (enron train: 3803/1123 = 3.38646 is printed 3.387).
    assert ds.Y.sum(axis=1).mean() == pytest.approx(card, abs=6e-4)
    assert int((ds.Y.sum(axis=1) == 0).sum()) == empty
    assert ds.Y.dtype == np.int8 and set(np.unique(ds.Y).tolist()) <= {0, 1}
    if dense:
        assert isinstance(ds.X, np.ndarray) and ds.X.dtype == np.float64
        assert ds.X.flags.c_contiguous
    else:
        assert isinstance(ds.X, sp.csr_array) and ds.X.dtype == np.float64
        assert ds.X.indices.dtype == np.int32 and ds.X.has_sorted_indices
    values = ds.X.data if sp.issparse(ds.X) else ds.X
    assert np.isfinite(values).all()


def test_labels_follow_the_xml_order_and_are_mapped_by_name(data_dir):
    ds = _load(data_dir, "yeast", "train")
    # yeast/README.md: "The XML lists the labels in a different order (Class1, Class2, Class3,
    # Class6, Class4, Class10, ...)".
    assert ds.label_names[:6] == ["Class1", "Class2", "Class3", "Class6", "Class4", "Class10"]
    # Independent check: the raw ARFF value of attribute Class4 (ARFF column 103 + 3).
    lines = (data_dir / "yeast" / "yeast-train.arff").read_text().splitlines()
    rows = [ln.split(",") for ln in lines[lines.index("@data") + 1 :] if ln.strip()]
    class4 = np.array([int(r[103 + 3]) for r in rows])
    np.testing.assert_array_equal(ds.Y[:, ds.label_names.index("Class4")], class4)


@pytest.mark.parametrize(
    ("name", "split", "never_positive"),
    [  # the README statements about labels that are never positive
        ("enron", "train", ["D.D18"]),
        ("genbase", "train", ["PDOC00660", "PDOC50199"]),
        ("delicious", "test", ["TAG_addons"]),
        ("medical", "train", 7),
        ("medical", "test", 6),
        ("corel5k", "train", 3),
        ("corel5k", "test", 111),
    ],
)
def test_labels_never_positive(data_dir, name, split, never_positive):
    ds = _load(data_dir, name, split)
    zero = [ds.label_names[j] for j in np.flatnonzero(ds.Y.sum(axis=0) == 0)]
    if isinstance(never_positive, int):
        assert len(zero) == never_positive
    else:
        assert sorted(zero) == never_positive


def test_genbase_drops_the_protein_id_and_encodes_yes_no(data_dir):
    ds = _load(data_dir, "genbase", "train")
    assert ds.dropped == ("protein",)
    assert ds.feature_names[0] == "PS00010"
    assert ds.nominal["PS00010"] == ("YES", "NO")
    # The first data row of genbase-train.arff starts "Q9PQS9,NO,...": NO encodes as 0.
    assert ds.X[0, 0] == 0.0
    assert set(np.unique(ds.X).tolist()) == {0.0, 1.0}


def test_birds_quoted_names_and_nominal_features(data_dir):
    ds = _load(data_dir, "birds", "train")
    assert "Swainson's Thrush" in ds.label_names and "Brown Creeper" in ds.label_names
    assert ds.nominal["location"][:3] == ("2", "10", "1")  # coded by position, see arff.py
    assert "hasSegments" in ds.feature_names


def test_bundled_emotions_equals_the_shared_copy(data_dir):
    for split in ("train", "test"):
        a, b = load_bundled(split), _load(data_dir, "emotions", split)
        np.testing.assert_array_equal(a.X, b.X)
        np.testing.assert_array_equal(a.Y, b.Y)
        assert a.label_names == b.label_names
    assert load("emotions", "test", bundled=True).n_samples == 202


def test_bundled_needs_no_data(monkeypatch, tmp_path):
    monkeypatch.setenv("BICRIT_DATA", str(tmp_path / "absent"))
    ds = load_bundled()
    assert (ds.n_samples, ds.n_features, ds.n_labels) == (391, 72, 6)


# ---------------------------------------------------------------------------- bad input

ARFF = """@relation r
@attribute f1 numeric
@attribute 'f 2' {a,b}
@attribute L2 {0,1}
@attribute L1 {0,1}
@data
"""
XML = """<?xml version="1.0" encoding="utf-8"?>
<labels xmlns="http://mulan.sourceforge.net/labels">
<label name="L1"></label>
<label name="L2"></label>
</labels>
"""


def write(tmp_path, arff, xml=XML):
    (tmp_path / "d.arff").write_text(arff)
    (tmp_path / "d.xml").write_text(xml)
    return tmp_path / "d.arff", tmp_path / "d.xml"


def test_small_dense_file_in_xml_order(tmp_path):
    ds = read_mulan(*write(tmp_path, ARFF + "1.5,b,1,0\n-2,a,0,1\n"))
    assert ds.label_names == ["L1", "L2"] and ds.feature_names == ["f1", "f 2"]
    np.testing.assert_array_equal(ds.Y, [[0, 1], [1, 0]])
    np.testing.assert_array_equal(ds.X, [[1.5, 1.0], [-2.0, 0.0]])


def test_small_sparse_file(tmp_path):
    ds = read_mulan(*write(tmp_path, ARFF + "{0 1.5,3 1}\n{1 b, 2 1}\n"))
    assert isinstance(ds.X, sp.csr_array)
    np.testing.assert_array_equal(ds.X.toarray(), [[1.5, 0], [0, 1]])
    np.testing.assert_array_equal(ds.Y, [[1, 0], [0, 1]])


def test_unknown_label_names_the_xml_line(tmp_path):
    arff, xml = write(tmp_path, ARFF + "1,a,0,1\n", XML.replace('"L2"', '"L3"'))
    msg = re.escape(f"{xml}, line 4: label 'L3' is not an attribute of {arff}")
    with pytest.raises(DataFormatError, match=msg):
        read_mulan(arff, xml)


def test_truncated_row_names_the_line(tmp_path):
    arff, xml = write(tmp_path, ARFF + "1,a,0,1\n1,a,0\n")
    with pytest.raises(DataFormatError, match=re.escape(f"{arff}, line 8: expected 4")):
        read_mulan(arff, xml)


def test_nan_feature_is_an_error(tmp_path):
    arff, xml = write(tmp_path, ARFF + "NaN,a,0,1\n")
    with pytest.raises(DataFormatError, match=re.escape(f"{arff}, line 7: ") + ".*non-finite"):
        read_mulan(arff, xml)


def test_missing_feature_is_an_error_unless_asked(tmp_path):
    arff, xml = write(tmp_path, ARFF + "1,a,0,1\n?,a,0,1\n")
    with pytest.raises(DataFormatError, match=re.escape(f"{arff}, line 8: missing value '?'")):
        read_mulan(arff, xml)
    assert np.isnan(read_mulan(arff, xml, missing="nan").X[1, 0])


def test_missing_label_is_an_error(tmp_path):
    arff, xml = write(tmp_path, ARFF + "1,a,?,1\n")
    with pytest.raises(DataFormatError, match=re.escape(f"{arff}, line 7: label 'L2' is missing")):
        read_mulan(arff, xml, missing="nan")


def test_label_that_is_not_binary(tmp_path):
    arff, xml = write(tmp_path, ARFF.replace("L1 {0,1}", "L1 numeric") + "1,a,0,1\n")
    with pytest.raises(DataFormatError, match=re.escape(f"{arff}, line 5: label 'L1' must be")):
        read_mulan(arff, xml)


def test_malformed_xml(tmp_path):
    arff, xml = write(tmp_path, ARFF + "1,a,0,1\n", XML.replace("</labels>", ""))
    with pytest.raises(DataFormatError, match=re.escape(f"{xml}, line 6: malformed XML")):
        read_mulan(arff, xml)
