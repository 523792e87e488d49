"""Tree inference of the multilabel structure (the exact max-sum dynamic program over a forest,
used by ``edges="auto"`` beyond 16 labels) equals brute-force enumeration of all 2^K labels,
scored by an independent numpy reference of the feature layout; ``edges="auto"`` picks the full
graph up to 16 labels and the Chow–Liu tree beyond, and says why."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bicrit
from bicrit.errors import InvalidInputError, UnsupportedQueryError
from tests.structures.brute import assert_matches
from tests.structures.multilabel_ref import all_labels, brute_force, scores


def random_forest(K: int, rng: np.random.Generator) -> list[tuple[int, int]]:
    """A random spanning tree (each node after the first hangs under an earlier one, in a
    shuffled order), with some edges dropped: a forest, edges in either orientation."""
    perm = rng.permutation(K)
    edges = []
    for a in range(1, K):
        b = int(rng.integers(0, a))
        if rng.random() < 0.85:
            i, j = int(perm[a]), int(perm[b])
            edges.append((i, j) if rng.random() < 0.5 else (j, i))
    return edges


@st.composite
def problems(draw: st.DrawFn) -> dict:
    K = draw(st.integers(1, 9))
    d = draw(st.integers(1, 3))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    s = bicrit.structure(
        "multilabel", edges=random_forest(K, rng), inference="tree", n_labels=K, n_features=d
    )
    # integer weights make exact ties frequent
    w = rng.integers(-2, 3, size=s.size_joint_feature).astype(float)
    if draw(st.booleans()):
        w = rng.normal(size=s.size_joint_feature)
    x = rng.integers(-2, 3, size=d).astype(float)
    y_true = rng.integers(0, 2, size=K)
    lam = draw(st.sampled_from([0.0, 0.5, 1.0, 2.0, math.inf]))
    coef_size = draw(st.sampled_from([0.0, -0.5, -1.0]))
    return dict(s=s, w=w, x=x, y_true=y_true, lam=lam, coef_size=coef_size)


@settings(max_examples=600, deadline=None)
@given(problems())
def test_tree_oracle_equals_brute_force(p: dict) -> None:
    s = p["s"]
    assert s.inference_ == "tree"
    if math.isinf(p["lam"]):  # λ = ∞: largest loss, ties by largest margin
        coef, margin_coef, tiebreak = {"loss": 1.0}, 0.0, (1.0, {})
    elif p["lam"] == 0.0:  # λ = 0: largest margin, then loss
        coef, margin_coef, tiebreak = {}, 1.0, (0.0, {"loss": 1.0})
    else:
        coef = {"loss": p["lam"], "size": p["coef_size"]}
        margin_coef, tiebreak = 1.0, None
    found = s.oracle(
        p["w"], p["x"], p["y_true"], coef, margin_coef=margin_coef, tiebreak=tiebreak, k=1
    )
    expected = brute_force(
        p["w"],
        p["x"],
        p["y_true"],
        s.edges_,
        coef,
        margin_coef=margin_coef,
        tiebreak=tiebreak,
        ban=[],
        cone=None,
    )
    assert_matches(found, expected, 1, coef, margin_coef, tiebreak)
    (a,) = found
    m = scores(p["w"], p["x"], np.vstack([a.label, p["y_true"]]), s.edges_)
    assert a.margin == pytest.approx(m[0] - m[1], abs=1e-9)
    assert a.terms == s.terms(a.label, p["y_true"])


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 9), st.integers(0, 2**32 - 1))
def test_tree_predict_is_the_argmax(K: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    edges = random_forest(K, rng)
    s = bicrit.structure("multilabel", edges=edges, inference="tree", n_labels=K, n_features=2)
    w = rng.normal(size=s.size_joint_feature)
    x = rng.normal(size=2)
    all_scores = scores(w, x, all_labels(K), s.edges_)
    got = s.predict_one(w, x)
    assert scores(w, x, got[None, :], s.edges_)[0] == pytest.approx(all_scores.max(), abs=1e-9)


def test_tree_inference_needs_a_forest_and_plain_queries() -> None:
    with pytest.raises(InvalidInputError, match="cycle"):
        bicrit.structure(
            "multilabel", edges=[(0, 1), (1, 2), (0, 2)], inference="tree", n_labels=3, n_features=1
        )
    s = bicrit.structure("multilabel", edges="chain", inference="tree", n_labels=3, n_features=1)
    w = np.zeros(s.size_joint_feature)
    with pytest.raises(UnsupportedQueryError, match="tree inference"):
        s.oracle(w, np.ones(1), np.array([0, 1, 0]), {"loss": 1.0}, k=2)


def test_auto_edges_choose_by_label_count() -> None:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    for K, kind, inference in [(5, "full", "exact"), (16, "full", "exact"), (20, "tree", "tree")]:
        Y = (rng.random((60, K)) < 0.3).astype(int)
        Y[:, 1] = Y[:, 0]  # a dependent pair the tree must link
        s = bicrit.structure("multilabel").initialize(X, Y)
        assert (s.edges_kind_, s.inference_) == (kind, inference)
        assert len(s.edges_) == (K * (K - 1) // 2 if kind == "full" else K - 1)
        assert f"{K} labels" in s.edges_reason_ and s.history_labels()["edges"] == s.edges_reason_
        if kind == "tree":
            assert [0, 1] in s.edges_.tolist()
            # the saved form rebuilds the same graph without the training labels
            again = bicrit.structure("multilabel", **s.get_config())
            assert again.inference_ == "tree" and np.array_equal(again.edges_, s.edges_)
    # a forest beyond 16 labels gets the tree DP, any other graph the LP relaxation
    chain = bicrit.structure("multilabel", edges="chain", n_labels=17, n_features=1)
    full = bicrit.structure("multilabel", edges="full", n_labels=17, n_features=1)
    assert (chain.inference_, full.inference_) == ("tree", "relaxed")


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(1, 40),
    k=st.integers(2, 9),
    cut=st.integers(0, 40),
    seed=st.integers(0, 2**32 - 1),
)
def test_label_counts_of_parts_merge_into_the_whole_and_give_its_tree(n, k, cut, seed):
    from bicrit.structures.multilabel import LabelCounts

    rng = np.random.default_rng(seed)
    Y = (rng.random((n, k)) < rng.uniform(0.1, 0.9, size=k)).astype(np.int64)
    whole = LabelCounts.of(Y)
    cut = min(cut, n)
    parts = LabelCounts.of(Y[:cut]).merge(LabelCounts.of(Y[cut:]))
    assert parts.n == whole.n == n
    np.testing.assert_array_equal(parts.ones, Y.sum(axis=0))
    np.testing.assert_array_equal(parts.both, np.triu(Y.T @ Y, 1))
    assert parts.chow_liu() == whole.chow_liu()
