"""The multilabel structure in exact mode equals brute-force enumeration (through the public API,
against an independent numpy reference of the documented feature layout); its API, feature map,
edge sets and error messages."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import bicrit
from bicrit.errors import (
    InvalidInputError,
    InvalidParameterError,
    UnsupportedQueryError,
)
from bicrit.structures import Cone
from tests.structures.brute import assert_matches
from tests.structures.multilabel_ref import all_labels, brute_force, scores


def edge_list(kind: str, K: int, rng: np.random.Generator) -> list[tuple[int, int]] | str:
    if kind in ("full", "chain"):
        return kind
    pairs = [(i, j) for i in range(K) for j in range(i + 1, K) if rng.random() < 0.5]
    # explicit lists may come in either orientation
    return [(j, i) if rng.random() < 0.5 else (i, j) for i, j in pairs]


@st.composite
def problems(draw: st.DrawFn) -> dict:
    K = draw(st.integers(1, 10))
    d = draw(st.integers(1, 3))
    kind = draw(st.sampled_from(["full", "chain", "explicit"]))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    s = bicrit.structure(
        "multilabel", edges=edge_list(kind, K, rng), inference="exact", n_labels=K, n_features=d
    )
    # integer weights make exact ties frequent
    w = rng.integers(-2, 3, size=s.size_joint_feature).astype(float)
    x = rng.integers(-2, 3, size=d).astype(float)
    y_true = rng.integers(0, 2, size=K)
    lam = draw(st.sampled_from([0.0, 0.5, 1.0, 2.0, math.inf]))
    coef_size = draw(st.sampled_from([0.0, -0.5, -1.0]))
    coef_ham = draw(st.sampled_from([0.0, 1.0]))
    k = draw(st.integers(1, 6))
    n_ban = draw(st.integers(0, 3))
    ban = [rng.integers(0, 2, size=K) for _ in range(n_ban)]
    cone = (
        Cone(
            draw(st.sampled_from([0.0, 0.5, 1.0])),
            draw(st.sampled_from([1.0, 2.0, math.inf])),
            draw(st.booleans()),
            draw(st.booleans()),
        )
        if draw(st.booleans())
        else None
    )
    return dict(
        s=s,
        w=w,
        x=x,
        y_true=y_true,
        lam=lam,
        coef_size=coef_size,
        coef_ham=coef_ham,
        k=k,
        ban=ban,
        cone=cone,
    )


@settings(max_examples=1000, deadline=None)
@given(problems())
def test_exact_oracle_equals_brute_force(p: dict) -> None:
    s = p["s"]
    if math.isinf(p["lam"]):  # λ = ∞: largest loss, ties by largest margin
        coef, margin_coef, tiebreak = {"loss": 1.0}, 0.0, (1.0, {})
    elif p["lam"] == 0.0 and p["coef_size"] == 0.0:  # λ = 0: largest margin, then loss
        coef, margin_coef, tiebreak = {}, 1.0, (0.0, {"loss": 1.0})
    else:
        coef = {"loss": p["lam"], "size": p["coef_size"], "hamming": p["coef_ham"]}
        margin_coef, tiebreak = 1.0, (0.0, {"loss": 1.0})
    found = s.oracle(
        p["w"],
        p["x"],
        p["y_true"],
        coef,
        margin_coef=margin_coef,
        tiebreak=tiebreak,
        ban=p["ban"],
        k=p["k"],
        cone=p["cone"],
    )
    expected = brute_force(
        p["w"],
        p["x"],
        p["y_true"],
        s.edges_,
        coef,
        margin_coef=margin_coef,
        tiebreak=tiebreak,
        ban=p["ban"],
        cone=p["cone"],
    )
    assert_matches(found, expected, p["k"], coef, margin_coef, tiebreak)
    banned = {tuple(b) for b in p["ban"]}
    for a in found:
        assert a.label.dtype == np.int64 and a.label.shape == (len(p["y_true"]),)
        assert tuple(a.label) not in banned
        # reported margin and terms are the label's own
        m = scores(p["w"], p["x"], np.vstack([a.label, p["y_true"]]), s.edges_)
        assert a.margin == pytest.approx(m[0] - m[1], abs=1e-9)
        assert a.terms == s.terms(a.label, p["y_true"])
    # k-best labels are distinct
    assert len({tuple(a.label) for a in found}) == len(found)


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 10), st.integers(0, 2**32 - 1))
def test_predict_is_argmax_and_joint_feature_matches_layout(K: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    d = 3
    s = bicrit.structure("multilabel", inference="exact", n_labels=K, n_features=d)
    w = rng.normal(size=s.size_joint_feature)
    x = rng.normal(size=d)
    Y = all_labels(K)
    best = scores(w, x, Y, s.edges_).max()
    y = s.predict_one(w, x)
    assert scores(w, x, y[None, :], s.edges_)[0] == pytest.approx(best)
    for y in Y[rng.integers(0, len(Y), size=5)]:
        phi = s.joint_feature(x, y)
        assert phi.shape == (K * d + 4 * len(s.edges_),)
        assert phi @ w == pytest.approx(scores(w, x, y[None, :], s.edges_)[0])
        assert np.array_equal(phi[: K * d].reshape(K, d), np.outer(y, x))
        edge_part = phi[K * d :].reshape(-1, 4)
        for e, (i, j) in enumerate(s.edges_):
            assert edge_part[e, 2 * y[i] + y[j]] == 1.0 and edge_part[e].sum() == 1.0


def test_relaxed_labels_are_linear_in_features_and_terms() -> None:
    s = bicrit.structure("multilabel", edges="full", n_labels=3, n_features=2)
    x = np.array([1.0, -2.0])
    a, b = np.array([1, 0, 1]), np.array([0, 1, 1])
    # the midpoint of a and b as marginals
    nodes = (a + b) / 2.0
    edges = np.zeros((3, 4))
    for e, (i, j) in enumerate(s.edges_):
        edges[e, 2 * a[i] + a[j]] += 0.5
        edges[e, 2 * b[i] + b[j]] += 0.5
    half = (nodes, edges)
    mid = (s.joint_feature(x, a) + s.joint_feature(x, b)) / 2
    assert np.allclose(s.joint_feature(x, half), mid)
    gold = np.array([1, 1, 0])
    t_half = s.terms(half, gold)
    t_a, t_b = s.terms(a, gold), s.terms(b, gold)
    for name in ("loss", "size", "hamming"):
        assert t_half[name] == pytest.approx((t_a[name] + t_b[name]) / 2)
    assert s.loss(a, gold) == 2.0 and s.terms(a, gold)["hamming"] == 2.0


def test_initialize_dense_and_sparse_and_edge_sets() -> None:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 5))
    Y = rng.integers(0, 2, size=(40, 4))
    Y[:, 2] = Y[:, 0]  # label 2 copies label 0: the Chow–Liu tree links them
    Y[:, 3] = 1 - Y[:, 1]
    dense = bicrit.structure("multilabel").initialize(X, Y)
    sparse = bicrit.structure("multilabel").initialize(sp.csr_matrix(X), Y)
    assert dense.size_joint_feature == sparse.size_joint_feature == 4 * 5 + 4 * 6
    assert dense.inference_ == "exact"
    tree = bicrit.structure("multilabel", edges="tree").initialize(X, Y)
    assert len(tree.edges_) == 3
    assert {(0, 2), (1, 3)} <= {tuple(e) for e in tree.edges_}
    chain = bicrit.structure("multilabel", edges="chain").initialize(X, Y)
    assert [tuple(e) for e in chain.edges_] == [(0, 1), (1, 2), (2, 3)]
    explicit = bicrit.structure("multilabel", edges=[(3, 0)]).initialize(X, Y.astype(bool))
    assert [tuple(e) for e in explicit.edges_] == [(0, 3)]
    as_array = bicrit.structure("multilabel", edges=tree.edges_, n_labels=4, n_features=5)
    assert np.array_equal(as_array.edges_, tree.edges_)
    w = rng.normal(size=dense.size_joint_feature)
    assert np.array_equal(dense.batch_predict(w, X), sparse.batch_predict(w, sp.csr_matrix(X)))
    big = bicrit.structure("multilabel", edges="full", n_labels=20, n_features=5)
    assert big.inference_ == "relaxed" and big.capabilities["relaxed"]
    assert dense.capabilities == {
        "ban": True,
        "kbest": True,
        "cone": True,
        "relaxed": False,
        "frontier": True,  # enumeration gives the best label for every Hamming distance
    }
    assert big.capabilities["frontier"] is False


def test_batch_agrees_with_single_calls_on_threads() -> None:
    rng = np.random.default_rng(1)
    X = rng.normal(size=(30, 4))
    Y = rng.integers(0, 2, size=(30, 6))
    for inference in ("exact", "relaxed"):
        s = bicrit.structure("multilabel", inference=inference).initialize(X, Y)
        w = rng.normal(size=s.size_joint_feature)
        pred = s.batch_predict(w, X, n_jobs=2)
        assert pred.shape == (30, 6)
        assert all(np.array_equal(pred[i], s.predict_one(w, X[i])) for i in range(30))
        batch = s.batch_oracle(w, X, Y, {"loss": 1.0}, n_jobs=2)
        for i in range(30):
            one = s.oracle(w, X[i], Y[i], {"loss": 1.0})
            assert batch[i][0].margin == pytest.approx(one[0].margin)
            assert batch[i][0].terms == one[0].terms


def test_registry_entry_covers_every_inference_mode() -> None:
    # the registry shows what some instance answers; each mode's instance answers its own part
    c = bicrit.registry.get("structure", "multilabel")
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(6, 3)), (rng.random((6, 4)) < 0.5).astype(np.int64)
    caps = {}
    for inference in ("exact", "relaxed"):
        s = bicrit.structure("multilabel", inference=inference).initialize(X, Y)
        caps[inference] = s.capabilities
        assert all(c.capabilities[k] for k, v in s.capabilities.items() if v)
    assert caps["exact"]["ban"] and caps["exact"]["kbest"] and not caps["exact"]["relaxed"]
    assert caps["relaxed"]["relaxed"] and not caps["relaxed"]["kbest"]


@pytest.mark.parametrize(
    ("call", "exc", "match"),
    [
        (
            lambda s, w: s.oracle(w, [1.0, 2.0], [1, 0], {"loss": 1.0}),
            InvalidInputError,
            "length 2",
        ),
        (
            lambda s, w: s.oracle(w, [1.0, 2.0], [1, 0, 2], {"loss": 1.0}),
            InvalidInputError,
            "0 or 1",
        ),
        (
            lambda s, w: s.oracle(w, [1.0, 2.0], [1.0, 0.5, 0.0], {}),
            InvalidInputError,
            "relaxed label is a",
        ),
        (lambda s, w: s.oracle(w, [1.0, 2.0, 3.0], [1, 0, 0], {}), InvalidInputError, "features"),
        (lambda s, w: s.oracle(w[:-1], [1.0, 2.0], [1, 0, 0], {}), InvalidInputError, "shape"),
        (
            lambda s, w: s.joint_feature([1.0, 2.0], (np.array([1.5, 0, 0]), np.zeros((3, 4)))),
            InvalidInputError,
            r"outside \[0, 1\]",
        ),
        (
            lambda s, w: s.joint_feature([1.0, 2.0], (np.zeros(3), np.zeros((2, 4)))),
            InvalidInputError,
            r"shape \(2, 4\)",
        ),
        (
            lambda s, w: s.joint_feature([1.0, 2.0], (np.zeros(3), np.zeros((3, 3)))),
            InvalidInputError,
            "shape",
        ),
        (
            lambda s, w: s.joint_feature(
                [1.0, 2.0], (np.full(3, 0.5), np.tile([1.0, 0, 0, 0], (3, 1)))
            ),
            InvalidInputError,
            "inconsistent",
        ),
        (
            lambda s, w: s.oracle(
                w, [1.0, 2.0], (np.zeros(3), np.tile([1.0, 0, 0, 0], (3, 1))), {}
            ),
            InvalidInputError,
            "gold label must be integral",
        ),
        (
            lambda s, w: s.oracle(
                w, [1.0, 2.0], [1, 0, 0], {}, ban=[(np.zeros(3), np.zeros((3, 4)))]
            ),
            InvalidInputError,
            "integral",
        ),
        (
            lambda s, w: s.batch_oracle(w, np.ones((2, 2)), np.ones((2, 4), dtype=int), {}),
            InvalidInputError,
            "4 columns",
        ),
    ],
)
def test_bad_input(call, exc: type, match: str) -> None:
    s = bicrit.structure("multilabel", n_labels=3, n_features=2)
    with pytest.raises(exc, match=match):
        call(s, np.ones(s.size_joint_feature))


@pytest.mark.parametrize(
    ("params", "match"),
    [
        (dict(edges=[(0, 3)]), "outside the labels"),
        (dict(edges=[(1, 1)]), "self-loop"),
        (dict(edges=[(0, 1), (1, 0)]), "duplicates"),
        (dict(edges="star"), "edges must be"),
        (dict(inference="fast"), "inference must be"),
        (dict(relaxed_solver="simplex"), "relaxed_solver"),
    ],
)
def test_bad_parameters(params: dict, match: str) -> None:
    with pytest.raises((InvalidInputError, InvalidParameterError), match=match):
        bicrit.structure("multilabel", n_labels=3, n_features=2, **params)


@pytest.mark.parametrize(
    ("n_labels", "n_features", "edges", "match"),
    [
        (2**63, 72, [(0, 1)], "n_labels must be at most"),  # a damaged model file's count
        (10**6, 10, "full", "edges is more than"),
        (2**20, 2**60, [(0, 1)], "more weights than memory"),
    ],
)
def test_sizes_beyond_memory_are_refused_before_allocating(
    n_labels: int, n_features: int, edges: object, match: str
) -> None:
    with pytest.raises(InvalidParameterError, match=match):
        bicrit.structure("multilabel", n_labels=n_labels, n_features=n_features, edges=edges)


def test_exact_refuses_large_k_and_relaxed_refuses_ban_and_kbest() -> None:
    with pytest.raises(InvalidParameterError, match="inference='relaxed'"):
        bicrit.structure("multilabel", edges="full", inference="exact", n_labels=17, n_features=1)
    s = bicrit.structure("multilabel", inference="relaxed", n_labels=3, n_features=1)
    w = np.ones(s.size_joint_feature)
    with pytest.raises(UnsupportedQueryError, match="ban"):
        s.oracle(w, [1.0], [1, 0, 0], {"loss": 1.0}, ban=[[0, 0, 0]])
    with pytest.raises(UnsupportedQueryError, match="k-best"):
        s.oracle(w, [1.0], [1, 0, 0], {"loss": 1.0}, k=2)
    with pytest.raises(InvalidInputError, match="initialize"):
        bicrit.structure("multilabel", edges="tree", n_labels=3, n_features=1).predict_one(w, [1.0])
    with pytest.raises(InvalidInputError, match="0 or 1"):
        bicrit.structure("multilabel").initialize(np.ones((2, 1)), [[0, 2], [1, 0]])


@settings(max_examples=300, deadline=None)
@given(problems(), st.sampled_from(["slack", "probloss", "beta", "log", "margin"]))
def test_exact_frontier_search_equals_brute_force(p: dict, name: str) -> None:
    """Exact inference gives the frontier by Hamming distance in its one enumeration pass: the
    ``frontier`` search's value is max_y ψ(m(y), L(y)) over all 2^K labels, scored by the
    independent numpy reference, in one call (what ``search="auto"`` runs for slack here)."""
    s, w, x, y_true = p["s"], p["w"], p["x"], p["y_true"]
    psi = bicrit.surrogate(name, beta=0.5) if name == "beta" else bicrit.surrogate(name)
    r = bicrit.search("frontier", s.instance_oracle(w, x, y_true), psi)
    Y = all_labels(len(y_true))
    sc = scores(w, x, np.vstack([Y, y_true[None, :]]), s.edges_)
    m = sc[:-1] - sc[-1]
    loss = (y_true != Y).sum(axis=1)
    best = max(psi.value(float(a), float(b)) for a, b in zip(m, loss, strict=True))
    assert r.value == pytest.approx(best, rel=1e-9, abs=1e-9)
    assert r.calls["frontier"] == r.calls["total"] == 1 and r.upper_bound == r.value
    assert s.capabilities["frontier"] is True
