"""Max-marginals of the hierarchy label spaces (the node scores of ``HierarchicalSVM``) equal
brute-force enumeration of every label on random trees and DAGs — both label spaces, single
paths and multi-label — and are coherent with the hierarchy; bad input raises clear errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bicrit
from bicrit.errors import InvalidInputError
from tests.structures.test_hierarchy import children_of, label_space, random_parents

SPACES = [(labels, multi) for labels in ("any", "leaves") for multi in (True, False)]


def descendants(children: list[list[int]], v: int) -> set[int]:
    out, stack = set(), [v]
    while stack:
        u = stack.pop()
        if u not in out:
            out.add(u)
            stack.extend(children[u])
    return out


@settings(max_examples=150, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(2, 8),
    tree=st.booleans(),
    space=st.sampled_from(SPACES),
    integer=st.booleans(),
)
def test_max_marginals_equal_brute_force(seed, n, tree, space, integer) -> None:
    labels, multi = space
    rng = np.random.default_rng(seed)
    parents, root = random_parents(rng, n, 1 if tree else 3)
    s = bicrit.structures.HierarchyStructure(
        parents, root=root, labels=labels, multilabel=multi, n_features=1
    )
    # integer scores make ties common; real ones make them rare
    S = rng.integers(-3, 4, size=(3, n)).astype(float) if integer else rng.normal(size=(3, n))
    with_, without = s.max_marginals(S)
    assert with_.shape == without.shape == (3, n)
    space_labels = label_space(parents, root, labels, multi)
    ch = children_of(parents)
    for i in range(3):
        score = {tuple(y): float(S[i, y].sum()) for y in space_labels}
        for v in range(n):
            inside = [sc for y, sc in score.items() if v in y]
            outside = [sc for y, sc in score.items() if v not in y]
            assert with_[i, v] == pytest.approx(max(inside), abs=1e-9)
            if outside:
                assert without[i, v] == pytest.approx(max(outside), abs=1e-9)
            else:
                assert without[i, v] == -np.inf
            # coherence: a label containing v contains v's ancestors
            for c in descendants(ch, v):
                assert with_[i, c] <= with_[i, v] + 1e-9
                assert without[i, c] >= without[i, v] - 1e-9
        assert without[i, root] == -np.inf
        # the best label's score is the largest max-marginal
        assert np.max(with_[i]) == pytest.approx(max(score.values()), abs=1e-9)


def test_max_marginals_agree_with_the_oracle_on_a_large_dag() -> None:
    """On a DAG of 300 nodes (too large to enumerate), each node's with/without equals the
    value of the exact min-cut oracle's best label with the node's gain pushed to ±∞-like
    values, and the nodes of the predicted label are those with with > without."""
    rng = np.random.default_rng(3)
    parents, root = random_parents(rng, 300, 3)
    s = bicrit.structures.HierarchyStructure(
        parents, root=root, labels="any", multilabel=True, n_features=1
    )
    S = rng.normal(size=(4, 300)) - 1.0
    S[:, root] = 0.0
    with_, without = s.max_marginals(S, n_jobs=2)
    big = 1e6
    for i in range(4):
        gold = [np.array([root])]
        best = s.batch_oracle_scores(S[i : i + 1], gold)[0][0].label
        assert np.max(with_[i]) == pytest.approx(S[i, best].sum())
        delta = with_[i] - without[i]
        on = set(np.flatnonzero(delta > 1e-9).tolist())
        assert on == set(best.tolist())
        for v in rng.choice(300, size=20, replace=False).tolist():
            if v == root:
                continue
            push = S[i].copy()
            push[v] += big if v not in on else -big
            y = s.batch_oracle_scores(push[None], gold)[0][0].label
            value = S[i, y].sum()
            if v in on:
                assert without[i, v] == pytest.approx(value)
            else:
                assert with_[i, v] == pytest.approx(value)


def test_max_marginals_bad_input() -> None:
    s = bicrit.structures.HierarchyStructure([[], [0], [0]], labels="any", n_features=1)
    with pytest.raises(InvalidInputError, match="2 columns for 3 nodes"):
        s.max_marginals(np.zeros((2, 2)))
    with pytest.raises(InvalidInputError, match="2-D"):
        s.max_marginals(np.zeros(3))
    with pytest.raises(InvalidInputError, match="finite"):
        s.max_marginals(np.array([[0.0, np.nan, 1.0]]))
