"""SequenceFeaturizer: which features fire (by hand), determinism across processes, shapes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.utils import murmurhash3_32

from bicrit.datasets import SequenceDataset, SequenceFeaturizer, word_shape
from bicrit.errors import InvalidInputError, InvalidParameterError

SMALL = dict(n_features=2**10, affix_length=2, window=1)

# Written by hand from the feature list in SequenceFeaturizer's docstring.
HI_2 = [
    ["bias", "w=Hi", "lw=hi", "p1=h", "s1=i", "p2=hi", "s2=hi", "shape=Xx", "sshape=Xx",
     "title", "has_upper", "w-1=<BOS>", "w+1=2", "BOS"],
    ["bias", "w=2", "lw=2", "p1=2", "s1=2", "shape=d", "sshape=d", "digit", "has_digit",
     "w-1=hi", "w+1=<EOS>", "EOS"],
]  # fmt: skip
# The columns of those features for n_features = 2**10: MurmurHash3 (seed 0) of the UTF-8 bytes,
# absolute value mod 1024. Pinned so that a change of hashing anywhere shows up.
HI_2_COLUMNS = [
    [117, 147, 213, 333, 462, 486, 526, 545, 586, 905, 922, 927, 950, 973],
    [117, 218, 248, 348, 516, 568, 658, 663, 777, 875, 942, 1008],
]


def test_features_that_fire_by_hand():
    f = SequenceFeaturizer(**SMALL)
    assert f.token_features(["Hi", "2"]) == HI_2
    out = f.transform([["Hi", "2"]])
    for row, feats, pinned in zip(range(2), HI_2, HI_2_COLUMNS, strict=True):
        cols = out.X.indices[out.X.indptr[row] : out.X.indptr[row + 1]].tolist()
        assert cols == sorted({abs(murmurhash3_32(s, seed=0)) % 1024 for s in feats}) == pinned
    assert np.all(out.X.data == 1.0)


def test_richer_features():
    f = SequenceFeaturizer(n_features=2**12, affix_length=3, window=2, columns=("pos",))
    feats = f.token_features(["New", "York-based", "!"], {"pos": ["NNP", "JJ", "."]})
    mid = feats[1]
    assert {"p3=yor", "s3=sed", "shape=Xxxx-xxxxx", "sshape=Xx-x", "hyphen", "has_punct"} <= set(
        mid
    )
    assert {"w-1=new", "w-2=<BOS>", "w+1=!", "w+2=<EOS>", "pos=JJ", "pos-1=NNP", "pos+1=."} <= (
        set(mid)
    )
    assert {"punct", "has_punct", "EOS", "pos+1=<EOS>"} <= set(feats[2])
    assert "BOS" in feats[0] and "title" in feats[0] and "upper" not in feats[0]
    assert word_shape("McDonald's") == "XxXxxxxx'x"
    assert word_shape("McDonald's", collapse=True) == "XxXx'x"
    assert word_shape("1990s") == "ddddx"


def test_shapes_offsets_and_dtypes():
    sents = [["a", "b", "c"], ["d"], ["e", "f"]]
    out = SequenceFeaturizer(n_features=2**8).fit_transform(sents)
    assert isinstance(out.X, sp.csr_array)
    assert out.X.shape == (6, 2**8) and out.X.dtype == np.float64
    assert out.X.indices.dtype == np.int32 and out.X.has_sorted_indices
    assert out.offsets.dtype == np.int64 and out.offsets.tolist() == [0, 3, 4, 6]
    assert out.n_sentences == 3 and out.sentence(2).shape == (2, 2**8)
    assert (np.diff(out.X.indptr) > 5).all()


def test_dataset_input_uses_its_columns():
    ds = SequenceDataset(tokens=[["a", "b"]], tags=[["O", "O"]], columns={"pos": [["DT", "NN"]]})
    f = SequenceFeaturizer(n_features=2**10, columns=("pos",))
    a = f.transform(ds)
    b = f.transform(ds.tokens, ds.columns)
    assert (a.X != b.X).nnz == 0
    assert (a.X != SequenceFeaturizer(n_features=2**10).transform(ds).X).nnz > 0


_CHILD = """
import json, sys
from bicrit.datasets import SequenceFeaturizer
out = SequenceFeaturizer(n_features=2**16).transform(json.loads(sys.argv[1]))
print(json.dumps([out.X.indptr.tolist(), out.X.indices.tolist(), out.X.data.tolist()]))
"""


def test_same_columns_in_another_process():
    sents = [["Ünïcode", "Straße", "-", "42"], ["The", "U.S.", "economy"]]
    here = SequenceFeaturizer(n_features=2**16).transform(sents)
    # Python's own str hash changes with PYTHONHASHSEED; this process has another one.
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    res = subprocess.run(
        [sys.executable, "-c", _CHILD, json.dumps(sents)],
        capture_output=True, text=True, check=True, env=env,
    )  # fmt: skip
    there = json.loads(res.stdout)
    assert there == [here.X.indptr.tolist(), here.X.indices.tolist(), here.X.data.tolist()]


@pytest.mark.parametrize(
    ("sentences", "message"),
    [
        ([["a"], []], "sentence 1 is empty"),
        (["abc"], "sentence 0 is a string"),
        ([["a", ""]], "token 1 of sentence 0 is ''"),
        ([["a", 3]], "token 1 of sentence 0 is 3"),
    ],
)
def test_bad_sentences(sentences, message):
    with pytest.raises(InvalidInputError, match=message):
        SequenceFeaturizer().transform(sentences)


def test_bad_columns_and_parameters():
    f = SequenceFeaturizer(columns=("pos",))
    with pytest.raises(InvalidInputError, match="extra column 'pos' not given"):
        f.transform([["a"]])
    with pytest.raises(InvalidInputError, match="column 'pos' of sentence 0 has 2 values"):
        f.transform([["a"]], {"pos": [["X", "Y"]]})
    with pytest.raises(InvalidParameterError, match="n_features must be an integer >= 1"):
        SequenceFeaturizer(n_features=0).fit()
    with pytest.raises(InvalidParameterError, match="window"):
        SequenceFeaturizer(window=-1).transform([["a"]])


def _reference(f: SequenceFeaturizer, sentences, columns) -> sp.csr_array:
    """The matrix by definition: every token's :meth:`token_features` strings, hashed by
    scikit-learn's FeatureHasher (what ``transform`` must equal, bit for bit)."""
    from sklearn.feature_extraction import FeatureHasher

    feats = []
    for s, sent in enumerate(sentences):
        feats.extend(f.token_features(sent, {c: columns[c][s] for c in f.columns}))
    if not feats:
        return sp.csr_array((0, f.n_features))
    hasher = FeatureHasher(
        n_features=f.n_features, input_type="string", alternate_sign=False, dtype=np.float64
    )
    X = sp.csr_array(hasher.transform(feats))
    X.sum_duplicates()
    X.sort_indices()
    return X


def _assert_same(a: sp.csr_array, b: sp.csr_array) -> None:
    assert a.shape == b.shape
    np.testing.assert_array_equal(a.indptr, b.indptr)
    np.testing.assert_array_equal(a.indices, b.indices)
    np.testing.assert_array_equal(a.data, b.data)


def test_transform_is_the_hashed_token_features_on_a_corpus(data_dir):
    from bicrit import datasets

    d = datasets.load("conll2002/ned", "test", root=data_dir)
    tokens, pos = d.tokens[:400], {"pos": d.columns["pos"][:400]}
    for f in (SequenceFeaturizer(), SequenceFeaturizer(2**12, 2, 3, columns=("pos",))):
        _assert_same(f.transform(tokens, pos).X, _reference(f, tokens, pos))


@settings(max_examples=60, deadline=None)
@given(
    sentences=st.lists(
        st.lists(st.text(min_size=1, max_size=5), min_size=1, max_size=6), max_size=5
    ),
    window=st.integers(0, 3),
    affix=st.integers(0, 3),
    n_features=st.sampled_from([1, 7, 2**10, 2**31 - 1]),
)
def test_transform_is_the_hashed_token_features(sentences, window, affix, n_features):
    # any Unicode tokens, incl. ones that spell the boundary markers (e.g. "<BOS>")
    f = SequenceFeaturizer(n_features, affix, window, columns=("pos",))
    pos = {"pos": [[t[::-1] for t in s] for s in sentences]}
    _assert_same(f.transform(sentences, pos).X, _reference(f, sentences, pos))
