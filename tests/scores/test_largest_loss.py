"""Chains under the token Hamming loss at every score scale: the largest-loss query (λ = ∞: every
token wrong, a plain Viterbi without the gold tags) and the certificates taken from earlier
answers and from the bound g ≤ length (no oracle call) keep the loss the brute-force maximum of ψ
over every label. Large scores are where they act: the loss-augmented answer then has every
token wrong, and ProbLoss and slack rescaling need no second call to certify it."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from bicrit import scores

from .brute import chain_points, psi_max, surrogate


def _brute(name, u, tr, gold, lengths):
    return np.array(
        [
            psi_max(
                name, [p for p, _ in chain_points(u[i][:n], tr, None, None, list(gold[i][:n]), [])]
            )
            for i, n in enumerate(lengths)
        ]
    )


@st.composite
def chains(draw):
    b, t, s = draw(st.integers(1, 3)), draw(st.integers(1, 5)), draw(st.integers(1, 4))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    scale = draw(st.sampled_from([0.1, 1.0, 10.0, 300.0]))
    u = scale * np.round(rng.normal(size=(b, t, s)), draw(st.sampled_from([0, 1, 6])))  # ties too
    tr = scale * np.round(rng.normal(size=(s, s)), 1)
    lengths = rng.integers(1, t + 1, size=b)
    gold = rng.integers(0, s, size=(b, t))
    return u, tr, lengths, gold


@settings(max_examples=120, deadline=None)
@given(
    chains(),
    st.sampled_from(["slack", "probloss", "probloss-convex", "log", "beta"]),
    st.sampled_from(["auto", "convex-hull-ban", "convex-hull-kbest"]),
)
def test_chain_loss_is_the_brute_force_maximum_at_every_scale(case, name, search):
    u, tr, lengths, gold = case
    r = scores.loss(
        "chain",
        {"unary": u, "transitions": tr},
        gold,
        surrogate=surrogate(name),
        search=search,
        lengths=lengths,
    )
    want = _brute(name, u, tr, gold, lengths)
    np.testing.assert_allclose(r.loss, want, rtol=1e-9, atol=1e-9)


def test_an_all_wrong_loss_augmented_answer_is_certified_without_a_second_call():
    # unary scores favouring a tag other than gold's everywhere: margin's answer (λ = 1) gets
    # every token wrong, g = length is the largest g any label has, so ProbLoss's certificate
    # at λ = ∞ needs no call
    rng = np.random.default_rng(7)
    b, t, s = 3, 4, 3
    gold = rng.integers(0, s, size=(b, t))
    u = rng.normal(size=(b, t, s))
    u[np.arange(b)[:, None], np.arange(t)[None, :], (gold + 1) % s] += 50.0
    tr = rng.normal(size=(s, s))
    lengths = np.array([4, 3, 1])
    r = scores.loss(
        "chain", {"unary": u, "transitions": tr}, gold, surrogate="probloss", lengths=lengths
    )
    np.testing.assert_allclose(r.loss, _brute("probloss", u, tr, gold, lengths), rtol=1e-9)
    assert list(r.calls) == [1, 1, 1]
