"""Issue 5, item 4(d): the searches' comparison table (thesis table ``tabel:loo_comparison``) on
point clouds recorded from a chain (NER) model during training.

Recording
    A chain is trained on a ``scale`` fraction of CoNLL-2002 Spanish with slack rescaling and the
    warm-started convex-hull search (SGD, the step of :data:`bicrit.reproduce.ner.SGD`); its
    averaged weights are kept after every epoch. For
    ``n_instances`` training sentences, each instance's label set is fixed once: **every**
    label (``cloud = "enumerated"``) when the sentence has at most ``max_enumerate`` tokens,
    else the union over the epochs of the k-best labels of the λ-oracle at λ ∈ :data:`LAMBDAS`
    (``cloud = "kbest"``). Each label is then scored at each epoch's weights — the point
    (h, g) = (m(y), Hamming(y, y_i)) computed independently in numpy from the chain's weight
    layout — giving one :class:`bicrit.PointSetOracle` per (instance, epoch). Labels keep their
    position across epochs, so a search can be warm-started from the previous epoch's result.

Comparison (ψ = slack rescaling ``(h + 1)·g``; ProbLoss for the hull searches too)
    Every search runs on every cloud: ``sarawagi`` (given ξ_i = half the optimum, a cutting-plane
    slack below the violation), ``binary``, ``bisecting``, ``angular`` (the point set answers the
    constrained oracle), ``convex-hull`` cold and warm (seeded with the same instance's result at
    the previous epoch), ``convex-hull-ban``, ``convex-hull-kbest``. Reported per search: mean
    oracle calls per inference (and by kind), mean wall time per inference (µs, through the
    Python binding), ``exact`` — the fraction of inferences whose best *integral* label reaches
    the brute-force maximum of ψ over the cloud — and, for the relaxed convex-hull search,
    ``hull_exact``: its value equals the brute-force maximum of ψ over the cloud's convex hull.

In-training calls (``source = "training"``)
    The same chain trained with each search the SGD learner accepts on chains (angular needs a
    cone oracle, which chains lack; sarawagi needs cutting plane): calls per inference and
    fractional answers as the Trainer counts them, with warm starts.

Run: ``python -m bicrit.reproduce.searches --scale 0.05 [--seeds N] [--out DIR]``.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

import bicrit
from bicrit._atomic import atomic_write
from bicrit.learners import Learner
from bicrit.learners.fit import Fit, Training, averaged_weights
from bicrit.reproduce import ner
from bicrit.reproduce._seq_common import fit, main, sklearn_c
from bicrit.structures.base import lambda_query

__all__ = [
    "LAMBDAS",
    "SEARCHES",
    "Cloud",
    "chain_points",
    "hull_max",
    "record",
    "run",
    "run_searches",
]

DATASET = "conll2002/esp"
LAMBDAS = (0.0, 0.25, 0.5, 1.0, 2.0, 4.0, math.inf)

#: Table rows: (row name, registry search, warm-started from the previous epoch).
SEARCHES: tuple[tuple[str, str, bool], ...] = (
    ("sarawagi", "sarawagi", False),
    ("binary", "binary", False),
    ("bisecting", "bisecting", False),
    ("angular", "angular", False),
    ("convex-hull (cold)", "convex-hull", False),
    ("convex-hull (warm)", "convex-hull", True),
    ("convex-hull-ban", "convex-hull-ban", False),
    ("convex-hull-ban (warm)", "convex-hull-ban", True),
    ("convex-hull-kbest", "convex-hull-kbest", False),
)

#: Searches the product form needs (skipped for ProbLoss).
PRODUCT_ONLY = {"sarawagi", "binary", "bisecting", "angular"}

#: Searches of the in-training rows (SGD on a chain).
TRAINING_SEARCHES = ("convex-hull", "convex-hull-ban", "convex-hull-kbest", "bisecting", "binary")


class Cloud:
    """The label set of one instance and its points at each recorded epoch."""

    def __init__(self, instance: int, kind: str, labels: np.ndarray, gold: int) -> None:
        self.instance = instance
        self.kind = kind
        self.labels = labels  # (n_labels, T) int
        self.gold = gold
        self.points: list[tuple[np.ndarray, np.ndarray]] = []  # per epoch: (h, g)


def chain_points(
    w: np.ndarray, x: Any, labels: np.ndarray, gold: np.ndarray, n_states: int
) -> tuple[np.ndarray, np.ndarray]:
    """``(m, L)`` of every row of ``labels`` for a chain sentence ``x`` (T × d, sparse): the
    margin m(y) = score(y) − score(gold) from the weight layout ``[W (f·S + s), A (from·S + to),
    start, end]`` and the token Hamming loss — independent of the native oracle."""
    S = n_states
    d = x.shape[1]
    W = w[: d * S].reshape(d, S)
    A = w[d * S : d * S + S * S].reshape(S, S)
    start = w[d * S + S * S : d * S + S * S + S]
    end = w[d * S + S * S + S :]
    U = np.asarray(x @ W)  # (T, S)

    def score(ys: np.ndarray) -> np.ndarray:
        t = np.arange(ys.shape[1])
        s = U[t, ys].sum(axis=1) + start[ys[:, 0]] + end[ys[:, -1]]
        if ys.shape[1] > 1:
            s = s + A[ys[:, :-1], ys[:, 1:]].sum(axis=1)
        return s

    m = score(labels) - score(gold[None, :])[0]
    loss = (labels != gold[None, :]).sum(axis=1).astype(float)
    return m, loss


def _hull(h: np.ndarray, g: np.ndarray) -> np.ndarray:
    """Vertices of the convex hull of the points, in order (Andrew's monotone chain; the
    boundary closes back to the first vertex)."""
    pts = sorted(set(zip(h.tolist(), g.tolist(), strict=True)))
    if len(pts) <= 2:
        return np.array(pts)

    def half(points: list[tuple[float, float]]) -> list[tuple[float, float]]:
        out: list[tuple[float, float]] = []
        for p in points:
            while len(out) >= 2:
                (x1, y1), (x2, y2) = out[-2], out[-1]
                if (x2 - x1) * (p[1] - y1) - (y2 - y1) * (p[0] - x1) <= 0:
                    out.pop()
                else:
                    break
            out.append(p)
        return out

    lower, upper = half(pts), half(pts[::-1])
    return np.array(lower[:-1] + upper[:-1] + [lower[0]])


def hull_max(psi: Any, h: np.ndarray, g: np.ndarray, iterations: int = 200) -> float:
    """Brute-force maximum of ψ over the convex hull of the points: it lies on the hull's
    boundary (ψ increases in both arguments), and along each edge ψ is unimodal (quasi-concave),
    so a golden-section search per edge (all edges at once) finds it to ~1e-40 in t — maxima at
    tiny t occur when margins are large."""
    v = _hull(h, g)
    best = float(np.max(psi.value(v[:, 0], v[:, 1])))
    if len(v) < 2:
        return best
    h0, g0 = v[:-1, 0], v[:-1, 1]
    dh, dg = v[1:, 0] - h0, v[1:, 1] - g0

    def f(t: np.ndarray) -> np.ndarray:
        return np.asarray(psi.value(h0 + t * dh, g0 + t * dg), dtype=float)

    r = (math.sqrt(5.0) - 1.0) / 2.0
    a, b = np.zeros(len(h0)), np.ones(len(h0))
    c, d = b - r * (b - a), a + r * (b - a)
    fc, fd = f(c), f(d)
    for _ in range(iterations):
        left = fc >= fd  # the maximum is in [a, d]
        b = np.where(left, d, b)
        a = np.where(left, a, c)
        c2, d2 = b - r * (b - a), a + r * (b - a)
        c, d = c2, d2
        fc, fd = f(c), f(d)
    return max(best, float(np.max(fc)), float(np.max(fd)))


def _kbest_labels(s: Any, w: np.ndarray, x: Any, y: np.ndarray, k: int) -> list[tuple[int, ...]]:
    out = []
    for lam in LAMBDAS:
        q = lambda_query(lam)
        for a in s.oracle(
            w, x, y, q["coef"], margin_coef=q["margin_coef"], tiebreak=q["tiebreak"], k=k
        ):
            out.append(tuple(int(v) for v in a.label))
    return out


def record(
    scale: float = 0.05,
    seed: int = 0,
    *,
    epochs: int = 3,
    n_instances: int = 40,
    max_enumerate: int = 5,
    k: int = 50,
    lam: float = ner.LAM,
    root: Path | None = None,
) -> tuple[list[Cloud], Any, list[dict[str, Any]]]:
    """Trains the chain (slack, warm convex hull) and records the clouds (module docstring);
    returns ``(clouds, corpus, per-epoch training stats)``."""
    corpus = ner.prepare(DATASET, scale, seed, root=root)
    s = corpus.structure()
    params = {"C": sklearn_c(lam, corpus.n_train), "random_state": seed, **ner.SGD}
    training = Training(
        s, *s.native_inputs(corpus.X_train, corpus.Y_train), Learner("sgd", **params)
    )
    weights: list[np.ndarray] = []
    stats = (
        Fit(
            training.phases("slack", "convex-hull", epochs),
            tol=None,
            certified=False,
            callbacks=[lambda e: weights.append(averaged_weights(e.runner))],
        )
        .run()
        .rows
    )
    X, offsets = corpus.X_train
    rng = np.random.default_rng(seed)
    order = rng.permutation(corpus.n_train)[:n_instances]
    S = s.n_states
    clouds = []
    for i in order.tolist():
        x = X[offsets[i] : offsets[i + 1]]
        y = corpus.Y_train[i]
        n_tokens = len(y)
        if n_tokens <= max_enumerate:
            labels = np.array(list(itertools.product(range(S), repeat=n_tokens)), dtype=np.int64)
            kind = "enumerated"
        else:
            found = {tuple(y.tolist())}
            for w in weights:
                found.update(_kbest_labels(s, w, x, y, k))
            labels = np.array(sorted(found), dtype=np.int64)
            kind = "kbest"
        gold = int(np.flatnonzero((labels == y[None, :]).all(axis=1))[0])
        c = Cloud(i, kind, labels, gold)
        for w in weights:
            c.points.append(chain_points(w, x, labels, y, S))
        clouds.append(c)
    return clouds, corpus, stats


def _result_value(psi: Any, r: Any) -> float:
    """ψ of the best integral label of an answer (both edge ends for a fractional one)."""
    if not r.points:
        return 0.0
    return max(0.0, max(float(psi.value(a, b)) for a, b in r.points))


def run_searches(clouds: Sequence[Cloud], surrogate: str = "slack") -> pl.DataFrame:
    """Every search on every (instance, epoch) cloud: one row per inference."""
    psi = bicrit.surrogate(surrogate)
    rows = []
    for c in clouds:
        prev: dict[str, Any] = {}
        for epoch, (h, g) in enumerate(c.points, start=1):
            best = max(0.0, float(np.max(psi.value(h, g))))
            hmax = max(0.0, hull_max(psi, h, g))
            tol = 1e-7 * max(1.0, abs(best))
            for row_name, name, warm in SEARCHES:
                if name in PRODUCT_ONLY and surrogate != "slack":
                    continue
                if warm and epoch == 1:
                    continue
                oracle = bicrit.PointSetOracle(h, g, gold=c.gold)
                xi = 0.5 * best if name == "sarawagi" else None
                t0 = time.perf_counter()
                r = bicrit.search(name, oracle, psi, warm=prev.get(name) if warm else None, xi=xi)
                seconds = time.perf_counter() - t0
                if not warm:
                    prev[name] = r
                integral = _result_value(psi, r)
                rows.append(
                    {
                        "surrogate": surrogate,
                        "search": row_name,
                        "instance": c.instance,
                        "cloud": c.kind,
                        "n_labels": len(h),
                        "epoch": epoch,
                        "calls": r.calls["total"],
                        "calls_lambda": r.calls.get("lambda", 0),
                        "calls_extreme": r.calls.get("extreme", 0),
                        "calls_cone": r.calls.get("cone", 0),
                        "calls_ban": r.calls.get("ban", 0) + r.calls.get("kbest", 0),
                        "time_us": seconds * 1e6,
                        "fractional": r.fractional,
                        "exact": integral >= best - tol,
                        "hull_exact": abs(r.value - hmax) <= 1e-6 * max(1.0, abs(hmax)),
                        "value": r.value,
                        "optimum": best,
                        "hull_optimum": hmax,
                    }
                )
    return pl.DataFrame(rows)


def summarize(per: pl.DataFrame) -> pl.DataFrame:
    """Means per surrogate × search (the comparison table)."""
    return (
        per.group_by(["surrogate", "search"], maintain_order=True)
        .agg(
            pl.len().alias("inferences"),
            pl.col("calls").mean().alias("calls_per_inference"),
            pl.col("calls_lambda").mean(),
            pl.col("calls_extreme").mean(),
            pl.col("calls_cone").mean(),
            pl.col("calls_ban").mean().alias("calls_ban_kbest"),
            pl.col("time_us").mean().alias("time_us"),
            pl.col("exact").mean().alias("exact"),
            pl.col("hull_exact").mean().alias("hull_exact"),
            pl.col("fractional").mean().alias("fractional"),
        )
        .with_columns(pl.lit("clouds").alias("source"))
    )


def training_calls(
    corpus: Any, *, epochs: int, lam: float, seed: int, surrogate: str = "slack"
) -> pl.DataFrame:
    """Calls per inference as the Trainer counts them, for each search of
    :data:`TRAINING_SEARCHES` (same data, epochs and seed)."""
    rows = []
    for name in TRAINING_SEARCHES:
        result = fit(
            corpus.structure(),
            corpus.X_train,
            corpus.Y_train,
            surrogate=surrogate,
            search=name,
            epochs=epochs,
            params={"C": sklearn_c(lam, corpus.n_train), "random_state": seed, **ner.SGD},
        )
        rows.append(
            {
                "surrogate": surrogate,
                "search": f"{name} (training, warm)",
                "inferences": sum(h["inferences"] for h in result.history),
                "calls_per_inference": result.calls_per_inference,
                "calls_lambda": None,
                "calls_extreme": None,
                "calls_cone": None,
                "calls_ban_kbest": None,
                "time_us": 1e6 * result.fit_time / max(1, corpus.n_train * epochs),
                "exact": None,
                "hull_exact": None,
                "fractional": result.fractional_rate,
                "source": "training",
            }
        )
    return pl.DataFrame(rows)


def run(
    scale: float = 0.05,
    seeds: int = 1,
    out: Path | None = None,
    *,
    epochs: int = 3,
    n_instances: int = 40,
    max_enumerate: int = 5,
    k: int = 50,
    surrogates: Sequence[str] = ("slack", "probloss"),
    training: bool = True,
    root: Path | None = None,
) -> pl.DataFrame:
    """The comparison table (means over every recorded (instance, epoch) cloud and seed, plus the
    in-training rows); with ``out``: ``searches.csv``, ``searches_per_inference.csv`` and the
    clouds as ``clouds.npz`` (the format of ``benches/searches/search_clouds.py``)."""
    per_parts, train_parts, all_clouds = [], [], []
    for seed in range(seeds):
        clouds, corpus, _ = record(
            scale,
            seed,
            epochs=epochs,
            n_instances=n_instances,
            max_enumerate=max_enumerate,
            k=k,
            root=root,
        )
        all_clouds += clouds
        for surrogate in surrogates:
            per_parts.append(
                run_searches(clouds, surrogate).with_columns(pl.lit(seed).alias("seed"))
            )
        if training:
            train_parts.append(training_calls(corpus, epochs=epochs, lam=ner.LAM, seed=seed))
    per = pl.concat(per_parts)
    table = summarize(per)
    if train_parts:
        training_table = (
            pl.concat(train_parts)
            .group_by(["surrogate", "search"], maintain_order=True)
            .agg(
                pl.col("inferences").sum(),
                *[pl.col(c).mean() for c in ("calls_per_inference",)],
                *[
                    pl.col(c).first()
                    for c in ("calls_lambda", "calls_extreme", "calls_cone", "calls_ban_kbest")
                ],
                pl.col("time_us").mean(),
                pl.col("exact").first(),
                pl.col("hull_exact").first(),
                pl.col("fractional").mean(),
                pl.col("source").first(),
            )
        )
        table = pl.concat([table, training_table], how="vertical_relaxed")
    if out is not None:
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        with atomic_write(out / "searches.csv") as f:
            table.write_csv(f)
        with atomic_write(out / "searches_per_inference.csv") as f:
            per.write_csv(f)
        save_clouds(all_clouds, out / "clouds.npz")
    return table


def save_clouds(clouds: Sequence[Cloud], path: Path) -> None:
    """The clouds in the ``.npz`` format ``benches/searches/search_clouds.py`` reads (h = m,
    g = Hamming; one snapshot per (instance, epoch))."""
    hs, gs, offsets, gold, epoch, instance = [], [], [0], [], [], []
    for c in clouds:
        for e, (h, g) in enumerate(c.points, start=1):
            hs.append(h)
            gs.append(g)
            offsets.append(offsets[-1] + len(h))
            gold.append(c.gold)
            epoch.append(e)
            instance.append(c.instance)
    with atomic_write(path, "wb") as f:
        np.savez_compressed(
            f,
            h=np.concatenate(hs),
            g=np.concatenate(gs),
            offsets=np.asarray(offsets, dtype=np.int64),
            gold=np.asarray(gold, dtype=np.int64),
            epoch=np.asarray(epoch, dtype=np.int64),
            instance=np.asarray(instance, dtype=np.int64),
        )


if __name__ == "__main__":
    main(run, "Searches' comparison on recorded chain clouds (issue 5, 4(d))")
