"""SGD's optional Pegasos projection: the iterates and their average stay in the ball that holds
the optimum, ‖w‖² ≤ 2C·Σ_i ℓ_i(0)."""

from __future__ import annotations

import numpy as np
import pytest

import bicrit
from bicrit.learners import train


@pytest.mark.parametrize("average", ["weighted", "uniform", "none"])
def test_projected_sgd_stays_in_the_ball(average: str) -> None:
    rng = np.random.default_rng(3)
    n, d, K, C = 120, 6, 4, 1.0
    X = rng.normal(size=(n, d))
    Y = (X @ rng.normal(size=(d, K)) + 0.3 * rng.normal(size=(n, K)) > 0).astype(np.int8)
    s = bicrit.structure("multilabel", edges="full")
    s.initialize(X, Y)
    # slack rescaling at w = 0: every margin is 0, so ℓ_i(0) = max_y L(y, y_i) = K (all flipped)
    radius_sq = 2.0 * C * n * K
    w, _ = train(
        s, X, Y, surrogate="slack", learner="sgd", max_epochs=5, C=C, project=True, average=average
    )
    assert np.all(np.isfinite(w))
    assert float(w @ w) <= radius_sq * (1 + 1e-9)
    # without the projection the first steps leave the ball (what the projection is for)
    w0, _ = train(s, X, Y, surrogate="slack", learner="sgd", max_epochs=1, C=C, average="none")
    assert float(w0 @ w0) > radius_sq
