"""The hierarchy oracles equal brute-force enumeration on random trees and DAGs (both label
spaces, single and multi-label, node and leaf loss); the DAG LP equals scipy's ``linprog`` and the
integer program equals ``milp`` and enumeration; bad input raises clear errors."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import Bounds, LinearConstraint, linprog, milp

import bicrit
from bicrit.errors import InvalidInputError, InvalidParameterError, UnsupportedQueryError
from bicrit.structures import Cone
from tests.structures.brute import assert_matches, brute_force

# --- independent reference: graphs, label spaces, φ, terms ------------------------------------


def random_parents(rng: np.random.Generator, n: int, max_parents: int) -> tuple[list, int]:
    """A random rooted tree (max_parents = 1) or DAG on n nodes with a random root id."""
    perm = rng.permutation(n)
    parents: list[list[int]] = [[] for _ in range(n)]
    for i in range(1, n):
        k = int(rng.integers(1, min(max_parents, i) + 1))
        parents[perm[i]] = sorted(int(p) for p in rng.choice(perm[:i], size=k, replace=False))
    return parents, int(perm[0])


def children_of(parents: list[list[int]]) -> list[list[int]]:
    ch: list[list[int]] = [[] for _ in parents]
    for v, ps in enumerate(parents):
        for p in ps:
            ch[p].append(v)
    return ch


def is_label(y: set[int], parents, children, root: int, labels: str, multilabel: bool) -> bool:
    if root not in y or any(p not in y for v in y for p in parents[v]):
        return False
    terminals = [v for v in y if not any(c in y for c in children[v])]
    if labels == "leaves" and any(children[t] for t in terminals):
        return False
    return multilabel or len(terminals) == 1


def label_space(parents, root: int, labels: str, multilabel: bool) -> list[np.ndarray]:
    n = len(parents)
    ch = children_of(parents)
    out = []
    for mask in range(1 << n):
        y = {v for v in range(n) if mask >> v & 1}
        if is_label(y, parents, ch, root, labels, multilabel):
            out.append(np.array(sorted(y), dtype=np.int64))
    return out


def ref_terms(
    y, yt, counted: np.ndarray, lw: np.ndarray, mw: np.ndarray | None = None
) -> dict[str, float]:
    """Terms of y against y_i: a wrongly predicted node costs lw, a missed one mw (default lw)."""
    mw = lw if mw is None else mw
    a, b = set(map(int, y)), set(map(int, yt))
    diff = [v for v in a ^ b if counted[v]]
    return {
        "loss": float(sum(lw[v] if v in a else mw[v] for v in diff)),
        "size": float(sum(1 for v in a if counted[v])),
        "hamming": float(len(diff)),
    }


@dataclass
class Problem:
    s: Any
    parents: list
    root: int
    labels: list
    w: np.ndarray
    x: np.ndarray
    scale: np.ndarray
    lw: np.ndarray
    counted: np.ndarray
    layout: str
    mw: np.ndarray

    def sigma(self) -> np.ndarray:
        """Node scores s_n·W_n·x from the layout's definition."""
        n, d = len(self.parents), self.x.shape[0]
        W = self.w.reshape(n, d) if self.layout == "node" else self.w.reshape(d, n).T
        return self.scale * (W @ self.x)

    def gains(self, y_true, coef: dict, margin_coef: float) -> np.ndarray:
        gold = np.zeros(len(self.parents), bool)
        gold[np.asarray(y_true)] = True
        sgn = np.where(gold, -1.0, 1.0)
        t = coef.get("loss", 0.0) * np.where(gold, self.mw, self.lw) * sgn + coef.get("size", 0.0)
        t = t + coef.get("hamming", 0.0) * sgn
        return margin_coef * self.sigma() + np.where(self.counted, t, 0.0)


def make_problem(seed: int, *, tree: bool, labels: str, multilabel: bool, loss: str) -> Problem:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 8 if multilabel else 10))
    parents, root = random_parents(rng, n, 1 if tree else 3)
    d = int(rng.integers(1, 4))
    scale = rng.choice([0.5, 1.0, 2.0], size=n) if rng.random() < 0.4 else np.ones(n)
    lw = rng.choice([0.0, 0.5, 1.0, 2.0], size=n) if rng.random() < 0.4 else np.ones(n)
    # a missed gold node may cost another weight than a wrongly predicted one
    mw = rng.choice([0.0, 0.5, 1.0, 3.0], size=n) if rng.random() < 0.4 else None
    layout = "node" if rng.random() < 0.5 else "feature"
    s = bicrit.structure(
        "hierarchy",
        hierarchy=parents,
        root=root,
        labels=labels,
        multilabel=multilabel,
        loss=loss,
        node_scale=scale,
        node_loss_weight=lw,
        node_miss_weight=mw,
        n_features=d,
        layout=layout,
    )
    ch = children_of(parents)
    counted = np.array(
        [(v != root) if loss == "node" else (not ch[v]) for v in range(n)], dtype=bool
    )
    w = rng.integers(-2, 3, size=n * d).astype(float)  # integers: frequent exact ties
    x = rng.integers(-2, 3, size=d).astype(float)
    space = label_space(parents, root, labels, multilabel)
    mw_ref = lw if mw is None else mw
    return Problem(s, parents, root, space, w, x, scale, lw, counted, layout, mw_ref)


SPACES = [
    (tree, labels, multilabel)
    for tree in (True, False)
    for labels in ("any", "leaves")
    for multilabel in (True, False)
]


@st.composite
def queries(draw: st.DrawFn) -> dict:
    tree, labels, multilabel = draw(st.sampled_from(SPACES))
    loss = draw(st.sampled_from(["node", "leaf"]))
    seed = draw(st.integers(0, 2**32 - 1))
    lam = draw(st.sampled_from([0.0, 0.5, 1.0, 2.0, math.inf]))
    coef_size = draw(st.sampled_from([0.0, -0.5, -1.0]))
    coef_ham = draw(st.sampled_from([0.0, 1.0]))
    k = draw(st.integers(1, 4))
    n_ban = draw(st.integers(0, 2))
    cone = None
    if not multilabel and draw(st.booleans()):
        cone = Cone(
            draw(st.sampled_from([0.0, 0.5, 1.0])),
            draw(st.sampled_from([1.0, 2.0, math.inf])),
            draw(st.booleans()),
            draw(st.booleans()),
        )
    return dict(
        tree=tree,
        labels=labels,
        multilabel=multilabel,
        loss=loss,
        seed=seed,
        lam=lam,
        coef_size=coef_size,
        coef_ham=coef_ham,
        k=k,
        n_ban=n_ban,
        cone=cone,
    )


@settings(max_examples=600, deadline=None)
@given(queries())
def test_oracle_equals_brute_force(q: dict) -> None:
    p = make_problem(
        q["seed"], tree=q["tree"], labels=q["labels"], multilabel=q["multilabel"], loss=q["loss"]
    )
    rng = np.random.default_rng(q["seed"] + 1)
    gold = p.labels[rng.integers(len(p.labels))]
    ban = [p.labels[i] for i in rng.integers(len(p.labels), size=q["n_ban"])]
    if math.isinf(q["lam"]):
        coef, margin_coef, tiebreak = {"loss": 1.0}, 0.0, (1.0, {})
    else:
        coef = {"loss": q["lam"], "size": q["coef_size"], "hamming": q["coef_ham"]}
        margin_coef, tiebreak = 1.0, (0.0, {"loss": 1.0})
    found = p.s.oracle(
        p.w,
        p.x,
        gold,
        coef,
        margin_coef=margin_coef,
        tiebreak=tiebreak,
        ban=ban,
        k=q["k"],
        cone=q["cone"],
    )
    expected = brute_force(
        p.s,
        p.w,
        p.x,
        gold,
        p.labels,
        coef,
        margin_coef=margin_coef,
        tiebreak=tiebreak,
        ban=ban,
        cone=q["cone"],
    )
    assert_matches(found, expected, q["k"], coef, margin_coef, tiebreak)
    keys = {tuple(a.label) for a in found}
    assert len(keys) == len(found), "k-best answers must be distinct labels"
    for a in found:
        assert not any(np.array_equal(a.label, b) for b in ban)
        assert any(np.array_equal(a.label, y) for y in p.labels)
        assert a.terms == ref_terms(a.label, gold, p.counted, p.lw, p.mw)
        m = float(np.dot(p.w, p.s.joint_feature(p.x, a.label) - p.s.joint_feature(p.x, gold)))
        assert abs(a.margin - m) < 1e-9


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(SPACES), st.sampled_from(["node", "leaf"]), st.integers(0, 2**32 - 1))
def test_joint_feature_terms_and_predict_match_definitions(space, loss, seed) -> None:
    tree, labels, multilabel = space
    p = make_problem(seed, tree=tree, labels=labels, multilabel=multilabel, loss=loss)
    n, d = len(p.parents), p.x.shape[0]
    rng = np.random.default_rng(seed)
    y, yt = (p.labels[i] for i in rng.integers(len(p.labels), size=2))
    phi = p.s.joint_feature(p.x, y)
    blocks = np.zeros((n, d))
    blocks[y] = p.scale[y, None] * p.x[None, :]
    assert np.allclose(phi, blocks.ravel() if p.layout == "node" else blocks.T.ravel())
    assert p.s.terms(y, yt) == ref_terms(y, yt, p.counted, p.lw, p.mw)
    assert p.s.loss(y, y) == 0.0
    scores = [float(p.sigma()[lab].sum()) for lab in p.labels]
    pred = p.s.predict_one(p.w, p.x)
    assert abs(float(p.sigma()[pred].sum()) - max(scores)) < 1e-9


# --- LP / IP against scipy (HiGHS) --------------------------------------------------------------


def scipy_program(parents: list, root: int, gains: np.ndarray, integral: bool) -> float:
    """max Σ gains·z over the leaf-terminated space, z_root = 1 (thesis eq. ``integerprogram``
    with the slips fixed), solved by HiGHS; returns the value including the root's gain."""
    n = len(parents)
    ch = children_of(parents)
    var = [v for v in range(n) if v != root]
    col = {v: j for j, v in enumerate(var)}
    rows, lo, hi = [], [], []

    def row(terms: dict[int, float], lb: float, ub: float) -> None:
        r = np.zeros(len(var))
        for v, c in terms.items():
            r[col[v]] += c
        rows.append(r)
        lo.append(lb)
        hi.append(ub)

    for c in var:
        for p in parents[c]:
            if p != root:
                row({c: 1.0, p: -1.0}, -np.inf, 0.0)
    for v in range(n):
        if ch[v]:
            terms = dict.fromkeys(ch[v], 1.0)
            if v == root:
                row(terms, 1.0, np.inf)
            else:
                terms[v] = terms.get(v, 0.0) - 1.0
                row(terms, 0.0, np.inf)
    row({v: 1.0 for v in range(n) if not ch[v]}, 1.0, np.inf)
    c = -gains[var]
    A = np.array(rows)
    if integral:
        res = milp(
            c,
            constraints=LinearConstraint(A, lo, hi),
            integrality=np.ones(len(var)),
            bounds=Bounds(0, 1),
        )
    else:
        A_ub = np.vstack([A[np.isfinite(hi)], -A[np.isfinite(lo)]])
        b_ub = np.concatenate([np.array(hi)[np.isfinite(hi)], -np.array(lo)[np.isfinite(lo)]])
        res = linprog(c, A_ub=A_ub, b_ub=b_ub, bounds=(0, 1), method="highs")
    assert res.success, res.message
    return float(-res.fun + gains[root])


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from([0.0, 0.5, 1.0, 3.0]))
def test_dag_lp_and_ip_equal_scipy_and_enumeration(seed: int, lam: float) -> None:
    p = make_problem(seed, tree=False, labels="leaves", multilabel=True, loss="leaf")
    rng = np.random.default_rng(seed)
    gold = p.labels[rng.integers(len(p.labels))]
    coef = {"loss": lam, "size": float(rng.choice([0.0, -0.5]))}
    gains = p.gains(gold, coef, 1.0)
    lp_value, z = p.s.relaxation(p.w, p.x, gold, coef)
    assert z.shape == (len(p.parents),) and z[p.root] == 1.0
    assert abs(lp_value - scipy_program(p.parents, p.root, gains, integral=False)) < 1e-6
    ip_value = scipy_program(p.parents, p.root, gains, integral=True)
    best = max(float(gains[y].sum()) for y in p.labels)
    assert abs(ip_value - best) < 1e-9
    answer = p.s.oracle(p.w, p.x, gold, coef)[0]
    assert abs(float(gains[answer.label].sum()) - best) < 1e-9
    assert lp_value >= best - 1e-6


def test_fractional_lp_is_repaired_by_the_integer_program() -> None:
    # Set-cover-like DAG: leaves l1, l2, l3 each under two of a, b, c; the LP takes every leaf
    # at 1/2 when a, b, c are worth more than the leaves cost.
    #   root 0; a=1, b=2, c=3 under root; l4 under (1, 2), l5 under (2, 3), l6 under (1, 3)
    parents = [[], [0], [0], [0], [1, 2], [2, 3], [1, 3]]
    s = bicrit.structure("hierarchy", hierarchy=parents, labels="leaves", n_features=1)
    w = np.array([0.0, 1.0, 1.0, 1.0, -1.5, -1.5, -1.5])
    gold = np.array([0, 1, 2, 4])
    lp_value, z = s.relaxation(w, [1.0], gold, {})
    gains = w.copy()
    space = label_space(parents, 0, "leaves", True)
    best = max(float(gains[y].sum()) for y in space)
    assert lp_value > best + 0.2, (lp_value, best, z)  # 0.75 vs 0.5
    assert np.any((z > 1e-6) & (z < 1 - 1e-6))
    answer = s.oracle(w, [1.0], gold, {})[0]
    assert abs(float(gains[answer.label].sum()) - best) < 1e-9
    assert s.oracle_kind == "lp_ip"


def test_any_space_lp_is_integral_and_equals_min_cut() -> None:
    rng = np.random.default_rng(3)
    for seed in range(40):
        p = make_problem(seed, tree=False, labels="any", multilabel=True, loss="node")
        gold = p.labels[rng.integers(len(p.labels))]
        value, _ = p.s.relaxation(p.w, p.x, gold, {"loss": 1.0})
        answer = p.s.oracle(p.w, p.x, gold, {"loss": 1.0})[0]
        gains = p.gains(gold, {"loss": 1.0}, 1.0)
        assert abs(value - float(gains[answer.label].sum())) < 1e-6


# --- batch, layouts, registry -------------------------------------------------------------------


def test_batch_agrees_with_single_calls_and_threads() -> None:
    rng = np.random.default_rng(0)
    parents, root = random_parents(rng, 30, 2)
    s = bicrit.structure("hierarchy", hierarchy=parents, root=root, labels="leaves")
    X = rng.normal(size=(40, 6))
    leaves = [v for v in range(30) if not children_of(parents)[v]]
    Y = [s_closure(parents, root, rng.choice(leaves, size=2)) for _ in range(40)]
    s.initialize(X, Y)
    assert np.array_equal(s.closure(Y[0][-1:]), s_closure(parents, root, Y[0][-1:]))
    w = rng.normal(size=s.size_joint_feature)
    one = [s.oracle(w, x, y, {"loss": 1.0})[0] for x, y in zip(X, Y, strict=True)]
    for n_jobs in (1, 2):
        batch = s.batch_oracle(w, X, Y, {"loss": 1.0}, n_jobs=n_jobs)
        assert all(np.array_equal(b[0].label, a.label) for a, b in zip(one, batch, strict=True))
        preds = s.batch_predict(w, X, n_jobs=n_jobs)
        assert all(np.array_equal(a, s.predict_one(w, x)) for a, x in zip(preds, X, strict=True))
    assert s.oracle_kind == "lp_ip"


def test_oracle_from_precomputed_scores() -> None:
    rng = np.random.default_rng(5)
    parents, root = random_parents(rng, 40, 2)
    s = bicrit.structure("hierarchy", hierarchy=parents, root=root, labels="any", n_features=5)
    X = rng.normal(size=(30, 5))
    W = rng.normal(size=(40, 5)).astype(np.float32)  # e.g. float32 weights kept by the caller
    Y = [s_closure(parents, root, [int(rng.integers(40))]) for _ in range(30)]
    scores = X @ W.astype(np.float64).T
    a = s.batch_oracle(W.astype(np.float64).ravel(), X, Y, {"loss": 1.0}, k=2)
    b = s.batch_oracle_scores(scores, Y, {"loss": 1.0}, k=2, n_jobs=2)
    for ra, rb in zip(a, b, strict=True):
        assert [r.label.tolist() for r in ra] == [r.label.tolist() for r in rb]
        assert np.allclose([r.margin for r in ra], [r.margin for r in rb])
    with pytest.raises(InvalidInputError, match="columns"):
        s.batch_oracle_scores(scores[:, :-1], Y, {"loss": 1.0})
    with pytest.raises(InvalidInputError, match="instance 0"):
        s.batch_oracle_scores(np.full_like(scores, np.nan), Y, {"loss": 1.0})


def s_closure(parents, root, nodes) -> np.ndarray:
    out, stack = set(), [root, *map(int, nodes)]
    while stack:
        v = stack.pop()
        if v not in out:
            out.add(v)
            stack.extend(parents[v])
    return np.array(sorted(out))


def test_layouts_agree_given_transposed_weights() -> None:
    rng = np.random.default_rng(1)
    parents, root = random_parents(rng, 50, 1)
    kw = dict(hierarchy=parents, root=root, n_features=8, labels="any")
    a = bicrit.structure("hierarchy", layout="node", **kw)
    b = bicrit.structure("hierarchy", layout="feature", **kw)
    W = rng.normal(size=(50, 8))
    x = rng.normal(size=8) * (rng.random(8) < 0.5)
    gold = s_closure(parents, root, [int(rng.integers(50))])
    ra = a.oracle(W.ravel(), x, gold, {"loss": 0.5}, k=3)
    rb = b.oracle(W.T.ravel(), x, gold, {"loss": 0.5}, k=3)
    assert [r.label.tolist() for r in ra] == [r.label.tolist() for r in rb]
    assert np.allclose([r.margin for r in ra], [r.margin for r in rb])
    assert a.oracle_kind == "tree_dp"


def test_registry_and_capabilities_per_space() -> None:
    c = bicrit.registry.get("structure", "hierarchy")
    assert c.capabilities["ban"] and c.capabilities["kbest"] and not c.capabilities["relaxed"]
    parents = [[], [0], [0], [1], [1, 2]]
    for labels, multilabel in itertools.product(["any", "leaves"], [True, False]):
        s = bicrit.structure(
            "hierarchy", hierarchy=parents, labels=labels, multilabel=multilabel, n_features=2
        )
        caps = s.capabilities
        assert caps == {
            "ban": True,
            "kbest": True,
            "cone": not multilabel,
            "relaxed": False,
            "frontier": False,
        }
    s = bicrit.structure("hierarchy", hierarchy=parents, n_features=2)
    with pytest.raises(UnsupportedQueryError, match="cone"):
        s.oracle(np.zeros(10), [1.0, 0.0], [0], {"loss": 1.0}, cone=Cone(0.0, 1.0))


def test_lambda_oracle_lexicographic_ends() -> None:
    parents = [[], [0], [0], [1], [1]]
    s = bicrit.structure("hierarchy", hierarchy=parents, labels="leaves", n_features=1)
    w = np.array([0.0, 1.0, -5.0, 1.0, 0.0])
    gold = [0, 1, 3]
    # λ = 0: best margin (0: gold, or gold + node 4 of weight 0), ties broken by the larger loss
    assert s.lambda_oracle(w, [1.0], gold, 0.0).tolist() == [0, 1, 3, 4]
    worst = s.lambda_oracle(w, [1.0], gold, math.inf)  # largest loss, then margin
    assert s.loss(worst, gold) == max(s.loss(y, gold) for y in label_space(parents, 0, "leaves", 1))


class FakeHierarchy:
    """Duck-typed stand-in for ``bicrit.hierarchy.Hierarchy``."""

    def __init__(self, parents, root, names) -> None:
        self.parents = parents
        self.root = root
        self.names = names


# --- bad input ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("parents", "root", "match"),
    [
        ([[], [2], [1]], 0, "cycle through node"),
        ([[], [0], [], [2]], 0, "found 2 nodes without parents: 'r', 'c'"),
        ([[], [0], [3], [2]], 0, "cycle"),  # 2 and 3 unreachable from the root
        ([[], [0], [7]], 0, "parent id 7"),
        ([[1], [0], [0]], 0, "root"),
        ([[]], 0, "at least one node"),
    ],
)
def test_bad_hierarchies_name_the_node(parents, root, match) -> None:
    names = ["r", "a", "c", "d"][: len(parents)]
    with pytest.raises(InvalidInputError, match=match):
        bicrit.structure("hierarchy", hierarchy=FakeHierarchy(parents, root, names), n_features=2)


@pytest.mark.parametrize(
    ("kw", "y", "match"),
    [
        ({}, [0, 3], r'not ancestor-closed: it has node 3 \("d"\) but not its parent node 1'),
        ({"labels": "leaves"}, [0, 1], r'ends at node 1 \("a"\), which is not a leaf'),
        ({"multilabel": False}, [0, 1, 2], "single-label"),
        ({}, [0, 9], "outside the nodes"),
        ({}, [1, 3], "root"),
        ({}, [], "non-empty"),
        ({}, [[0, 1]], "1-D"),
        ({}, [0.5, 1.0], "integer"),
    ],
)
def test_bad_labels(kw, y, match) -> None:
    h = FakeHierarchy([[], [0], [0], [1], [1]], 0, ["r", "a", "b", "d", "e"])
    s = bicrit.structure("hierarchy", hierarchy=h, n_features=2, **kw)
    w = np.zeros(s.size_joint_feature)
    with pytest.raises(InvalidInputError, match=match):
        s.oracle(w, [1.0, 2.0], y, {"loss": 1.0})


def test_other_bad_input() -> None:
    s = bicrit.structure("hierarchy", hierarchy=[[], [0], [0]], n_features=2)
    w = np.zeros(6)
    with pytest.raises(InvalidInputError, match="features"):
        s.oracle(w, [1.0, 2.0, 3.0], [0, 1], {"loss": 1.0})
    with pytest.raises(InvalidInputError, match="ban list entry 0"):
        s.oracle(w, [1.0, 2.0], [0, 1], {"loss": 1.0}, ban=[[1]])
    with pytest.raises(InvalidInputError, match=r"Y\[1\]"):
        s.initialize(np.ones((2, 2)), [[0, 1], [1]])
    with pytest.raises(InvalidInputError, match="2 labels"):
        s.initialize(np.ones((3, 2)), [[0, 1], [0]])
    with pytest.raises(InvalidParameterError, match="labels"):
        bicrit.structure("hierarchy", hierarchy=[[], [0]], labels="leaf")
    with pytest.raises(InvalidParameterError, match="node_loss_weight"):
        bicrit.structure("hierarchy", hierarchy=[[], [0]], n_features=1, node_loss_weight=[1, -1])
    with pytest.raises(InvalidParameterError, match="node_scale has 3 entries"):
        bicrit.structure("hierarchy", hierarchy=[[], [0]], n_features=1, node_scale=[1, 1, 1])
    with pytest.raises(InvalidInputError, match="initialize"):
        bicrit.structure("hierarchy", hierarchy=[[], [0]]).predict_one(np.ones(2), [1.0])
