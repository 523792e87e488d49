"""Hypothesis properties of bicrit.scores on random chains and trees: the loss is at least ψ at
any label (it is a maximum over labels, the gold label included), the convex hull's value bounds
the exact integral one, and decoded labels score at least as well as any other label."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from bicrit import scores

from .brute import chain_score, surrogate, tree_score, trees


@st.composite
def chains(draw):
    b, t, s = draw(st.integers(1, 3)), draw(st.integers(1, 5)), draw(st.integers(1, 4))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    u = np.round(rng.normal(size=(b, t, s)), draw(st.sampled_from([0, 1, 6])))  # ties too
    tr = np.round(rng.normal(size=(s, s)), 1)
    lengths = rng.integers(1, t + 1, size=b)
    gold = rng.integers(0, s, size=(b, t))
    other = rng.integers(0, s, size=(b, t))
    return u, tr, lengths, gold, other


@settings(max_examples=60, deadline=None)
@given(chains(), st.sampled_from(["margin", "slack", "probloss", "log", "beta"]))
def test_chain_loss_bounds_every_label(case, name):
    u, tr, lengths, gold, other = case
    arrays = {"unary": u, "transitions": tr}
    psi = surrogate(name)
    exact = scores.loss("chain", arrays, gold, surrogate=psi, lengths=lengths)
    hull = scores.loss("chain", arrays, gold, surrogate=psi, search="convex-hull", lengths=lengths)
    assert np.all(exact.loss >= -1e-12)
    assert np.all(hull.loss >= exact.loss - 1e-9 * (1 + np.abs(exact.loss)))
    best = scores.decode("chain", arrays, lengths=lengths)
    for i, n in enumerate(lengths):
        g0 = chain_score(u[i][:n], tr, None, None, gold[i][:n])
        m = chain_score(u[i][:n], tr, None, None, other[i][:n]) - g0
        loss = float(np.sum(other[i][:n] != gold[i][:n]))
        assert exact.loss[i] >= float(psi.value(m, loss)) - 1e-9 * (1 + abs(exact.loss[i]))
        assert best["scores"][i] >= m + g0 - 1e-9


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 4), st.integers(0, 2**32 - 1), st.booleans(), st.booleans())
def test_tree_loss_bounds_every_tree(n, seed, projective, multi_root):
    rng = np.random.default_rng(seed)
    arcs = rng.normal(size=(1, n + 1, n + 1))
    ts = trees(n, not multi_root, projective)
    gold = np.array([ts[rng.integers(len(ts))]])
    r = scores.loss(
        "tree", arcs, gold, surrogate="slack", projective=projective, multi_root=multi_root
    )
    g0 = tree_score(arcs[0], None, gold[0], None)
    want = max(
        (tree_score(arcs[0], None, h, None) - g0 + 1)
        * sum(a != b for a, b in zip(h, gold[0], strict=True))
        for h in ts
    )
    assert r.loss[0] == np.float64(want) or abs(r.loss[0] - want) <= 1e-9 * (1 + abs(want))
