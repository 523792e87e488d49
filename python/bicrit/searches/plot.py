"""Plot helper (optional ``matplotlib`` extra: ``pip install bicrit[plot]``): labels as points in
the (h, g) plane, ψ level curves, and what a search queried — in the manner of the thesis's
figures `fig:all_points`, `fig:contour` and `fig:angular_illu`.

>>> from bicrit.searches.plot import plot_search            # doctest: +SKIP
>>> ax = plot_search(oracle, psi, result)                    # doctest: +SKIP
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["plot_search"]


def _points(points: Any) -> tuple[np.ndarray, np.ndarray]:
    if hasattr(points, "points"):
        h, g = points.points()
    else:
        h, g = points
    return np.asarray(h, dtype=float), np.asarray(g, dtype=float)


def _safe_values(psi: Any, hh: np.ndarray, gg: np.ndarray) -> np.ndarray:
    """ψ on a grid, NaN where it is undefined (e.g. g < 0 for ProbLoss)."""
    try:
        return np.asarray(psi.value(hh, gg), dtype=float)
    except Exception:
        out = np.full(hh.shape, np.nan)
        for idx in np.ndindex(hh.shape):
            try:
                out[idx] = float(psi.value(float(hh[idx]), float(gg[idx])))
            except Exception:
                continue
        return out


def plot_search(
    points: Any,
    psi: Any,
    result: Any = None,
    *,
    ax: Any = None,
    levels: int = 8,
    queries: bool = True,
    title: str | None = None,
) -> Any:
    """Draws the labels, ψ's level curves and (given a search ``result``) the queried λ-lines
    through each answer, the cones of constrained queries (rays G = s·(h + 1)), and the answer
    (a star; the fractional point on a hull edge as a diamond). ``points`` is a
    :class:`~bicrit.PointSetOracle` or an ``(h, g)`` pair. Returns the matplotlib axes."""
    import matplotlib.pyplot as plt

    h, g = _points(points)
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 5))
    pad_h = 0.1 * (np.ptp(h) or 1.0)
    pad_g = 0.1 * (np.ptp(g) or 1.0)
    hlim = (h.min() - pad_h, h.max() + pad_h)
    glim = (g.min() - pad_g, g.max() + pad_g)
    hh, gg = np.meshgrid(np.linspace(*hlim, 200), np.linspace(*glim, 200))
    zz = _safe_values(psi, hh, gg)
    if np.isfinite(zz).any():
        cs = ax.contour(hh, gg, zz, levels=levels, colors="0.7", linewidths=0.8)
        ax.clabel(cs, inline=True, fontsize=7, fmt="%.3g")
    ax.scatter(h, g, s=12, c="k", label="labels", zorder=3)
    if result is not None and queries:
        for i, q in enumerate(result.trace):
            lam = q["lambda_"]
            for a, b in q["answers"]:
                if q.get("frontier"):  # a frontier query has no line: its points only
                    pass
                elif lam == 0.0:
                    ax.axvline(a, color="tab:blue", lw=0.7, alpha=0.6)
                elif math.isinf(lam):
                    ax.axhline(b, color="tab:blue", lw=0.7, alpha=0.6)
                else:
                    k = a + lam * b  # the oracle's line h + λg = K through the answer
                    ax.plot(
                        hlim,
                        [(k - hlim[0]) / lam, (k - hlim[1]) / lam],
                        color="tab:blue",
                        lw=0.7,
                        alpha=0.6,
                    )
                ax.scatter([a], [b], marker="x", c="tab:blue", zorder=4)
                ax.annotate(
                    str(i + 1), (a, b), textcoords="offset points", xytext=(4, 4), fontsize=7
                )
            if q["cone"] is not None:
                lo, _, hi, _ = q["cone"]
                for slope in (lo, hi):
                    if math.isfinite(slope):
                        xs = np.array([-1.0, hlim[1]])
                        ax.plot(
                            xs, slope * (xs + 1.0), color="tab:green", lw=0.6, ls="--", alpha=0.6
                        )
    if result is not None and result.points:
        pts = np.array(result.points)
        ax.scatter(pts[:, 0], pts[:, 1], marker="*", s=160, c="tab:red", zorder=5, label="answer")
        if len(pts) == 2:
            w = np.array(result.weights)
            p = w @ pts
            ax.plot(pts[:, 0], pts[:, 1], color="tab:red", lw=1.2)
            ax.scatter(
                [p[0]], [p[1]], marker="D", s=50, c="tab:red", zorder=5, label="fractional optimum"
            )
    ax.set_xlim(*hlim)
    ax.set_ylim(*glim)
    ax.set_xlabel("h (margin)")
    ax.set_ylabel("g (loss)")
    name = getattr(psi, "name", type(psi).__name__)
    if title is None and result is not None:
        title = (
            f"{result.search}, ψ = {name}: Φ = {result.value:.4g}, {result.calls['total']} calls"
        )
    if title:
        ax.set_title(title, fontsize=9)
    ax.legend(loc="best", fontsize=7)
    return ax
