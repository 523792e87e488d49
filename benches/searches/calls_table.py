"""Oracle calls per inference of every search on the simulated clouds, beside the thesis's table
`tabel:loo_comparison` / `tabel_argmax` (yeast and RCV1 with slack rescaling, cutting plane).

Run: ``python benches/searches/calls_table.py`` (prints a markdown table).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from search_clouds import Cloud, perturbed, simulated, uniform

import bicrit

#: The thesis's calls per search (Sarawagi, bisecting, angular, convex hull), yeast / RCV1.
THESIS = {
    "sarawagi": "15.3–49",
    "bisecting": "7.8–13",
    "angular": "3.8–5.5",
    "convex-hull": "3.1–7.3",
    "convex-hull-ban": "2.0 (NER, ProbLoss)",
    "binary": "–",
    "convex-hull-kbest": "–",
}
SEARCHES = [
    "sarawagi",
    "binary",
    "bisecting",
    "angular",
    "convex-hull",
    "convex-hull-ban",
    "convex-hull-kbest",
]


def run_all(name: str, clouds: list[Cloud], psi, warm=None) -> tuple[float, float, list]:
    """Mean calls, mean value and the results of ``name`` on ``clouds``."""
    results = []
    for i, c in enumerate(clouds):
        o = bicrit.PointSetOracle(c.h, c.g, gold=c.gold)
        phi = max(psi.value(c.h, c.g).max(), 0.0)
        xi = 0.5 * phi  # a cutting-plane slack below the violation
        w = None if warm is None else warm[i]
        results.append(bicrit.search(name, o, psi, xi=xi, warm=w))
    calls = float(np.mean([r.calls["total"] for r in results]))
    value = float(np.mean([r.value for r in results]))
    return calls, value, results


def optimality(clouds: list[Cloud], results: list, psi) -> float:
    """Fraction of instances where the (integral part of the) answer reaches the optimum."""
    hit = 0
    for c, r in zip(clouds, results, strict=True):
        best = max(float(psi.value(c.h, c.g).max()), 0.0)
        got = max(float(psi.value(a, b)) for a, b in r.points) if r.points else 0.0
        hit += got >= best - 1e-9 * max(1.0, abs(best))
    return hit / len(clouds)


def warm_calls(
    n: int = 100, k: int = 10, noise: float = 0.01, steps: int = 5, name: str = "convex-hull"
) -> float:
    """Mean calls of convex hull search warm-started from the previous step on slowly moving
    late-training clouds (the thesis reports ~2 calls on NER)."""
    psi = bicrit.surrogate("slack")
    clouds = simulated(n, k, "late", seed=11)
    _, _, prev = run_all(name, clouds, psi)
    total = []
    for s in range(steps):
        clouds = perturbed(clouds, noise, seed=100 + s)
        _, _, prev = run_all(name, clouds, psi, warm=prev)
        total += [r.calls["total"] for r in prev]
    return float(np.mean(total))


def table(n: int = 100, k: int = 10) -> str:
    psi = bicrit.surrogate("slack")
    lines = [
        "| search | clouds | calls/inference | integral optimum reached | thesis (yeast–RCV1) |",
        "|---|---|---|---|---|",
    ]
    for stage in ("early", "mid", "late", "uniform"):
        clouds = uniform(n, 200, seed=5) if stage == "uniform" else simulated(n, k, stage, seed=5)
        for name in SEARCHES:
            calls, _, res = run_all(name, clouds, psi)
            hit = optimality(clouds, res, psi)
            lines.append(f"| {name} | {stage} | {calls:.2f} | {hit:.0%} | {THESIS[name]} |")
    for name in ("convex-hull", "convex-hull-ban", "angular", "bisecting"):
        warm = warm_calls(n, k, name=name)
        lines.append(f"| {name}, warm start | late, 5 steps | {warm:.2f} | – | 2.0 (NER) |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(table())
