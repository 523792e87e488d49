"""Reference implementation of NHSVM3's training loop: the numpy mini-batch loop that
``HierarchicalSVM._fit_nhsvm3`` ran before the native learner (``rust/bicrit-hierarchy/src/
nhsvm3.rs``) replaced it, kept here for the tests and the benchmark.

It minimises ½‖V‖² + C·Σ_i max(0, max_{y≠y_i} m(y)/L(y) + 1) (thesis eq. ``NHSVM3``) with dense
M × d updates: η_t = 1/(λ(t + 1)), λ = 1/(n·C), V ← (1 − η_tλ)V − (η_t/|B|)·Σ g_i with
g_i = (φ(x_i, ŷ) − φ(x_i, y_i))/L(ŷ) from the structure's ratio oracle, and returns the
t-weighted average V̄ (ρ_t = 2/(t + 1)). ``order="numpy"`` shuffles with numpy as the old loop
did; ``order="splitmix"`` reproduces the native learner's order (SplitMix64, Lemire's bounded
integers, Fisher–Yates — ``rust/bicrit-learners/src/rng.rs``) so the two can be compared
number for number.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

_MASK = (1 << 64) - 1


class SplitMix64:
    """SplitMix64 with Lemire's unbiased bounded integers, as ``bicrit_learners::rng::Rng``."""

    def __init__(self, seed: int) -> None:
        self.state = seed & _MASK

    def next_u64(self) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) & _MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        return z ^ (z >> 31)

    def below(self, bound: int) -> int:
        m = self.next_u64() * bound
        low = m & _MASK
        if low < bound:
            threshold = ((1 << 64) - bound) % bound
            while low < threshold:
                m = self.next_u64() * bound
                low = m & _MASK
        return m >> 64

    def shuffle(self, items: list[int]) -> None:
        for i in range(len(items) - 1, 0, -1):
            j = self.below(i + 1)
            items[i], items[j] = items[j], items[i]


def orders(kind: str, seed: int, n: int) -> Iterator[np.ndarray]:
    """The per-epoch instance orders of the old loop (``numpy``) or the native one."""
    if kind == "numpy":
        rng = np.random.default_rng(seed)
        while True:
            yield rng.permutation(n)
    elif kind == "splitmix":
        r = SplitMix64(seed)
        while True:
            order = list(range(n))
            r.shuffle(order)
            yield np.asarray(order)
    else:
        raise ValueError(kind)


def reference_nhsvm3(
    structure: Any,
    X: Any,
    Y: list[np.ndarray],
    alpha: np.ndarray,
    *,
    C: float,
    batch_size: int,
    epochs: int,
    seed: int = 0,
    order: str = "numpy",
    n_jobs: int | None = None,
    block_size: int | None = None,
) -> tuple[np.ndarray, list[float]]:
    """(V̄ as an M × d array, running objective per epoch) of the old Python loop.

    ``structure`` is the single-path hierarchy structure with ``loss="normalized"``,
    ``node_scale=√α``; ``Y`` the labels with the root; ``n_jobs`` the oracle's threads.
    ``block_size`` (None: ``batch_size``, the old loop): the inferences of a block of that many
    instances are made at the block's starting weights, its steps of ``batch_size`` (never
    spanning two blocks) then applied in order, as SGD does.
    """
    n, d = X.shape
    M = len(alpha)
    s = np.sqrt(alpha)
    lam = 1.0 / (n * C)
    V = np.zeros((M, d))
    Vbar = np.zeros((M, d))
    X64 = X.astype(np.float64)
    t = 0
    objectives = []
    it = orders(order, seed, n)
    block = batch_size if block_size is None else block_size
    for _ in range(epochs):
        perm = next(it)
        total = 0.0
        for k0 in range(0, n, block):
            bidx = perm[k0 : k0 + block]
            S = np.asarray(X64[bidx] @ V.T) * s
            found = structure.ratio_oracle_scores(S, [Y[i] for i in bidx], n_jobs=n_jobs)
            for b0 in range(0, len(bidx), batch_size):
                pos = np.arange(b0, min(b0 + batch_size, len(bidx)))
                idx = bidx[pos]
                values = np.asarray(found.values)[pos]
                t += 1
                Xb = X64[idx]
                total += float(values.sum())
                eta = 1.0 / (lam * (t + 1.0))
                V *= 1.0 - eta * lam
                act = np.flatnonzero(values > 0)
                if act.size:
                    D = np.zeros((len(idx), M))
                    for k in act.tolist():
                        c = 1.0 / found.losses[pos[k]]
                        D[k, found.labels[pos[k]]] += c
                        D[k, Y[idx[k]]] -= c
                    G = np.asarray(Xb.T @ D).T * s[:, None]
                    V -= (eta / len(idx)) * G
                rho_t = 2.0 / (t + 1.0)
                Vbar *= 1.0 - rho_t
                Vbar += rho_t * V
        objectives.append(0.5 * float(np.sum(V * V)) + C * total)
    return Vbar, objectives
