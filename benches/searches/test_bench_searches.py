"""Benchmarks of the searches: oracle calls and time per inference on point clouds.

Run: ``pytest benches/searches --benchmark-enable`` (add ``--benchmark-autosave`` and later
``--benchmark-compare`` to compare runs; groups name what they compare, so each prints as one
table). Calls per inference are in each benchmark's ``extra_info``. Set
``BICRIT_RECORDED_CLOUDS=file.npz`` to also run on point clouds recorded from real training
(format in ``search_clouds.py``).
"""

from __future__ import annotations

import numpy as np
import pytest
from calls_table import SEARCHES, table
from search_clouds import Cloud, perturbed, recorded, simulated

import bicrit

SLACK = bicrit.surrogate("slack")
N, K = 50, 10


def _oracles(clouds: list[Cloud]):
    return [bicrit.PointSetOracle(c.h, c.g, gold=c.gold) for c in clouds]


def _xi(c: Cloud) -> float:
    return 0.5 * max(float(SLACK.value(c.h, c.g).max()), 0.0)


@pytest.mark.parametrize("stage", ["early", "mid", "late"])
@pytest.mark.parametrize("name", SEARCHES)
def test_search_on_simulated_clouds(benchmark, name, stage):
    benchmark.group = f"search-{stage}-training-clouds-K{K}"
    clouds = simulated(N, K, stage, seed=5)
    oracles = _oracles(clouds)
    xis = [_xi(c) for c in clouds]

    def run():
        return [bicrit.search(name, o, SLACK, xi=x) for o, x in zip(oracles, xis, strict=True)]

    results = benchmark(run)
    calls = float(np.mean([r.calls["total"] for r in results]))
    benchmark.extra_info["calls_per_inference"] = calls
    benchmark.extra_info["mean_value"] = float(np.mean([r.value for r in results]))
    assert calls < 60


@pytest.mark.parametrize("mode", ["cold", "warm"])
def test_convex_hull_warm_start_late_training(benchmark, mode):
    """Late training: each instance moves a little between epochs (per-position scores move by
    N(0, 0.01)); warm-starting from the previous epoch's hull costs ~1 call (target ≤ 1.5)."""
    benchmark.group = "convex-hull-cold-vs-warm-late-training"
    clouds = simulated(N, K, "late", seed=11)
    first = [bicrit.search("convex-hull", o, SLACK) for o in _oracles(clouds)]
    moved = perturbed(clouds, 0.01, seed=3)
    oracles = _oracles(moved)

    def run():
        return [
            bicrit.search("convex-hull", o, SLACK, warm=w if mode == "warm" else None)
            for o, w in zip(oracles, first, strict=True)
        ]

    results = benchmark(run)
    calls = float(np.mean([r.calls["total"] for r in results]))
    benchmark.extra_info["calls_per_inference"] = calls
    if mode == "warm":
        assert calls <= 1.5


@pytest.mark.parametrize("name", ["bisecting", "angular", "convex-hull", "convex-hull-ban"])
def test_search_on_recorded_clouds(benchmark, name):
    clouds = recorded()
    if clouds is None:
        pytest.skip("set BICRIT_RECORDED_CLOUDS to a recorded .npz (see search_clouds.py)")
    benchmark.group = "search-recorded-clouds"
    oracles = _oracles(clouds)
    results = benchmark(lambda: [bicrit.search(name, o, SLACK) for o in oracles])
    benchmark.extra_info["calls_per_inference"] = float(
        np.mean([r.calls["total"] for r in results])
    )


def test_calls_table_beside_the_thesis(capsys):
    """Prints the markdown table of calls per inference next to the thesis's numbers."""
    text = table(n=N, k=K)
    with capsys.disabled():
        print("\n" + text)
    assert "convex-hull" in text


def test_recorded_format_reads_back(tmp_path, monkeypatch):
    """The recorded-cloud format (search_clouds.py) round-trips: two instances, one epoch each."""
    path = tmp_path / "clouds.npz"
    np.savez(
        path,
        h=np.array([0.0, 0.3, -0.2, 0.0, 1.0]),
        g=np.array([0.0, 2.0, 4.0, 0.0, 1.0]),
        offsets=np.array([0, 3, 5]),
        epoch=np.array([1, 1]),
    )
    monkeypatch.setenv("BICRIT_RECORDED_CLOUDS", str(path))
    clouds = recorded()
    assert [len(c.h) for c in clouds] == [3, 2]
    assert [c.gold for c in clouds] == [0, 0]
    r = bicrit.search("convex-hull", bicrit.PointSetOracle(clouds[1].h, clouds[1].g), SLACK)
    assert r.value == pytest.approx(2.0)
