"""Warm starts across batches (``bicrit.scores.WarmCache``): over a training-like loop whose
scores drift from epoch to epoch, the loss with the cache equals the brute-force maximum of ψ
(computed here from the definitions), the cache saves oracle calls, stays within its memory
budget, and refuses bad use with clear errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bicrit import scores
from bicrit.errors import InvalidInputError

from .brute import chain_points, psi_max, surrogate, tree_score, trees


def _chain_brute(name, u, tr, gold, lengths):
    out = []
    for i, n in enumerate(lengths):
        pts = [p for p, _ in chain_points(u[i][:n], tr, None, None, list(gold[i][:n]), [0])]
        out.append(psi_max(name, pts))
    return np.array(out)


def _tree_brute(name, arcs, heads, lengths, projective):
    psi = surrogate(name)
    out = []
    for i, m in enumerate(lengths):
        gh = list(heads[i, :m])
        g0 = tree_score(arcs[i], None, gh, None)
        best = -np.inf
        for h in trees(int(m), True, projective):
            wrong = sum(a != c for a, c in zip(h, gh, strict=True))
            best = max(best, float(psi.value(tree_score(arcs[i], None, h, None) - g0, wrong)))
        out.append(best)
    return np.array(out)


@pytest.mark.parametrize("name", ["slack", "probloss", "beta", "log"])
def test_chain_loss_with_a_warm_cache_is_the_brute_force_maximum_every_epoch(name):
    rng = np.random.default_rng(abs(hash(("warm-chain", name))) % 2**32)
    b, t, s = 6, 4, 3
    u = rng.normal(size=(b, t, s))
    tr = rng.normal(size=(s, s))
    gold = rng.integers(0, s, size=(b, t))
    lengths = rng.integers(1, t + 1, size=b)
    ids = np.arange(100, 100 + b)
    cache = scores.WarmCache()
    psi = surrogate(name)
    for epoch in range(5):
        # the scores move a little each epoch, as under training; batches visit a subset
        u = u + 0.3 * rng.normal(size=u.shape)
        tr = tr + 0.3 * rng.normal(size=tr.shape)
        for part in (slice(0, 3), slice(3, 6)):
            kw = {"surrogate": psi, "lengths": lengths[part]}
            arrays = {"unary": u[part], "transitions": tr}
            warm = scores.loss("chain", arrays, gold[part], cache=cache, ids=ids[part], **kw)
            cold = scores.loss("chain", arrays, gold[part], **kw)
            want = _chain_brute(name, u[part], tr, gold[part], lengths[part])
            np.testing.assert_allclose(warm.loss, want, rtol=1e-9, atol=1e-12, err_msg=f"{epoch}")
            np.testing.assert_allclose(cold.loss, want, rtol=1e-9, atol=1e-12)
            # the answer's (h, g) reproduce the loss
            h, g = warm.answer.points[:, 0, 0], warm.answer.points[:, 0, 1]
            single = warm.answer.weights[:, 0] == 1.0
            vals = np.array([psi.value(a, c) for a, c in zip(h, g, strict=True)])
            np.testing.assert_allclose(vals[single], warm.loss[single], rtol=1e-9, atol=1e-12)
    assert len(cache) == b
    assert cache.hits == 4 * b and cache.misses == b
    assert cache.kind == "chain"


@pytest.mark.parametrize("name", ["slack", "probloss"])
@pytest.mark.parametrize("projective", [True, False])
def test_tree_loss_with_a_warm_cache_is_the_brute_force_maximum_every_epoch(name, projective):
    rng = np.random.default_rng(abs(hash(("warm-tree", name, projective))) % 2**32)
    b, n = 4, 4
    arcs = rng.normal(size=(b, n + 1, n + 1))
    lengths = rng.integers(2, n + 1, size=b)
    heads = np.zeros((b, n), dtype=int)
    for i, m in enumerate(lengths):
        ts = trees(int(m), True, projective)
        heads[i, :m] = ts[rng.integers(len(ts))]
    cache = scores.WarmCache()
    for epoch in range(4):
        arcs = arcs + 0.3 * rng.normal(size=arcs.shape)
        kw = {"surrogate": name, "lengths": lengths, "projective": projective}
        r = scores.loss("tree", arcs, heads, cache=cache, ids=np.arange(b), **kw)
        want = _tree_brute(name, arcs, heads, lengths, projective)
        np.testing.assert_allclose(r.loss, want, rtol=1e-9, atol=1e-12, err_msg=f"{epoch}")


def test_the_cache_saves_oracle_calls_when_the_scores_repeat():
    rng = np.random.default_rng(3)
    b, t, s = 16, 12, 5
    arrays = {"unary": rng.normal(size=(b, t, s)), "transitions": rng.normal(size=(s, s))}
    gold = rng.integers(0, s, size=(b, t))
    cache = scores.WarmCache()
    ids = np.arange(b)
    first = scores.loss("chain", arrays, gold, surrogate="probloss", cache=cache, ids=ids)
    again = scores.loss("chain", arrays, gold, surrogate="probloss", cache=cache, ids=ids)
    np.testing.assert_array_equal(first.loss, again.loss)
    assert again.calls.sum() < first.calls.sum()
    # margin (one loss-augmented call) does not touch the cache
    m = scores.loss("chain", arrays, gold, surrogate="margin", cache=scores.WarmCache(), ids=ids)
    assert (m.calls == 1).all()


def test_a_cache_entry_that_does_not_fit_the_example_is_ignored():
    rng = np.random.default_rng(4)
    cache = scores.WarmCache()
    s = 4
    for t in (5, 3):  # the same id for a sequence of another length: a stale hint
        arrays = {"unary": rng.normal(size=(1, t, s)), "transitions": rng.normal(size=(s, s))}
        gold = rng.integers(0, s, size=(1, t))
        r = scores.loss("chain", arrays, gold, surrogate="slack", cache=cache, ids=[7])
        want = _chain_brute("slack", arrays["unary"], arrays["transitions"], gold, [t])
        np.testing.assert_allclose(r.loss, want, rtol=1e-9, atol=1e-12)


def test_the_cache_stays_within_its_budget():
    rng = np.random.default_rng(5)
    b, t, s = 32, 10, 6
    cache = scores.WarmCache(max_bytes=4000)
    for k in range(6):
        arrays = {"unary": rng.normal(size=(b, t, s)), "transitions": rng.normal(size=(s, s))}
        gold = rng.integers(0, s, size=(b, t))
        ids = np.arange(k * b, (k + 1) * b)
        scores.loss("chain", arrays, gold, surrogate="slack", cache=cache, ids=ids)
        assert cache.nbytes <= cache.max_bytes
    assert 0 < len(cache) < 6 * b
    cache.clear()
    assert len(cache) == 0 and cache.nbytes == 0 and cache.kind is None


def test_bad_cache_use_raises_clear_errors():
    rng = np.random.default_rng(6)
    arrays = {"unary": rng.normal(size=(2, 3, 3)), "transitions": rng.normal(size=(3, 3))}
    gold = rng.integers(0, 3, size=(2, 3))
    cache = scores.WarmCache()
    with pytest.raises(InvalidInputError, match="ids"):
        scores.loss("chain", arrays, gold, surrogate="slack", cache=cache)
    with pytest.raises(InvalidInputError, match="cache"):
        scores.loss("chain", arrays, gold, surrogate="slack", ids=[0, 1])
    with pytest.raises(InvalidInputError, match=r"ids must have shape \[2\]"):
        scores.loss("chain", arrays, gold, surrogate="slack", cache=cache, ids=[0, 1, 2])
    with pytest.raises(InvalidInputError, match="WarmCache"):
        scores.loss("chain", arrays, gold, surrogate="slack", cache={}, ids=[0, 1])
    scores.loss("chain", arrays, gold, surrogate="slack", cache=cache, ids=[0, 1])
    arcs = rng.normal(size=(2, 3, 3))
    with pytest.raises(InvalidInputError, match="one cache per loss"):
        scores.loss("tree", arcs, [[0, 1], [2, 0]], surrogate="slack", cache=cache, ids=[0, 1])
    with pytest.raises(Exception, match="max_bytes"):
        scores.WarmCache(max_bytes=0)


@settings(max_examples=25, deadline=None)
@given(
    t=st.integers(1, 4),
    s=st.integers(2, 3),
    seed=st.integers(0, 2**32 - 1),
    step=st.floats(0.0, 2.0),
    name=st.sampled_from(["slack", "probloss", "beta"]),
)
def test_warm_and_cold_losses_agree_and_are_exact(t, s, seed, step, name):
    """Any drift of the scores between visits: the warm-started loss is the brute-force one."""
    rng = np.random.default_rng(seed)
    b = 3
    u = rng.normal(size=(b, t, s))
    tr = rng.normal(size=(s, s))
    gold = rng.integers(0, s, size=(b, t))
    cache = scores.WarmCache()
    for _ in range(3):
        arrays = {"unary": u, "transitions": tr}
        r = scores.loss(
            "chain", arrays, gold, surrogate=surrogate(name), cache=cache, ids=np.arange(b)
        )
        want = _chain_brute(name, u, tr, gold, [t] * b)
        np.testing.assert_allclose(r.loss, want, rtol=1e-9, atol=1e-12)
        u = u + step * rng.normal(size=u.shape)
        tr = tr + step * rng.normal(size=tr.shape)
