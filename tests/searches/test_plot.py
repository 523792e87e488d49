"""The plot helper draws (Agg backend); skipped without matplotlib."""

from __future__ import annotations

import pytest

import bicrit

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")


@pytest.mark.parametrize("name", ["convex-hull", "angular", "convex-hull-ban"])
def test_plot_search_draws_points_levels_and_queries(tmp_path, name):
    import matplotlib.pyplot as plt

    from bicrit.searches.plot import plot_search

    o = bicrit.PointSetOracle([0.0, 1.0, 3.0, 2.01, -0.5], [0.0, 4.0, 2.0, 3.0, 1.0])
    psi = bicrit.surrogate("slack")
    r = bicrit.search(name, o, psi)
    ax = plot_search(o, psi, r)
    assert name in ax.get_title()
    assert len(ax.collections) >= 3  # contour, labels, answers
    ax.figure.savefig(tmp_path / "search.png")
    assert (tmp_path / "search.png").stat().st_size > 1000
    plt.close(ax.figure)


def test_plot_with_undefined_region_and_plain_points():
    from bicrit.searches.plot import plot_search

    ax = plot_search(([0.0, -1.0, 0.5], [0.0, 2.0, 1.0]), bicrit.surrogate("probloss"))
    assert ax.get_xlabel().startswith("h")
