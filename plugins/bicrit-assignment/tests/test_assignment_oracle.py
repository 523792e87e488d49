"""The assignment structure and its oracle against enumeration of every permutation (n ≤ 6):
λ-oracle, exact lexicographic λ = 0 / ∞, k-best order, ban lists, generic term coefficients;
the protocol bicrit's native adapter relies on; input checks."""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping

import bicrit
import numpy as np
import pytest
from bicrit.errors import InvalidInputError, UnsupportedQueryError
from bicrit.structures.base import Cone, as_native, lambda_query

from bicrit_assignment import Assignment, best_assignment, ranked_assignments
from bicrit_assignment.reference import all_permutations, brute_force_ranking

D = 3


def instance(rng: np.random.Generator, n: int, kind: str = "normal") -> tuple:
    """(w, x, y): continuous features; integer features (many exact ties); integer features
    scaled by 10^-6 … 10^2 (ties only up to rounding); or w = 0 (every label ties)."""
    if kind in ("integer", "scaled"):
        x = rng.integers(-1, 2, size=(n, n, D)).astype(float)
        w = rng.integers(-2, 3, size=D).astype(float)
        if kind == "scaled":
            x = x * 10.0 ** int(rng.integers(-6, 3))
    else:
        x = rng.normal(size=(n, n, D))
        w = np.zeros(D) if kind == "zero" else rng.normal(size=D) * 2.0
    return w, x, rng.permutation(n)


def value(
    s: Assignment, w: np.ndarray, x: np.ndarray, y_true, y, margin_coef: float, coef: Mapping
) -> float:
    """margin_coef·m(y) + Σ coef[t]·term_t(y), from joint_feature and terms (no oracle)."""
    m = float(w @ (s.joint_feature(x, y) - s.joint_feature(x, y_true)))
    t = s.terms(y, y_true)
    return margin_coef * m + sum(c * t[k] for k, c in coef.items())


def check_answers(s, w, x, y, answers, query, banned=()) -> None:
    """The answers are the k best permutations not banned, in order, against enumeration.

    Values within rounding (a relative 1e-9) are ties: the answers' primary values are the k
    largest; consecutive answers do not increase in (primary, secondary) with ties so read; no
    label left out beats the last answer; margins and terms are right; labels are distinct."""
    perms, p, sec = brute_force_ranking(w, x, y, query["coef"], **_kw(query))
    keep = [i for i, q in enumerate(perms) if tuple(q) not in {tuple(b) for b in banned}]
    perms, p, sec = perms[keep], p[keep], sec[keep]
    k = query.get("k", 1)
    assert len(answers) == min(k, len(perms))
    if not answers:
        return
    tp = 1e-9 * float(np.max(np.abs(p)))
    ts = 1e-9 * max(1.0, float(np.max(np.abs(sec))))
    lexicographic = query.get("tiebreak") is not None
    got = []
    for a in answers:
        assert a.margin == pytest.approx(value(s, w, x, y, a.label, 1.0, {}), rel=1e-9, abs=1e-12)
        assert a.terms == s.terms(a.label, y)
        pv = value(s, w, x, y, a.label, query["margin_coef"], query["coef"])
        sv = value(s, w, x, y, a.label, *query["tiebreak"]) if lexicographic else 0.0
        got.append((tuple(int(v) for v in a.label), pv, sv))
    labels = [g[0] for g in got]
    assert len(set(labels)) == len(labels)
    assert all(sorted(lb) == list(range(len(y))) for lb in labels)
    assert not set(labels) & {tuple(int(v) for v in b) for b in banned}
    assert np.allclose([g[1] for g in got], p[: len(got)], rtol=0, atol=tp), query
    for (_, p1, s1), (_, p2, s2) in itertools.pairwise(got):
        assert p1 >= p2 - tp
        if lexicographic and abs(p1 - p2) <= tp:
            assert s1 >= s2 - ts, query
    _, p_last, s_last = got[-1]
    for perm, pz, sz in zip(perms, p, sec, strict=True):
        if tuple(perm) in labels:
            continue
        assert pz <= p_last + tp
        if lexicographic and pz >= p_last - tp:
            assert sz <= s_last + ts, (query, tuple(perm))


def _kw(query: dict) -> dict:
    return {"margin_coef": query["margin_coef"], "tiebreak": query.get("tiebreak")}


def ask(s, w, x, y, query, **extra) -> list:
    q = dict(query)
    return s.oracle(w, x, y, q.pop("coef"), **q, **extra)


@pytest.fixture
def s() -> Assignment:
    return Assignment(n_features=D)


def test_registered_through_the_entry_point() -> None:
    c = bicrit.registry.get("structure", "assignment")
    assert c.package == "bicrit-assignment"
    assert c.capabilities == {
        "ban": True,
        "kbest": True,
        "cone": False,
        "relaxed": False,
        "frontier": False,
    }
    s = bicrit.structure("assignment")
    assert isinstance(s, Assignment)
    X = [np.zeros((3, 3, 2)), np.zeros((4, 4, 2))]
    assert s.initialize(X, [[2, 0, 1], [0, 1, 2, 3]]) is s and s.size_joint_feature == 2


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6])
@pytest.mark.parametrize("kind", ["normal", "integer", "scaled", "zero"])
def test_lambda_oracle_and_lexicographic_queries_equal_brute_force(s, n: int, kind: str) -> None:
    rng = np.random.default_rng(10 * n + len(kind))
    for _ in range(12 if n < 6 else 4):
        w, x, y = instance(rng, n, kind)
        for lam in [0.0, 0.3, 1.0, 4.0, math.inf]:
            q = lambda_query(lam)
            check_answers(s, w, x, y, ask(s, w, x, y, q), q)
            assert np.array_equal(s.lambda_oracle(w, x, y, lam), ask(s, w, x, y, q)[0].label)


def test_lexicographic_extremes_are_exact_not_large_or_small_lambdas(s) -> None:
    # Two labels of equal loss differ only in margin: λ = ∞ must still pick the larger margin.
    rng = np.random.default_rng(0)
    for _ in range(50):
        w, x, y = instance(rng, 4, "integer")
        top = s.lambda_oracle(w, x, y, math.inf)
        _, p, sec = brute_force_ranking(w, x, y, {"loss": 1.0}, margin_coef=0.0, tiebreak=(1.0, {}))
        assert value(s, w, x, y, top, 1.0, {}) == pytest.approx(sec[0])
        assert s.terms(top, y)["loss"] == p[0]
        bottom = s.lambda_oracle(w, x, y, 0.0)
        _, p, sec = brute_force_ranking(w, x, y, {}, margin_coef=1.0, tiebreak=(0.0, {"loss": 1.0}))
        assert value(s, w, x, y, bottom, 1.0, {}) == pytest.approx(p[0])
        assert s.terms(bottom, y)["loss"] == sec[0]


@pytest.mark.parametrize("n", [3, 4, 5, 6])
def test_k_best_order_equals_brute_force(s, n: int) -> None:
    rng = np.random.default_rng(n)
    for kind in ["normal", "integer", "scaled", "zero"]:
        for _ in range(4):
            w, x, y = instance(rng, n, kind)
            for lam in [0.0, 0.7, math.inf]:
                q = {**lambda_query(lam), "k": int(rng.integers(2, 30))}
                check_answers(s, w, x, y, ask(s, w, x, y, q), q)


def test_k_best_enumerates_every_permutation_once_in_order() -> None:
    rng = np.random.default_rng(3)
    W = rng.normal(size=(4, 4))
    ranked = ranked_assignments(W, k=100)
    assert len(ranked) == 24 and len({tuple(p) for p in ranked}) == 24
    weights = [sum(W[i, p[i]] for i in range(4)) for p in ranked]
    assert all(a >= b - 1e-12 for a, b in itertools.pairwise(weights))
    assert best_assignment(W, forbidden=[(i, j) for i in range(4) for j in range(4)]) is None


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6])
def test_ban_lists_equal_brute_force(s, n: int) -> None:
    rng = np.random.default_rng(100 + n)
    perms_all = all_permutations(n)
    for kind in ["normal", "integer", "scaled"]:
        for _ in range(5):
            w, x, y = instance(rng, n, kind)
            for lam in [0.0, 1.5, math.inf]:
                q = lambda_query(lam)
                # Ban the best few (what integral recovery does) and some random others, as
                # numpy arrays, lists and tuples.
                top = [a.label for a in ask(s, w, x, y, {**q, "k": 3})]
                extra = perms_all[
                    rng.choice(len(perms_all), size=min(3, len(perms_all)), replace=False)
                ]
                ban = [top[0], list(map(int, top[-1])), *map(tuple, extra)]
                for k in (1, 4):
                    qk = {**q, "k": k}
                    check_answers(s, w, x, y, ask(s, w, x, y, qk, ban=ban), qk, banned=ban)


def test_banning_every_label_returns_nothing(s) -> None:
    w, x, y = instance(np.random.default_rng(1), 3)
    assert ask(s, w, x, y, lambda_query(1.0), ban=list(all_permutations(3))) == []


@pytest.mark.parametrize(
    ("margin_coef", "coef", "tiebreak"),
    [
        (1.0, {"hamming": 1.0, "size": -0.5}, None),  # Micro-F1's λ-oracle: m + H − λ|y|
        (1.0, {"loss": 0.5, "hamming": 0.25}, None),
        (0.0, {"size": 1.0}, (1.0, {"loss": -1.0})),  # primary constant: all tie
        (2.0, {"loss": -1.0}, None),
    ],
)
def test_generic_term_coefficients(s, margin_coef, coef, tiebreak) -> None:
    rng = np.random.default_rng(5)
    for _ in range(10):
        w, x, y = instance(rng, 5)
        q = {"coef": coef, "margin_coef": margin_coef, "tiebreak": tiebreak, "k": 3}
        check_answers(s, w, x, y, ask(s, w, x, y, q), q)


def test_predict_is_the_highest_scoring_permutation(s) -> None:
    rng = np.random.default_rng(2)
    for n in range(1, 7):
        w, x, _ = instance(rng, n)
        perms = all_permutations(n)
        scores = [float(w @ s.joint_feature(x, p)) for p in perms]
        assert float(w @ s.joint_feature(x, s.predict_one(w, x))) == pytest.approx(max(scores))


def test_joint_feature_and_terms(s) -> None:
    x = np.arange(2 * 2 * D, dtype=float).reshape(2, 2, D)
    assert np.array_equal(s.joint_feature(x, [1, 0]), x[0, 1] + x[1, 0])
    assert s.terms([1, 0], [0, 1]) == {"loss": 2.0, "size": 2.0, "hamming": 4.0}
    assert s.terms(np.array([0, 1]), (0, 1)) == {"loss": 0.0, "size": 2.0, "hamming": 0.0}
    assert s.loss([2, 0, 1], [2, 1, 0]) == 2.0


def test_the_native_adapter_gives_the_same_answers(s) -> None:
    """What bicrit's Rust core sees (``as_native``): same answers, batch calls over threads
    (serialised under the GIL), labels handed back unchanged."""
    rng = np.random.default_rng(4)
    X = [rng.normal(size=(4, 4, D)) for _ in range(8)]
    Y = [rng.permutation(4) for _ in range(8)]
    w = rng.normal(size=D)
    native = as_native(s)
    assert native.name == "assignment" and native.size_joint_feature == D
    assert dict(native.capabilities) == dict(Assignment.capabilities)
    direct = [s.oracle(w, x, y, {"loss": 1.0}, k=3) for x, y in zip(X, Y, strict=True)]
    through = native.batch_oracle(w, X, Y, {"loss": 1.0}, k=3, n_jobs=2)
    for d_answers, t_answers in zip(direct, through, strict=True):
        assert [tuple(a.label) for a in d_answers] == [tuple(t[0]) for t in t_answers]
        assert [a.margin for a in d_answers] == pytest.approx([t[1] for t in t_answers])
    banned = native.oracle(w, X[0], Y[0], {"loss": 1.0}, ban=[direct[0][0].label], k=2)
    assert [tuple(a[0]) for a in banned] == [tuple(a.label) for a in direct[0][1:3]]
    assert [tuple(p) for p in native.batch_predict(w, X)] == [tuple(s.predict_one(w, x)) for x in X]


def test_no_cone_oracle(s) -> None:
    w, x, y = instance(np.random.default_rng(0), 3)
    with pytest.raises(UnsupportedQueryError, match="cone"):
        s.oracle(w, x, y, {"loss": 1.0}, cone=Cone(0.5, 2.0))


@pytest.mark.parametrize(
    ("x", "y", "match"),
    [
        (np.zeros((3, 3, D)), [0, 0, 1], "permutation of range"),
        (np.zeros((3, 3, D)), [0, 1], "permutation of range"),
        (np.zeros((3, 3, D)), [0.5, 1, 2], "integer"),
        (np.zeros((3, 2, D)), [0, 1, 2], r"shape \(n, n, d\)"),
        (np.zeros((3, 3)), [0, 1, 2], r"shape \(n, n, d\)"),
        (np.zeros((3, 3, D + 1)), [0, 1, 2], "expected 3"),
        (np.full((2, 2, D), np.nan), [0, 1], "NaN"),
    ],
)
def test_bad_inputs_are_clear_errors(s, x, y, match: str) -> None:
    with pytest.raises(InvalidInputError, match=match):
        s.oracle(np.zeros(D), x, y, {"loss": 1.0})


def test_initialize_checks_data() -> None:
    with pytest.raises(InvalidInputError, match="not initialised"):
        _ = Assignment().size_joint_feature
    with pytest.raises(InvalidInputError, match="empty"):
        Assignment().initialize([], [])
    with pytest.raises(InvalidInputError, match="different feature counts"):
        Assignment().initialize([np.zeros((2, 2, 1)), np.zeros((2, 2, 3))], [[0, 1], [1, 0]])
    with pytest.raises(InvalidInputError, match=r"Y\[1\]"):
        Assignment().initialize([np.zeros((2, 2, 1))] * 2, [[0, 1], [1, 1]])
    with pytest.raises(InvalidInputError, match="2 instances but Y has 1"):
        Assignment().initialize([np.zeros((2, 2, 1))] * 2, [[0, 1]])
    # a gold label outside the label space is refused by the native adapter too
    with pytest.raises(InvalidInputError, match="permutation"):
        Assignment(1).instance_oracle(np.zeros(1), np.zeros((2, 2, 1)), [1, 1])
