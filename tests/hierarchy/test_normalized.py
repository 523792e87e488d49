"""The normalized model pieces against brute force on small trees and DAGs: the normalized
feature map (‖φ̃(x, y)‖ = ‖x‖), the normalized loss √(Σ_{y△y_i} α) through the structure's
single-path oracle, NHSVM3's normalized-difference oracle, and the multi-label leaf-Hamming
approximation."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import bicrit
from bicrit.errors import InvalidInputError, InvalidParameterError, UnsupportedQueryError
from bicrit.hierarchy import (
    Hierarchy,
    normalized_params,
    normalized_structure,
    power_alpha,
    with_root,
)
from bicrit.structures import Cone
from tests.hierarchy.reference import children_of, leaf_ancestors, random_parents
from tests.structures.brute import assert_matches, brute_force


def _ancestors(parents: list[list[int]], t: int) -> set[int]:
    seen, stack = {t}, [t]
    while stack:
        for p in parents[stack.pop()]:
            if p not in seen:
                seen.add(p)
                stack.append(p)
    return seen


def _single_paths(parents: list[list[int]], labels: str) -> list[np.ndarray]:
    ch = children_of(parents)
    ts = [v for v in range(len(parents)) if labels == "any" or not ch[v]]
    return [np.array(sorted(_ancestors(parents, t)), dtype=np.int64) for t in ts]


def _problem(seed: int, labels: str):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 10))
    parents, root = random_parents(rng, n, 1 if seed % 2 == 0 else 3)
    rho = [2.0, 1.5, 1.1][seed % 3]
    alpha = power_alpha(parents, rho, root=root)
    if seed % 5 == 4:  # weights with exact zeros (flat-like α) exercise L = 0 labels
        alpha = np.where(rng.random(n) < 0.4, 0.0, alpha)
    d = int(rng.integers(1, 4))
    s = normalized_structure(parents, alpha, labels=labels, n_features=d)
    w = rng.integers(-2, 3, size=n * d).astype(float)
    x = rng.integers(-2, 3, size=d).astype(float)
    return parents, root, alpha, s, w, x, _single_paths(parents, labels)


def _ref_loss(alpha, y, yt) -> float:
    return math.sqrt(sum(alpha[v] for v in set(map(int, y)) ^ set(map(int, yt))))


@pytest.mark.parametrize("seed", range(80))
@pytest.mark.parametrize("labels", ["leaves", "any"])
def test_normalized_loss_oracle_equals_brute_force(seed: int, labels: str) -> None:
    _, _, alpha, s, w, x, space = _problem(seed, labels)
    rng = np.random.default_rng(seed + 7)
    gold = space[rng.integers(len(space))]
    for y in space:
        assert s.terms(y, gold)["loss"] == pytest.approx(_ref_loss(alpha, y, gold), abs=1e-12)
    for lam in (0.0, 0.5, 1.0, 3.0):
        coef = {"loss": lam}
        for k in (1, 3):
            ban = [space[rng.integers(len(space))]] if k == 3 else []
            cone = Cone(0.0, 2.0, True, False) if lam == 3.0 else None
            found = s.oracle(w, x, gold, coef, k=k, ban=ban, cone=cone)
            expected = brute_force(s, w, x, gold, space, coef, ban=ban, cone=cone)
            assert_matches(found, expected, k, coef, 1.0, None)


@pytest.mark.parametrize("seed", range(40))
def test_normalized_feature_map_has_the_norm_of_x_on_leaf_labels(seed: int) -> None:
    parents, _, _, _, _, x, _ = _problem(seed, "leaves")
    alpha = power_alpha(parents, 2.0)
    s = normalized_structure(parents, alpha, n_features=len(x))
    _, sets = leaf_ancestors(parents)
    for a in sets:
        phi = s.joint_feature(x, np.array(sorted(a)))
        assert np.linalg.norm(phi) == pytest.approx(np.linalg.norm(x), rel=1e-9)
    # and the normalized loss is the distance of the normalized class attributes
    for a, b in itertools.pairwise(sets):
        ya, yb = np.array(sorted(a)), np.array(sorted(b))
        diff = s.joint_feature(np.ones(len(x)), ya) - s.joint_feature(np.ones(len(x)), yb)
        dist = np.linalg.norm(diff) / math.sqrt(len(x))
        assert s.terms(ya, yb)["loss"] == pytest.approx(dist, rel=1e-9, abs=1e-12)


def _nhsvm3_brute(s, w, x, gold, space, offset: float = 1.0) -> float:
    g = float(w @ s.joint_feature(x, gold))
    best = 0.0
    for y in space:
        if np.array_equal(y, gold):
            continue
        loss = s.terms(y, gold)["loss"]
        if loss > 0:
            best = max(best, (float(w @ s.joint_feature(x, y)) - g) / loss + offset)
    return best


@pytest.mark.parametrize("seed", range(80))
@pytest.mark.parametrize("labels", ["leaves", "any"])
def test_nhsvm3_oracle_equals_brute_force(seed: int, labels: str) -> None:
    parents, _, _, s, w, x, space = _problem(seed, labels)
    rng = np.random.default_rng(seed + 11)
    golds = [space[i] for i in rng.integers(len(space), size=4)]
    X = np.tile(x, (len(golds), 1))
    for offset in (1.0, 0.25):
        res = s.ratio_oracle(w, X, golds, offset=offset)
        for i, gold in enumerate(golds):
            want = _nhsvm3_brute(s, w, x, gold, space, offset)
            assert res.values[i] == pytest.approx(want, abs=1e-9)
            if res.values[i] == 0.0:
                assert np.array_equal(res.labels[i], gold)
            else:
                y = res.labels[i]
                m = float(w @ (s.joint_feature(x, y) - s.joint_feature(x, gold)))
                assert res.margins[i] == pytest.approx(m, abs=1e-9)
                assert res.losses[i] == pytest.approx(s.terms(y, gold)["loss"], abs=1e-12)
                assert m / res.losses[i] + offset == pytest.approx(want, abs=1e-9)
        # the same from precomputed node scores
        n, d = len(parents), len(x)
        sigma = np.asarray(s.node_scale) * (w.reshape(n, d) @ x)
        res2 = s.ratio_oracle_scores(np.tile(sigma, (len(golds), 1)), golds, offset=offset)
        assert res2.values == pytest.approx(res.values, abs=1e-12)


def test_nhsvm3_on_a_tiny_tree_by_hand() -> None:
    # root → a, b; α = (1/3, 2/3, 2/3) (ρ = 2 gives r = 2/3: use explicit weights here)
    h = Hierarchy.from_parent_array(np.array([-1, 0, 0]))
    alpha = np.array([0.5, 0.5, 0.5])
    s = normalized_structure(h, alpha, n_features=1)
    w = np.array([0.0, 1.0, 3.0])  # node rows; x = 1 → scores √α·w
    res = s.ratio_oracle(w, np.ones((1, 1)), [[0, 1]])
    # y = {0, 2}: m = √.5·(3 − 1), L = √(.5 + .5) = 1 → value = √2 + 1
    assert res.values[0] == pytest.approx(math.sqrt(2) + 1)
    assert res.labels[0].tolist() == [0, 2]
    res = s.ratio_oracle(w, np.ones((1, 1)), [[0, 2]])
    # y = {0, 1}: m = −√2, value = 1 − √2 < 0 → clipped: the gold, value 0
    assert res.values[0] == 0.0 and res.labels[0].tolist() == [0, 2]


def test_multilabel_uses_the_leaf_hamming_approximation() -> None:
    parents = [[], [0], [0], [1], [1], [2], [2]]
    alpha = power_alpha(parents, 2.0)
    p = normalized_params(alpha, multilabel=True)
    assert p["loss"] == "leaf" and np.all(p["node_loss_weight"] == 1.0)
    assert p["node_scale"] == pytest.approx(np.sqrt(alpha))
    s = normalized_structure(parents, alpha, multilabel=True, n_features=2)
    y, yt = np.array([0, 1, 3, 4]), np.array([0, 1, 3, 2, 5])
    assert s.terms(y, np.sort(yt))["loss"] == 2.0  # leaves 4 (y only) and 5 (y_i only)
    rng = np.random.default_rng(0)
    w, x = rng.standard_normal(14), rng.standard_normal(2)
    ch = children_of(parents)
    space = []
    for mask in range(1 << len(parents)):
        z = {v for v in range(len(parents)) if mask >> v & 1}
        if 0 in z and all(p in z for v in z for p in parents[v]):
            terms = [v for v in z if not any(c in z for c in ch[v])]
            if all(not ch[t] for t in terms):
                space.append(np.array(sorted(z)))
    gold = space[3]
    found = s.oracle(w, x, gold, {"loss": 1.0})
    assert_matches(
        found, brute_force(s, w, x, gold, space, {"loss": 1.0}), 1, {"loss": 1.0}, 1.0, None
    )


def test_normalized_pieces_refuse_bad_input() -> None:
    parents = [[], [0], [0]]
    with pytest.raises(InvalidParameterError, match="leaf-Hamming"):
        normalized_params([0.5, 0.5, 0.5], multilabel=True, loss="normalized")
    with pytest.raises(InvalidParameterError, match="multilabel=False"):
        bicrit.structure("hierarchy", hierarchy=parents, loss="normalized", n_features=1)
    with pytest.raises(InvalidInputError, match="non-negative"):
        normalized_params([0.5, -0.5, 0.5])
    with pytest.raises(InvalidInputError, match="shape"):
        normalized_structure(parents, [0.5, 0.5], n_features=1)
    s = normalized_structure(parents, [0.5, 0.5, 0.5], multilabel=True, n_features=1)
    with pytest.raises(UnsupportedQueryError, match="multilabel=False"):
        s.ratio_oracle(np.zeros(3), np.ones((1, 1)), [[0, 1]])
    s = normalized_structure(parents, [0.5, 0.5, 0.5], n_features=1)
    with pytest.raises(InvalidInputError, match="not a leaf"):
        s.ratio_oracle(np.zeros(3), np.ones((1, 1)), [[0]])
    with pytest.raises(InvalidInputError, match="rows"):
        s.ratio_oracle(np.zeros(3), np.ones((2, 1)), [[0, 1]])
    assert with_root([[1]], 0)[0].tolist() == [0, 1]
