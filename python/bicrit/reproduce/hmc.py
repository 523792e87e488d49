"""Hierarchical multi-label classification on the Clus HMC benchmark (issue 18): AU(PRC) of
bicrit's hierarchical models beside the frequency prior, one-vs-rest logistic regression and
the published C-HMCNN numbers (Giunchiglia & Lukasiewicz, NeurIPS 2020).

Protocol (the field's; docs/hierarchy-scores.md), per dataset:

1. **Data.** The official train / valid / test splits. Missing features are imputed with the
   means of the data a model is fitted on, and features standardised with its mean and standard
   deviation (``HierarchicalSVM(scale=True)``; a ``StandardScaler`` for logistic regression).
   Training instances without any label (class ``?``) are dropped; test instances keep them
   (all their pairs are negatives).
2. **Selection on valid only.** Every method's hyper-parameters are chosen by the AU(PRC) on
   ``valid`` of a model fitted on ``train``: for the bicrit models, C × ``multilabel_loss``
   (:data:`GRID`; :data:`GRID_DAG` on the GO sets) × the score reported — the node
   probabilities of :class:`~bicrit.hierarchy.NodeCalibration`, cross-calibrated on valid
   (Platt fitted on one half, applied to the other, and back), or the raw max-marginal
   margins (``score`` in the rows; per-node Platt needs held-out positives of every node, and
   on a hierarchy with about as many nodes as valid instances, Diatoms, it ranks worse than
   the margins); for logistic regression, C (:data:`LOGISTIC_C`). Seed 0; the test split is
   not read.
3. **Final fits**, one per seed (the seed orders SGD's instances and draws the calibration
   folds), with the chosen hyper-parameters. Every final model is calibrated on node scores of
   instances it did not see — *its own* scores, or those of models trained like it on the other
   folds of its data: Platt's parameters fitted on another model's scores misfit a model whose
   scores are on another scale. The strategy (:data:`CALIBRATION`, column ``calibration`` of
   the rows):

   - ``"crossfit"`` (trees): the final model is trained on train + valid and calibrated on
     out-of-fold node scores of train + valid (:data:`CAL_FOLDS` models per seed, each trained
     on the other folds with the same hyper-parameters): 1 + :data:`CAL_FOLDS` fits per seed.
   - ``"holdout"`` (DAGs): the final model is trained on train and calibrated on its own valid
     node scores; the calibrated predictor (scorer and Platt) has then seen train + valid, the
     scorer train only. 1 fit per seed on train, and seed 0's is the selection model of step 2
     (same data, hyper-parameters and seed), kept from the grid. Chosen a priori for the Gene
     Ontology DAGs, where a fit takes minutes: it is the only variant where the calibrated
     model is exactly the one whose held-out scores the calibration saw, at the cost of
     a scorer trained on less data (the FunCat trees keep the cheaper-per-number crossfit,
     whose scorer sees all of train + valid).
   - ``"valid"`` (not a default; kept only to reproduce the rows written under it, see
     benches/hierarchy/RESULTS.md): the final model trained on train + valid, calibrated with
     the valid node scores of the selection model (trained on train, seed 0) — another model.
     For NHSVM on gasch2_GO that misfit: the refitted model's node scores are on a larger
     scale (its virtual leaves and α follow the training labels), and its test AU(PRC) fell
     below the prior's.

   With ``out``, each grid point's selection row is written to ``<set>_valid.csv`` as soon as
   it is measured, and the rows already there for points of a method's grid are reused (those
   points are not refitted): a run stopped within a grid resumes at the next point, and a
   method's final fits can be rerun alone (``rerun``); a model step 2 would have kept is then
   refitted (deterministic: same seed).
4. **Test, once per reported number**: AU(PRC) (:func:`bicrit.metrics.hierarchy.au_prc`) over
   every node except the root and, on the Gene Ontology sets, the ontology roots GO0003674,
   GO0005575 and GO0008150 (:data:`SKIP`), of the score chosen on valid (``test``); the raw
   max-marginal margins' AU(PRC) is always reported beside it (``test_raw``).

**The MLP** (``"mlp"``, :data:`NEURAL`; needs ``bicrit[torch]``, not in the default
``models``): :class:`bicrit.torch.hierarchical_mlp.HierarchicalMLP`, an MLP encoder whose
per-node scores are trained with the hierarchical structured hinge
(:class:`bicrit.torch.HierarchyLoss`, HSVM's loss-augmented inference on the network's node
scores), :data:`MLP_FIT`. Same protocol: :data:`MLP_GRID` and the score chosen on valid (the
grid's models trained on train, early stopping on a seeded 20 % of train); final models on
train + valid, early stopping on a seeded 20 % of train + valid, calibrated on the node scores
of that early-stopping part (``calibration = "stop"``); test read once per number.

Baselines in the same run: the **frequency prior** (every instance gets each node's frequency in
train + valid) and **one-vs-rest logistic regression** (one ``LogisticRegression`` per node on
the standardised features, its probabilities; a node with no positive or no negative training
instance gets its frequency).

The "others" sets (:data:`OTHERS`: Diatoms, Enron, ImCLEF07A and ImCLEF07D) have no valid
split: a seeded :data:`VALID_FRACTION` of train is held out as valid for step 2 (train + valid
is then the whole training file).

``scale`` < 1 subsamples train, valid and train + valid (seeded) and scales the epochs; the
published numbers then do not apply. With ``out``, every dataset's per-seed rows are written
to ``<out>/<set>.csv`` (atomically) as soon as it is done, and a rerun with the same ``out``
reuses the methods it holds — so a long run can be split by model (:func:`run_set`) and
resumed; the selection rows go to ``<set>_valid.csv``.
"""

from __future__ import annotations

import itertools
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

__all__ = [
    "CALIBRATION",
    "CALIBRATIONS",
    "CAL_FOLDS",
    "DAG_EXTRA_C",
    "FIT",
    "GRID",
    "GRID_DAG",
    "LOGISTIC_C",
    "MLP_FIT",
    "MLP_GRID",
    "MODELS",
    "NEURAL",
    "OTHERS",
    "OURS",
    "PUBLISHED",
    "SETS",
    "SKIP",
    "VALID_FRACTION",
    "evaluated_nodes",
    "hmc",
    "hmc_fun",
    "hmc_go",
    "hmc_others",
    "run_set",
]

_BASES = ("cellcycle", "derisi", "eisen", "gasch1", "gasch2", "seq", "spo")
#: The FunCat (tree) and Gene Ontology (DAG) sets of the issue, in table order.
SETS: tuple[str, ...] = tuple(f"{b}_FUN" for b in _BASES) + tuple(f"{b}_GO" for b in _BASES)
#: The "others" sets of the Clus HMC collection (trees; no valid split).
OTHERS: tuple[str, ...] = ("Diatoms", "Enron_corr", "ImCLEF07A", "ImCLEF07D")

#: Share of the training file held out as valid on the sets without a valid split.
VALID_FRACTION = 0.2

#: C-HMCNN's published test AU(PRC) (Giunchiglia & Lukasiewicz 2020, table 2).
PUBLISHED: dict[str, float] = {
    "cellcycle_FUN": 0.255,
    "derisi_FUN": 0.195,
    "eisen_FUN": 0.306,
    "gasch1_FUN": 0.286,
    "gasch2_FUN": 0.258,
    "seq_FUN": 0.292,
    "spo_FUN": 0.215,
    "cellcycle_GO": 0.413,
    "derisi_GO": 0.370,
    "eisen_GO": 0.455,
    "gasch1_GO": 0.436,
    "gasch2_GO": 0.414,
    "seq_GO": 0.446,
    "spo_GO": 0.382,
    "Diatoms": 0.758,
    "Enron_corr": 0.756,
    "ImCLEF07A": 0.956,
    "ImCLEF07D": 0.927,
}

#: Node names left out of the AU(PRC): the root and the three Gene Ontology roots.
SKIP = ("root", "GO0003674", "GO0005575", "GO0008150")

#: The bicrit models of the table.
MODELS = ("flat", "hsvm", "nhsvm", "ssvm")

#: bicrit's neural model (needs ``bicrit[torch]``): an MLP encoder with the hierarchical
#: structured loss, :class:`bicrit.torch.hierarchical_mlp.HierarchicalMLP`.
NEURAL = ("mlp",)

#: Every bicrit method of the table (valid's pick is chosen among them).
OURS = MODELS + NEURAL

#: Hyper-parameters chosen on valid for every bicrit model.
GRID: dict[str, tuple[Any, ...]] = {
    "C": (0.01, 0.1, 1.0),
    "multilabel_loss": ("auto", "weighted"),
}

#: The grid on the Gene Ontology DAGs: a fit there costs 5–20 times one on a FunCat tree
#: (a min-cut per inference over up to 4,000 nodes), and on the FunCat sets C = 1 was never
#: chosen on valid for flat or HSVM (on all 7 sets their valid AU(PRC) falls from C = 0.1 to
#: 1); benches/hierarchy/RESULTS.md, "Clus HMC AU(PRC)".
GRID_DAG: dict[str, tuple[Any, ...]] = {
    "C": (0.01, 0.1),
    "multilabel_loss": ("auto", "weighted"),
}

#: C values added to :data:`GRID_DAG` per model: valid chose C = 1 for NHSVM on all five FunCat
#: sets where it ran and for SSVM on one, so on the DAGs their grid keeps it.
DAG_EXTRA_C: dict[str, tuple[float, ...]] = {"nhsvm": (1.0,), "ssvm": (1.0,)}

#: Fixed fit settings of the bicrit models (SGD; Shared SVM's alternation).
FIT: dict[str, Any] = {"max_epochs": 10, "tol": 1e-3, "alpha_every": 3, "max_alternations": 3}

#: Hyper-parameters of the MLP chosen on valid: the task loss of the structured hinge (node
#: Hamming, or its class-balanced form). Two points only (the runs share 2 cores with others).
MLP_GRID: dict[str, tuple[Any, ...]] = {"multilabel_loss": ("node", "weighted")}

#: Fixed settings of the MLP: two hidden layers of 512 ReLU units with dropout 0.5, Adam
#: (step 1e-3, weight decay 1e-5), batches of 32; early stopping on a seeded 20 % of the data
#: it is given (never valid or test when it is trained on train, never test when on train +
#: valid), at most 60 epochs, patience 6.
MLP_FIT: dict[str, Any] = {
    "hidden": (512, 512),
    "dropout": 0.5,
    "lr": 1e-3,
    "batch_size": 32,
    "weight_decay": 1e-5,
    "max_epochs": 60,
    "patience": 6,
    "stop_fraction": 0.2,
}

#: C of one-vs-rest logistic regression, chosen on valid.
LOGISTIC_C = (0.001, 0.01, 0.1)

#: Folds of the out-of-fold node scores the final models are calibrated on ("crossfit").
CAL_FOLDS = 2

#: The calibration of the final models by hierarchy kind (module docstring, step 3). The MLP's
#: is always ``"stop"``: its node scores on its own early-stopping part, which its gradient
#: steps did not see.
CALIBRATION: dict[str, str] = {"tree": "crossfit", "DAG": "holdout"}

#: Every calibration strategy ``run_set`` accepts; ``"valid"`` only reproduces old rows.
CALIBRATIONS = ("crossfit", "holdout", "valid")


def evaluated_nodes(hierarchy: Any) -> np.ndarray:
    """Node ids whose (instance, node) pairs the AU(PRC) counts: all but :data:`SKIP`."""
    return np.array([i for i, n in enumerate(hierarchy.names) if n not in SKIP], dtype=np.int64)


@dataclass
class _Data:
    """One split: raw features (NaN where missing) and label sets."""

    X: np.ndarray
    Y: list[np.ndarray]

    def subset(self, idx: np.ndarray) -> _Data:
        return _Data(self.X[idx], [self.Y[i] for i in idx.tolist()])

    def labelled(self) -> _Data:
        return self.subset(np.array([i for i, y in enumerate(self.Y) if len(y)], dtype=np.int64))


def _imputed(fit: np.ndarray, *others: np.ndarray) -> list[np.ndarray]:
    """``fit`` and ``others`` with NaN replaced by the column means of ``fit``."""
    from bicrit.datasets.clus_hmc import column_means, impute_mean

    m = column_means(fit)
    return [impute_mean(fit, m), *(impute_mean(X, m) for X in others)]


def _indicator(Y: Sequence[np.ndarray], n_nodes: int) -> np.ndarray:
    out = np.zeros((len(Y), n_nodes), dtype=np.int8)
    for i, y in enumerate(Y):
        out[i, y] = 1
    return out


def _prior(Y: Sequence[np.ndarray], n_nodes: int, n: int) -> np.ndarray:
    """The frequency prior's scores for ``n`` instances."""
    f = _indicator(Y, n_nodes).mean(axis=0)
    return np.tile(f, (n, 1))


def _logistic(Xf: np.ndarray, Yf: list[np.ndarray], Xe: np.ndarray, C: float, M: int) -> Any:
    """One-vs-rest logistic regression's probabilities on ``Xe`` (module docstring)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    sc = StandardScaler().fit(Xf)
    Zf, Ze = sc.transform(Xf), sc.transform(Xe)
    T = _indicator(Yf, M)
    P = np.tile(T.mean(axis=0), (len(Xe), 1)).astype(np.float64)
    for j in range(M):
        k = int(T[:, j].sum())
        if 0 < k < len(T):
            m = LogisticRegression(C=C, max_iter=500).fit(Zf, T[:, j])
            P[:, j] = m.predict_proba(Ze)[:, 1]
    return P


def _svm(hierarchy: Any, params: dict[str, Any], seed: int, epochs: int) -> Any:
    from bicrit.hierarchy.estimator import HierarchicalSVM

    fit = {**FIT, "max_epochs": epochs}
    return HierarchicalSVM(hierarchy, random_state=seed, n_jobs=None, **fit, **params)


def _dag_grid(model: str) -> dict[str, tuple[Any, ...]]:
    return {**GRID_DAG, "C": GRID_DAG["C"] + DAG_EXTRA_C.get(model, ())}


def _mlp(hierarchy: Any, params: dict[str, Any], seed: int, scale: float) -> Any:
    from bicrit.reproduce.neural import _torch

    _torch()  # one intra-op thread (BICRIT_TORCH_THREADS), as the other neural experiments
    from bicrit.torch.hierarchical_mlp import HierarchicalMLP

    fit = {**MLP_FIT, "max_epochs": max(1, round(MLP_FIT["max_epochs"] * scale))}
    fit.update({k: v for k, v in params.items() if k != "model"})
    skip = np.setdiff1d(np.arange(hierarchy.n_nodes), evaluated_nodes(hierarchy)).tolist()
    return HierarchicalMLP(hierarchy, random_state=seed, stop_exclude=skip, **fit)


def _cross_calibrated(model: Any, S: np.ndarray, Y: list[np.ndarray], seed: int) -> np.ndarray:
    """Probabilities of node scores ``S`` with Platt fitted on one half of the rows and applied
    to the other, and back (selection on valid)."""
    from bicrit.hierarchy import NodeCalibration

    rng = np.random.default_rng(seed)
    perm = rng.permutation(len(Y))
    halves = (perm[: len(perm) // 2], perm[len(perm) // 2 :])
    P = np.empty_like(S)
    for a, b in (halves, halves[::-1]):
        cal = NodeCalibration(model).fit_scores(S[a], [Y[i] for i in a])
        P[b] = cal.predict_proba_scores(S[b])
    return P


@dataclass
class _Splits:
    """The imputed data of the final fits (module docstring, steps 1 and 3)."""

    both: _Data  # train + valid, imputed with its own means
    X_test: np.ndarray  # test, imputed with the means of train + valid
    train: _Data  # train, imputed with its own means
    X_valid: np.ndarray  # valid, imputed with the means of train
    Y_valid: list[np.ndarray]
    X_test_train: np.ndarray  # test, imputed with the means of train


def _final_probs(
    hierarchy: Any,
    params: dict[str, Any],
    calibration: str,
    data: _Splits,
    seed: int,
    epochs: int,
    selection: Any,
    scale: float = 1.0,
) -> tuple[np.ndarray, np.ndarray, float]:
    """(calibrated probabilities, raw node scores) on the test split of seed ``seed``'s final
    model, and its fit time (module docstring, step 3). ``selection()`` gives the selection
    model of step 2 (trained on train, seed 0) and its fit time. The MLP is calibrated on its
    own early-stopping part ("stop"), whatever ``calibration``."""
    from bicrit.hierarchy import NodeCalibration

    t0 = time.perf_counter()
    if params["model"] in NEURAL:
        final = _mlp(hierarchy, params, seed, scale).fit(data.both.X, data.both.Y)
        fit_s = time.perf_counter() - t0
        cal = NodeCalibration(final).fit_scores(final.stop_scores_, final.stop_labels_)
        S = final.node_scores(data.X_test)
        return cal.predict_proba_scores(S), S, fit_s
    if calibration == "holdout":  # trained on train, calibrated on its own valid scores
        if seed == 0:
            final, fit_s = selection()
        else:
            final = _svm(hierarchy, params, seed, epochs).fit(data.train.X, data.train.Y)
            fit_s = time.perf_counter() - t0
        cal = NodeCalibration(final).fit_scores(final.node_scores(data.X_valid), data.Y_valid)
        S = final.node_scores(data.X_test_train)
        return cal.predict_proba_scores(S), S, fit_s
    final = _svm(hierarchy, params, seed, epochs).fit(data.both.X, data.both.Y)
    fit_s = time.perf_counter() - t0
    S = final.node_scores(data.X_test)
    if calibration == "valid":  # old rows only: the selection model's scores, another model
        chosen = selection()[0]
        cal = NodeCalibration(final).fit_scores(chosen.node_scores(data.X_valid), data.Y_valid)
        return cal.predict_proba_scores(S), S, fit_s
    fit = data.both
    rng = np.random.default_rng(seed)
    folds = np.array_split(rng.permutation(len(fit.Y)), CAL_FOLDS)
    S_oof = np.empty((len(fit.Y), hierarchy.n_nodes))
    for k, held in enumerate(folds):
        rest = np.concatenate([f for j, f in enumerate(folds) if j != k])
        part = fit.subset(rest)
        m = _svm(hierarchy, params, seed, epochs).fit(part.X, part.Y)
        S_oof[held] = m.node_scores(fit.X[held])
    cal = NodeCalibration(final).fit_scores(S_oof, fit.Y)
    return cal.predict_proba_scores(S), S, fit_s


def run_set(
    name: str,
    *,
    seeds: int = 3,
    scale: float = 1.0,
    models: Sequence[str] = MODELS,
    baselines: Sequence[str] = ("prior", "logistic"),
    grid: dict[str, tuple[Any, ...]] | None = None,
    calibration: str | None = None,
    out: Path | None = None,
    rerun: Sequence[str] = (),
    log: Any = print,
) -> pl.DataFrame:
    """The protocol of the module docstring on ``clus_hmc/<name>``: one row per (method,
    seed) with the chosen hyper-parameters, the valid and test AU(PRC), and fit times.

    ``grid`` defaults to :data:`GRID` on trees and :data:`GRID_DAG` (with
    :data:`DAG_EXTRA_C`) on DAGs, ``calibration`` (one of :data:`CALIBRATIONS`, module
    docstring) to :data:`CALIBRATION`; ``baselines`` are the baselines to run ("prior",
    "logistic"). With ``out``, the methods already in ``<out>/<name>.csv`` are reused and the
    table is rewritten after each seed of each method, so that a run can be split by model and
    resumed (a method stopped between seeds keeps the seeds done, and counts as done); the
    selection rows in ``<out>/<name>_valid.csv`` of a linear model's grid points are reused too
    (written after each point: a run stopped within a grid resumes at the next point).
    ``rerun`` names models of ``models`` whose rows in ``<out>/<name>.csv`` are dropped and
    produced again (e.g. under another calibration), from their reused selection rows."""
    from bicrit._atomic import write_text
    from bicrit.datasets import load
    from bicrit.errors import InvalidParameterError
    from bicrit.metrics.hierarchy import au_prc

    if calibration is not None and calibration not in CALIBRATIONS:
        raise InvalidParameterError(
            f"calibration must be one of {CALIBRATIONS}, got {calibration!r}"
        )
    if not set(rerun) <= set(models) - set(NEURAL):
        raise InvalidParameterError(f"rerun must name linear models of models, got {rerun!r}")
    path = None if out is None else Path(out) / f"{name}.csv"
    vpath = None if out is None else Path(out) / f"{name}_valid.csv"
    done = pl.read_csv(path) if path is not None and path.exists() else None
    has_valid = vpath is not None and vpath.exists() and bool(vpath.read_text().strip())
    done_valid = pl.read_csv(vpath) if has_valid else None  # empty: baselines without a grid
    if done is not None and rerun:
        done = done.filter(~pl.col("method").is_in(list(rerun)))
    have = set() if done is None else set(done["method"].to_list())
    todo = [m for m in (*baselines, *models) if m not in have]
    if done is not None and not todo:
        log(f"{name}: reusing {path}")
        return done
    raw = {s: load(f"clus_hmc/{name}", s) for s in ("train", "test")}
    h = raw["train"].hierarchy
    M = h.n_nodes
    keep = evaluated_nodes(h)
    kind = "tree" if h.is_tree else "DAG"
    grids = {m: grid for m in models}
    if grid is None:
        grids = {m: GRID if h.is_tree else _dag_grid(m) for m in models}
    calibration = calibration if calibration is not None else CALIBRATION[kind]
    split = {s: _Data(d.X, list(d.Y)) for s, d in raw.items()}
    if name in OTHERS:  # no valid split: a seeded share of train (module docstring)
        perm = np.random.default_rng(0).permutation(len(split["train"].Y))
        n_valid = round(VALID_FRACTION * len(perm))
        split["valid"] = split["train"].subset(np.sort(perm[:n_valid]))
        split["train"] = split["train"].subset(np.sort(perm[n_valid:]))
    else:
        d = load(f"clus_hmc/{name}", "valid")
        split["valid"] = _Data(d.X, list(d.Y))
    rng = np.random.default_rng(12345)

    def shrink(d: _Data) -> _Data:
        if scale >= 1.0:
            return d
        n = max(20, round(scale * len(d.Y)))
        return d.subset(np.sort(rng.choice(len(d.Y), size=min(n, len(d.Y)), replace=False)))

    train, valid = shrink(split["train"].labelled()), shrink(split["valid"].labelled())
    both = _Data(np.vstack([train.X, valid.X]), train.Y + valid.Y)
    test = split["test"]
    epochs = max(1, round(FIT["max_epochs"] * scale))
    Xtr, Xva = _imputed(train.X, valid.X)
    Xboth, Xte = _imputed(both.X, test.X)
    train_i, both_i = _Data(Xtr, train.Y), _Data(Xboth, both.Y)
    data = _Splits(both_i, Xte, train_i, Xva, valid.Y, _imputed(train.X, test.X)[1])
    rows: list[dict[str, Any]] = [] if done is None else done.to_dicts()
    valid_rows: list[dict[str, Any]] = [] if done_valid is None else done_valid.to_dicts()

    def save_valid() -> None:
        if vpath is not None:
            write_text(vpath, pl.DataFrame(valid_rows, infer_schema_length=None).write_csv())

    def save() -> pl.DataFrame:
        table = pl.DataFrame(rows, infer_schema_length=None)
        if path is not None:
            write_text(path, table.write_csv())
            save_valid()
        return table

    def ap(Y: list[np.ndarray], S: np.ndarray) -> float:
        return au_prc(Y, S, exclude=np.setdiff1d(np.arange(M), keep))

    base = {"set": name, "kind": kind}
    if "prior" in todo:
        v, t = (
            ap(valid.Y, _prior(train.Y, M, len(valid.Y))),
            ap(test.Y, _prior(both.Y, M, len(test.Y))),
        )
        for seed in range(seeds):
            rows.append(
                {
                    **base,
                    "method": "prior",
                    "seed": seed,
                    "params": "",
                    "valid": v,
                    "test": t,
                    "test_raw": None,
                    "fit_s": 0.0,
                }
            )
        log(f"{name}: prior {t:.3f}")
        save()
    if "logistic" in todo:  # C on valid; deterministic (one row per seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            scores = {C: ap(valid.Y, _logistic(Xtr, train.Y, Xva, C, M)) for C in LOGISTIC_C}
            best_c = max(LOGISTIC_C, key=lambda c: scores[c])
            t0 = time.perf_counter()
            P = _logistic(Xboth, both.Y, Xte, best_c, M)
            lr_s = time.perf_counter() - t0
        lr_test = ap(test.Y, P)
        for c, v in scores.items():
            valid_rows.append({**base, "method": "logistic", "params": f"C={c}", "valid": v})
        for seed in range(seeds):
            rows.append(
                {
                    **base,
                    "method": "logistic",
                    "seed": seed,
                    "params": f"C={best_c}",
                    "valid": scores[best_c],
                    "test": lr_test,
                    "test_raw": None,
                    "fit_s": lr_s,
                }
            )
        log(f"{name}: logistic {lr_test:.3f} (C={best_c})")
        save()
    # bicrit's models: hyper-parameters on valid, then the final fits per seed
    for model in (m for m in todo if m in models):
        neural = model in NEURAL
        g = MLP_GRID if neural else grids[model]
        points = [
            {"model": model, **dict(zip(g, values, strict=True))}
            for values in itertools.product(*g.values())
        ]
        labels = [", ".join(f"{k}={p[k]}" for k in g) for p in points]
        # the grid points already in <set>_valid.csv are reused (linear models; the MLP's
        # rows carry their early-stopping epoch): a run stopped within a grid resumes there
        prev = {
            r["params"]: r
            for r in valid_rows
            if r["method"] == model and not neural and r["params"] in labels
        }
        valid_rows = [r for r in valid_rows if r["method"] != model or r["params"] in prev]
        kept: dict[str, Any] = {}  # the selection models of the grid, by label (none reused)
        if prev:
            log(
                f"{name}: {model}: reusing the selection rows of {len(prev)} of "
                f"{len(labels)} grid points in {vpath}"
            )
        for params, label in zip(points, labels, strict=True):
            if label not in prev:
                t0 = time.perf_counter()
                if neural:
                    m = _mlp(h, params, 0, scale).fit(train_i.X, train_i.Y)
                else:
                    m = _svm(h, params, 0, epochs).fit(train_i.X, train_i.Y)
                fit_s = time.perf_counter() - t0
                S = m.node_scores(Xva)
                v = ap(valid.Y, _cross_calibrated(m, S, valid.Y, 0))
                row_label = label + (f", epochs={m.best_epoch_}" if neural else "")
                valid_rows.append(
                    {
                        **base,
                        "method": model,
                        "params": row_label,
                        "valid": v,
                        "valid_raw": ap(valid.Y, S),
                    }
                )
                prev[label] = valid_rows[-1]
                kept[label] = (m, fit_s)
                log(f"{name}: {model} {row_label}: valid {v:.4f} ({fit_s:.0f} s)")
                save_valid()  # after each grid point: a stopped run keeps the points done
        # the score is chosen on valid too: calibrated, or the raw margins (ties: calibrated)
        best: tuple[float, int, str] | None = None  # (valid AU(PRC), grid point, score kind)
        for k, label in enumerate(labels):
            r = prev[label]
            for score, value in (("calibrated", r["valid"]), ("raw", r["valid_raw"])):
                if best is None or value > best[0]:
                    best = (value, k, score)
        assert best is not None
        v_best, k_best, score = best
        params, label = points[k_best], labels[k_best]
        kept = {label: kept[label]} if label in kept else {}  # the others are not needed

        def selection(
            params: dict[str, Any] = params, label: str = label, kept: dict[str, Any] = kept
        ) -> Any:
            """The selection model of ``params`` (step 2), refitted if the grid was reused."""
            if label not in kept:
                t0 = time.perf_counter()
                m = _svm(h, params, 0, epochs).fit(train_i.X, train_i.Y)
                kept[label] = (m, time.perf_counter() - t0)
            return kept[label]

        for seed in range(seeds):
            P, S, fit_s = _final_probs(h, params, calibration, data, seed, epochs, selection, scale)
            rows.append(
                {
                    **base,
                    "method": model,
                    "seed": seed,
                    "params": label,
                    "calibration": "stop" if neural else calibration,
                    "score": score,
                    "valid": v_best,
                    "test": ap(test.Y, P if score == "calibrated" else S),
                    "test_raw": ap(test.Y, S),
                    "fit_s": fit_s,
                }
            )
            log(f"{name}: {model} seed {seed}: test {rows[-1]['test']:.4f}")
            save()  # after each seed: a run stopped between seeds keeps the seeds done
    return save()


def summary(per_seed: pl.DataFrame, scale: float = 1.0) -> pl.DataFrame:
    """One row per dataset: mean ± sd over the seeds (sample sd; "(1 seed)" when there is one)
    of every method's test AU(PRC), C-HMCNN's published number, the best bicrit model on test
    with its margin over the prior and its ratio to C-HMCNN, and the bicrit model with the best
    valid AU(PRC) ("valid's pick", the one chosen without the test split) with its ratio."""
    out = []
    for name in per_seed["set"].unique(maintain_order=True).to_list():
        d = per_seed.filter(pl.col("set") == name)
        row: dict[str, Any] = {"set": name}
        means = {}
        for method in d["method"].unique(maintain_order=True).to_list():
            t = d.filter(pl.col("method") == method)["test"].to_numpy()
            means[method] = float(np.mean(t))
            if len(t) > 1:
                row[method] = f"{means[method]:.3f} ± {float(np.std(t, ddof=1)):.3f}"
            else:
                row[method] = f"{means[method]:.3f} (1 seed)"
        pub = PUBLISHED.get(name) if scale >= 1.0 else None
        row["C-HMCNN"] = "" if pub is None else f"{pub:.3f}"
        ours = {m: v for m, v in means.items() if m in OURS}
        if ours:
            b = max(ours, key=lambda m: ours[m])
            row["best"] = b
            row["best − prior"] = f"{ours[b] - means.get('prior', np.nan):+.3f}"
            row["best / C-HMCNN"] = "" if pub is None else f"{ours[b] / pub:.2f}"
            # the model a user would pick: the best valid AU(PRC), the test split unseen
            valid = {m: float(d.filter(pl.col("method") == m)["valid"].mean()) for m in ours}
            c = max(valid, key=lambda m: valid[m])
            row["valid's pick"] = f"{c} {ours[c]:.3f}"
            row["pick / C-HMCNN"] = "" if pub is None else f"{ours[c] / pub:.2f}"
        out.append(row)
    return pl.DataFrame(out)


def _run(sets: Sequence[str], scale: float, seeds: int, out: Path | None) -> pl.DataFrame:
    from bicrit.errors import InvalidParameterError

    if not 0.0 < scale <= 1.0:
        raise InvalidParameterError(f"scale must be in (0, 1], got {scale}")
    per_seed = pl.concat(
        [run_set(s, seeds=seeds, scale=scale, out=out) for s in sets], how="diagonal_relaxed"
    )
    table = summary(per_seed, scale)
    if out is not None:
        from bicrit._atomic import write_text

        write_text(Path(out) / "hmc_summary.csv", table.write_csv())
    return table


def hmc(scale: float = 1.0, seeds: int = 3, out: Path | None = None) -> pl.DataFrame:
    """Clus HMC AU(PRC): the 7 FunCat, 7 GO and 4 "others" sets, bicrit's models beside the
    prior, logistic regression and C-HMCNN."""
    return _run(SETS + OTHERS, scale, seeds, out)


def hmc_fun(scale: float = 1.0, seeds: int = 3, out: Path | None = None) -> pl.DataFrame:
    """Clus HMC AU(PRC) on the 7 FunCat (tree) sets."""
    return _run(SETS[:7], scale, seeds, out)


def hmc_go(scale: float = 1.0, seeds: int = 3, out: Path | None = None) -> pl.DataFrame:
    """Clus HMC AU(PRC) on the 7 Gene Ontology (DAG) sets."""
    return _run(SETS[7:], scale, seeds, out)


def hmc_others(scale: float = 1.0, seeds: int = 3, out: Path | None = None) -> pl.DataFrame:
    """Clus HMC AU(PRC) on the 4 "others" sets (Diatoms, Enron, ImCLEF07A, ImCLEF07D)."""
    return _run(OTHERS, scale, seeds, out)
