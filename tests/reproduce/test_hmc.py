"""The Clus HMC reproduction (bicrit.reproduce.hmc): the evaluated nodes, the frequency prior
against an independent scikit-learn computation, hyper-parameters that do not depend on the
test labels, resuming from the written tables, and the summary's arithmetic."""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl
import pytest
from sklearn.metrics import average_precision_score

from bicrit.reproduce import EXPERIMENTS, describe, hmc


def test_experiments_are_registered() -> None:
    for name in ("hmc", "hmc-fun", "hmc-go", "hmc-others"):
        assert name in EXPERIMENTS and "Clus HMC" in describe(name)
    assert len(hmc.SETS) == 14 and len(hmc.OTHERS) == 4
    assert set(hmc.PUBLISHED) == set(hmc.SETS) | set(hmc.OTHERS)


def test_an_unknown_calibration_is_refused(tmp_path) -> None:
    from bicrit.errors import InvalidParameterError

    with pytest.raises(InvalidParameterError, match="calibration must be"):
        hmc.run_set("church_FUN", calibration="test", out=tmp_path, log=_quiet)
    assert not list(tmp_path.iterdir())


@pytest.mark.slow
def test_others_hold_out_a_seeded_valid_share_of_train(data_dir, tmp_path) -> None:
    """Enron has no valid split: the prior's valid AU(PRC) is that of the frequencies of a
    seeded 80 % of train on the other 20 %, and its test AU(PRC) that of all of train."""
    from bicrit.datasets import load

    table = hmc.run_set(
        "Enron_corr", seeds=1, models=(), baselines=("prior",), out=tmp_path, log=_quiet
    )
    tr, te = (load("clus_hmc/Enron_corr", s) for s in ("train", "test"))
    h = tr.hierarchy
    T = tr.indicator().toarray().astype(float)
    perm = np.random.default_rng(0).permutation(len(T))
    k = round(hmc.VALID_FRACTION * len(T))
    va, fit = np.sort(perm[:k]), np.sort(perm[k:])
    cols = [v for v in range(h.n_nodes) if v != h.root]

    def ap(gold: np.ndarray, freq: np.ndarray) -> float:
        return average_precision_score(
            gold[:, cols], np.tile(freq[cols], (len(gold), 1)), average="micro"
        )

    row = table.row(0, named=True)
    assert row["method"] == "prior"
    assert row["valid"] == pytest.approx(ap(T[va], T[fit].mean(axis=0)), rel=1e-12)
    assert row["test"] == pytest.approx(ap(te.indicator().toarray(), T.mean(axis=0)), rel=1e-12)
    # a rerun reuses the table, though the baselines wrote no selection rows
    again = hmc.run_set(
        "Enron_corr", seeds=1, models=(), baselines=("prior",), out=tmp_path, log=_quiet
    )
    assert again.equals(pl.read_csv(tmp_path / "Enron_corr.csv"))


def _quiet(*_: Any) -> None:
    """A run's log, silenced."""


def _small_hsvm(**over: Any) -> dict[str, Any]:
    """run_set's arguments for a small HSVM run (15 % of the data, one seed, C = 0.1 with both
    multi-label losses, no baselines), with ``over`` on top."""
    base: dict[str, Any] = {
        "seeds": 1,
        "scale": 0.15,
        "models": ("hsvm",),
        "baselines": (),
        "grid": {"C": (0.1,), "multilabel_loss": ("auto", "weighted")},
    }
    return {**base, **over}


@pytest.mark.slow
def test_the_calibration_strategy_changes_only_the_calibrated_numbers(data_dir, tmp_path) -> None:
    """'valid' and 'crossfit' select the same hyper-parameters on the same valid scores and fit
    the same final model (same raw test AU(PRC)); only the calibrated test number differs."""
    kw = _small_hsvm(log=_quiet)
    a = hmc.run_set("church_FUN", calibration="crossfit", out=tmp_path / "a", **kw)
    b = hmc.run_set("church_FUN", calibration="valid", out=tmp_path / "b", **kw)
    assert a["calibration"].to_list() == ["crossfit"] and b["calibration"].to_list() == ["valid"]
    for col in ("method", "params", "valid", "test_raw"):
        assert a[col].to_list() == b[col].to_list(), col
    assert a["test"][0] != b["test"][0] and 0.0 < b["test"][0] <= 1.0


class _Ledger:
    """Which model scored which feature rows, and which rows each model was trained on: a spy
    on ``HierarchicalSVM.fit`` / ``node_scores`` and ``NodeCalibration.fit_scores`` /
    ``predict_proba_scores`` that records every calibration whose model is not the one that
    scored its rows, or that had seen the rows it was fitted on."""

    def __init__(self, monkeypatch) -> None:
        from bicrit.hierarchy import NodeCalibration
        from bicrit.hierarchy.estimator import HierarchicalSVM

        self.models: list = []  # keeps ids unique
        self.trained: dict[int, set[bytes]] = {}
        self.scored: dict[bytes, set[tuple[int, bytes]]] = {}
        self.fitted: list[str] = []  # one entry per calibration fitted: "ok" or a violation
        self.applied: list[bool] = []  # per application: scored by the calibrated model
        ledger, fit, node_scores = self, HierarchicalSVM.fit, HierarchicalSVM.node_scores
        fit_scores, apply = NodeCalibration.fit_scores, NodeCalibration.predict_proba_scores

        def spy_fit(model, X, Y=None, *a, **k):
            ledger.models.append(model)
            ledger.trained[id(model)] = {np.asarray(x).tobytes() for x in X}
            return fit(model, X, Y, *a, **k)

        def spy_scores(model, X, *a, **k):
            S = node_scores(model, X, *a, **k)
            for x, s in zip(np.asarray(X), S, strict=True):
                ledger.scored.setdefault(s.tobytes(), set()).add((id(model), x.tobytes()))
            return S

        def spy_fit_scores(cal, scores, Y):
            m = id(cal.estimator)
            seen = ledger.trained[m]
            rows = [ledger.scored.get(np.asarray(s).tobytes(), set()) for s in scores]
            if not all(any(mid == m for mid, _ in r) for r in rows):
                ledger.fitted.append("scores of another model")
            elif not all(any(mid == m and x not in seen for mid, x in r) for r in rows):
                ledger.fitted.append("scores of instances the model was trained on")
            else:
                ledger.fitted.append("ok")
            return fit_scores(cal, scores, Y)

        def spy_apply(cal, scores):
            m = id(cal.estimator)
            ledger.applied.append(
                all(
                    any(mid == m for mid, _ in ledger.scored.get(np.asarray(s).tobytes(), ()))
                    for s in scores
                )
            )
            return apply(cal, scores)

        monkeypatch.setattr(HierarchicalSVM, "fit", spy_fit)
        monkeypatch.setattr(HierarchicalSVM, "node_scores", spy_scores)
        monkeypatch.setattr(NodeCalibration, "fit_scores", spy_fit_scores)
        monkeypatch.setattr(NodeCalibration, "predict_proba_scores", spy_apply)


def test_dags_calibrate_each_final_model_on_its_own_held_out_scores() -> None:
    assert hmc.CALIBRATION["DAG"] == "holdout"
    assert set(hmc.CALIBRATION.values()) <= set(hmc.CALIBRATIONS)


@pytest.mark.slow
def test_holdout_calibrates_every_final_model_on_its_own_unseen_scores(
    data_dir, tmp_path, monkeypatch
) -> None:
    """Under "holdout" every calibration (the selection's cross-calibrations and each seed's
    final one) is fitted on node scores that the calibrated model itself computed, of instances
    it was not trained on, and applied to its own scores; the spy flags "valid", which
    calibrates the refitted final model with the selection model's scores."""
    kw = _small_hsvm(seeds=2, log=_quiet)
    # cellcycle: no feature row of valid repeats one of train (church_FUN's do), so "seen"
    # can be told by the rows' contents
    ledger = _Ledger(monkeypatch)
    table = hmc.run_set("cellcycle_FUN", calibration="holdout", out=tmp_path / "h", **kw)
    assert table["calibration"].to_list() == ["holdout"] * 2
    # 2 grid points × 2 cross-calibration halves, then 1 calibration per seed
    assert ledger.fitted == ["ok"] * 6 and len(ledger.applied) == 6 and all(ledger.applied)
    # seed 0's final model is the kept selection model: 2 grid fits + seed 1's fit on train
    assert len(ledger.models) == 3
    del ledger.fitted[:], ledger.applied[:]
    hmc.run_set("cellcycle_FUN", calibration="valid", out=tmp_path / "v", **kw)
    assert ledger.fitted[:4] == ["ok"] * 4  # the selection's cross-calibration
    assert ledger.fitted[4:] == ["scores of another model"] * 2


@pytest.mark.slow
def test_a_rerun_reuses_the_selection_rows_and_refits_the_same_models(
    data_dir, tmp_path, monkeypatch
) -> None:
    """Rerunning a model's final fits reuses its selection rows (no grid fit) and, the fits
    being deterministic, refits the same selection model for seed 0: the same rows."""
    from bicrit.hierarchy.estimator import HierarchicalSVM

    kw = _small_hsvm(seeds=2, baselines=("prior",), calibration="holdout", out=tmp_path)
    a = hmc.run_set("church_FUN", log=_quiet, **kw)
    valid = pl.read_csv(tmp_path / "church_FUN_valid.csv")
    fits: list[int] = []
    fit = HierarchicalSVM.fit
    monkeypatch.setattr(
        HierarchicalSVM, "fit", lambda m, *a, **k: fits.append(1) or fit(m, *a, **k)
    )
    messages: list[str] = []
    b = hmc.run_set("church_FUN", rerun=("hsvm",), log=messages.append, **kw)
    assert len(fits) == 2  # seed 0's selection model refitted, seed 1's final model
    assert any("reusing the selection rows" in m for m in messages)
    assert pl.read_csv(tmp_path / "church_FUN_valid.csv").equals(valid)
    cols = ["method", "seed", "params", "calibration", "score", "valid", "test", "test_raw"]
    assert a.select(cols).equals(b.select(cols))


@pytest.mark.slow
def test_a_run_stopped_within_the_grid_resumes_at_the_next_point(
    data_dir, tmp_path, monkeypatch
) -> None:
    """Each grid point's selection row is written as soon as it is measured: a run stopped
    during the second grid fit keeps the first point's row, and the resumed run fits only the
    second point (then the final fits), ending with the rows of an uninterrupted run."""
    from bicrit.hierarchy.estimator import HierarchicalSVM

    kw = _small_hsvm(calibration="holdout", log=_quiet)
    whole = hmc.run_set("church_FUN", out=tmp_path / "whole", **kw)
    fit = HierarchicalSVM.fit
    calls: list[str] = []

    def stopped(m, *a, **k):
        calls.append(m.multilabel_loss)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return fit(m, *a, **k)

    monkeypatch.setattr(HierarchicalSVM, "fit", stopped)
    out = tmp_path / "stopped"
    with pytest.raises(KeyboardInterrupt):
        hmc.run_set("church_FUN", out=out, **kw)
    valid = pl.read_csv(out / "church_FUN_valid.csv")
    assert valid["params"].to_list() == ["C=0.1, multilabel_loss=auto"]
    assert not (out / "church_FUN.csv").exists()
    del calls[:]
    monkeypatch.setattr(
        HierarchicalSVM,
        "fit",
        lambda m, *a, **k: calls.append(m.multilabel_loss) or fit(m, *a, **k),
    )
    resumed = hmc.run_set("church_FUN", out=out, **kw)
    # the second grid point, then seed 0's final model: the selection model, kept if the
    # second point won, else refitted
    won = whole["params"][0] == "C=0.1, multilabel_loss=weighted"
    assert calls == (["weighted"] if won else ["weighted", "auto"])
    assert pl.read_csv(out / "church_FUN_valid.csv").equals(
        pl.read_csv(tmp_path / "whole" / "church_FUN_valid.csv")
    )
    cols = ["method", "seed", "params", "calibration", "score", "valid", "test", "test_raw"]
    assert resumed.select(cols).equals(whole.select(cols))


def test_rerun_must_name_a_linear_model_of_the_run(tmp_path) -> None:
    from bicrit.errors import InvalidParameterError

    with pytest.raises(InvalidParameterError, match="rerun must name"):
        hmc.run_set("church_FUN", models=("hsvm",), rerun=("flat",), out=tmp_path)
    assert not list(tmp_path.iterdir())


def test_evaluated_nodes_leave_out_the_roots(data_dir) -> None:
    from bicrit.datasets import load

    fun = load("clus_hmc/church_FUN", "valid").hierarchy
    go = load("clus_hmc/pheno_GO", "valid").hierarchy
    assert set(range(fun.n_nodes)) - set(hmc.evaluated_nodes(fun).tolist()) == {fun.root}
    left_out = set(range(go.n_nodes)) - set(hmc.evaluated_nodes(go).tolist())
    assert {go.names[v] for v in left_out} == {"root", "GO0003674", "GO0005575", "GO0008150"}
    # the ontology roots are the root's children
    assert {go.names[c] for c in go.children[go.root]} == {"GO0003674", "GO0005575", "GO0008150"}


@pytest.mark.slow
def test_prior_and_logistic_rows_equal_an_independent_computation(data_dir, tmp_path) -> None:
    """No bicrit model: the prior's test AU(PRC) is scikit-learn's micro average precision of
    the train + valid node frequencies over the test set, root excluded."""
    from bicrit.datasets import load

    table = hmc.run_set("church_FUN", seeds=2, models=(), out=tmp_path, log=_quiet)
    assert table["method"].to_list() == ["prior", "prior", "logistic", "logistic"]
    sets = {s: load("clus_hmc/church_FUN", s) for s in ("train", "valid", "test")}
    h = sets["train"].hierarchy
    fit = [y for s in ("train", "valid") for y in sets[s].Y if len(y)]
    freq = np.zeros(h.n_nodes)
    for y in fit:
        freq[y] += 1
    freq /= len(fit)
    T = sets["test"].indicator().toarray()
    cols = [v for v in range(h.n_nodes) if v != h.root]
    ref = average_precision_score(T[:, cols], np.tile(freq[cols], (len(T), 1)), average="micro")
    prior = table.filter(pl.col("method") == "prior")["test"].to_list()
    assert prior == pytest.approx([ref, ref], rel=1e-12)
    lr = table.filter(pl.col("method") == "logistic")
    assert lr["params"][0] in {f"C={c}" for c in hmc.LOGISTIC_C}
    assert 0.0 < lr["test"][0] <= 1.0
    assert (tmp_path / "church_FUN.csv").exists() and (tmp_path / "church_FUN_valid.csv").exists()


@pytest.mark.slow
def test_selection_does_not_read_the_test_labels(data_dir, tmp_path, monkeypatch) -> None:
    """The same run with the test labels permuted chooses the same hyper-parameters with the
    same valid scores; only the test numbers change."""
    import bicrit.datasets as datasets

    kw = {"seeds": 1, "scale": 0.15, "models": ("hsvm",), "log": _quiet}
    a = hmc.run_set("church_FUN", out=tmp_path / "a", **kw)
    real = datasets.load

    def shuffled(name, split="train", **k):
        d = real(name, split, **k)
        if split == "test":
            perm = np.random.default_rng(0).permutation(len(d.Y))
            object.__setattr__(d, "Y", [d.Y[i] for i in perm])
        return d

    monkeypatch.setattr(datasets, "load", shuffled)
    b = hmc.run_set("church_FUN", out=tmp_path / "b", **kw)
    for col in ("method", "params", "valid"):
        assert a[col].to_list() == b[col].to_list(), col
    assert a["test"].to_list() != b["test"].to_list()
    va = pl.read_csv(tmp_path / "a" / "church_FUN_valid.csv")
    vb = pl.read_csv(tmp_path / "b" / "church_FUN_valid.csv")
    assert va.equals(vb)
    # grid × models rows for the bicrit model, LOGISTIC_C rows for logistic regression
    n_grid = int(np.prod([len(v) for v in hmc.GRID.values()]))
    assert va["method"].to_list().count("hsvm") == n_grid
    # the chosen (hyper-parameters, score) is the best valid AU(PRC) of either score
    hs = va.filter(pl.col("method") == "hsvm")
    best = max(hs["valid"].max(), hs["valid_raw"].max())
    row = a.filter(pl.col("method") == "hsvm").row(0, named=True)
    assert row["valid"] == best
    assert row["score"] == ("calibrated" if hs["valid"].max() >= best else "raw")
    if row["score"] == "raw":
        assert row["test"] == row["test_raw"]
    # a rerun with the same folder reuses the written table
    messages: list[str] = []
    c = hmc.run_set("church_FUN", out=tmp_path / "a", **{**kw, "log": messages.append})
    assert c.equals(pl.read_csv(tmp_path / "a" / "church_FUN.csv"))
    assert messages and "reusing" in messages[0]


def test_summary_arithmetic() -> None:
    valid = {"prior": 0.1, "hsvm": 0.17, "flat": 0.19}
    rows = [
        {"set": "cellcycle_FUN", "method": m, "seed": s, "test": t, "valid": valid[m]}
        for m, ts in {"prior": [0.15, 0.15], "hsvm": [0.20, 0.22], "flat": [0.18, 0.18]}.items()
        for s, t in enumerate(ts)
    ]
    s = hmc.summary(pl.DataFrame(rows))
    r = s.row(0, named=True)
    assert r["hsvm"] == f"0.210 ± {np.std([0.20, 0.22], ddof=1):.3f}"
    assert r["best"] == "hsvm" and r["best − prior"] == "+0.060"
    assert r["C-HMCNN"] == "0.255" and r["best / C-HMCNN"] == f"{0.21 / 0.255:.2f}"
    # the valid AU(PRC) picks flat, whatever the test says
    assert r["valid's pick"] == "flat 0.180" and r["pick / C-HMCNN"] == f"{0.18 / 0.255:.2f}"
    # at a reduced scale the published numbers do not apply
    assert hmc.summary(pl.DataFrame(rows), scale=0.5).row(0, named=True)["C-HMCNN"] == ""


def test_the_mlp_is_selected_on_valid_and_calibrated_on_its_stop_part(data_dir, tmp_path) -> None:
    """The MLP row (item 4): MLP_GRID's points are scored on valid, the chosen one is the best
    valid AU(PRC) of either score, and the final model is calibrated on its own early-stopping
    part; the test labels play no part in the choice."""
    pytest.importorskip("torch")
    import bicrit.datasets as datasets

    kw = {"seeds": 1, "scale": 0.1, "models": ("mlp",), "baselines": (), "log": _quiet}
    a = hmc.run_set("church_FUN", out=tmp_path, **kw)
    row = a.row(0, named=True)
    assert row["method"] == "mlp" and row["calibration"] == "stop"
    va = pl.read_csv(tmp_path / "church_FUN_valid.csv")
    assert va.height == int(np.prod([len(v) for v in hmc.MLP_GRID.values()]))
    best = max(va["valid"].max(), va["valid_raw"].max())
    assert row["valid"] == best
    assert 0.0 < row["test"] < 1.0
    if row["score"] == "raw":
        assert row["test"] == row["test_raw"]
    # the same choice with the test labels permuted
    real = datasets.load

    def shuffled(name, split="train", **k):
        d = real(name, split, **k)
        if split == "test":
            perm = np.random.default_rng(0).permutation(len(d.Y))
            object.__setattr__(d, "Y", [d.Y[i] for i in perm])
        return d

    import unittest.mock as mock

    with mock.patch.object(datasets, "load", shuffled):
        b = hmc.run_set("church_FUN", out=tmp_path / "b", **kw)
    assert b["params"].to_list() == a["params"].to_list()
    assert b["valid"].to_list() == a["valid"].to_list()
    # the summary and the table count the MLP among bicrit's models
    assert "mlp" in hmc.OURS and hmc.summary(a).row(0, named=True)["best"] == "mlp"


def test_the_dag_grid_keeps_c_1_only_where_funcat_valid_chose_it() -> None:
    assert hmc._dag_grid("hsvm") == hmc.GRID_DAG
    assert 1.0 not in hmc._dag_grid("flat")["C"]
    for m in ("nhsvm", "ssvm"):
        assert hmc._dag_grid(m)["C"] == (*hmc.GRID_DAG["C"], 1.0)
        assert hmc._dag_grid(m)["multilabel_loss"] == hmc.GRID_DAG["multilabel_loss"]
