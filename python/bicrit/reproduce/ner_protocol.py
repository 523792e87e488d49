"""The full NER protocol of :mod:`bicrit.reproduce.ner`: hyper-parameters chosen on the official
dev split, test scores of the chosen models, several seeds (issue 5, item 4(b)).

Per dataset (thesis §``sec:NER``: "a validation grid over C and the learning rate"):

1. **Margin rescaling, SGD** — every (λ, η) of :data:`LAMS` × :data:`ETAS` (constant step η,
   weighted averaging, thesis-form λ, C = 1/(n·λ)) for ``epochs`` epochs with seed 0; the
   configuration *and* the number of epochs with the best dev entity F1 are chosen.
2. **ProbLoss and the Micro-F1 surrogate, SGD** — warm-started (thesis §"Dependency Parsing":
   margin first, then ProbLoss) from the averaged weights of the chosen margin configuration
   after ``epochs // 2`` epochs, then their own loss for the remaining epochs with the chosen λ
   and a step η·f, f ∈ :data:`PHASE_FACTORS`; f and the epoch (total ≤ ``epochs``, so the same
   budget as margin) chosen on dev. Searches: :data:`bicrit.reproduce.ner.METHODS`.
3. **Margin rescaling, BCFW** (line search, weighted averaging; no step size) — C ∈
   :data:`BCFW_CS`, epochs chosen on dev: the learner ``SequenceSVM`` uses by default.
4. Seeds 1, 2, …: the configurations chosen with seed 0 are retrained with another instance
   order (``random_state``), each seed's number of epochs again chosen on dev.
5. **crfsuite** (L-BFGS, c1 = 0.1, c2 = 0.01, 100 iterations — sklearn-crfsuite's tutorial
   settings, not tuned), once: deterministic.

The dev metric is the corpus entity F1 (micro, CoNLL's F1) for every method. The test split
never takes part in a choice; its scores are read at the chosen epoch of the chosen run.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl

from bicrit.reproduce._devgrid import Curve, best, curve
from bicrit.reproduce._seq_common import sklearn_c

__all__ = [
    "BCFW_CS",
    "ETAS",
    "LAMS",
    "METRICS",
    "PHASE_FACTORS",
    "run_dataset",
    "summarize",
]

#: Grid of the margin SGD runs: thesis-form λ (C = 1/(n·λ)) and constant step sizes.
LAMS: tuple[float, ...] = (1e-4, 1e-2)
ETAS: tuple[float, ...] = (0.001, 0.003, 0.01)
#: Step of the ProbLoss / Micro-F1 phase: the chosen margin step times these factors.
PHASE_FACTORS: tuple[float, ...] = (1.0, 1 / 3, 0.1)
#: scikit-learn C of the BCFW margin runs.
BCFW_CS: tuple[float, ...] = (0.01, 0.1, 1.0)
#: The dev metric every choice maximises.
SELECT = "f1_micro"
#: Test metrics reported (and summarised over seeds).
METRICS = ("f1_micro", "f1_macro", "sentence_f1", "token_accuracy")


def _evaluators(corpus: Any, s: Any) -> tuple[Any, Any]:
    def dev(w: np.ndarray) -> dict[str, float]:
        return corpus.scores(corpus.decode(s.batch_predict(w, corpus.X_dev)), corpus.dev_tags)

    def test(w: np.ndarray) -> dict[str, float]:
        return corpus.scores(corpus.decode(s.batch_predict(w, corpus.X_test)))

    return dev, test


def _result(
    base: dict[str, Any], method: str, learner: str, search: str, c: Curve, row: dict[str, Any]
) -> dict[str, Any]:
    own = [r for r in c.rows if r["epoch"] <= row["epoch"]]
    inf = sum(r["inferences"] for r in own)
    return {
        **base,
        "method": method,
        "learner": learner,
        "search": search,
        "config": ", ".join(f"{k}={v:g}" for k, v in c.config.items()),
        "epochs": row["epoch"],
        "dev_f1": row[f"dev_{SELECT}"],
        **{m: row[m] for m in METRICS},
        "cpu_time": row["cpu_time"],
        "calls_per_inference": row["calls_per_inference_total"],
        "fractional": sum(r["fractional"] or 0 for r in own) / max(inf, 1),
    }


def run_dataset(
    corpus: Any,
    seeds: int,
    *,
    methods: Sequence[str],
    method_specs: dict[str, tuple[str, Any]],
    search_name: Any,
    epochs: int,
    lams: Sequence[float] = LAMS,
    etas: Sequence[float] = ETAS,
    phase_factors: Sequence[float] = PHASE_FACTORS,
    bcfw_cs: Sequence[float] = BCFW_CS,
    crfsuite: Any = None,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The protocol of the module docstring on one prepared corpus; ``(result rows, history
    rows)``: one result per seed × method, the history of every run (grid included)."""
    if epochs < 2:
        raise ValueError(f"epochs must be ≥ 2 (margin warm start + own loss), got {epochs}")
    warm = epochs // 2
    s = corpus.structure()
    dev, test = _evaluators(corpus, s)
    n = corpus.n_train
    rows: list[dict[str, Any]] = []
    hist: list[dict[str, Any]] = []

    def sgd(lam: float, eta: float, seed: int) -> dict[str, Any]:
        c = sklearn_c(lam, n)
        return {"C": c, "random_state": seed, "schedule": "constant", "eta0": eta, "n_jobs": 1}

    def record(c: Curve, seed: int, method: str) -> None:
        for r in c.rows:
            hist.append({"dataset": corpus.name, "seed": seed, "method": method, **c.config, **r})

    chosen: dict[str, dict[str, Any]] = {}
    for seed in range(seeds):
        base = {"dataset": corpus.name, "seed": seed, "n_train": n}
        grid = (
            [(lam, eta) for lam in lams for eta in etas] if seed == 0 else [chosen["margin"]["key"]]
        )
        curves = []
        for lam, eta in grid:
            c = curve(
                s, corpus.X_train, corpus.Y_train,
                surrogate="margin", search="convex-hull", learner="sgd",
                params=sgd(lam, eta, seed), epochs=epochs,
                evaluate_dev=dev, evaluate_test=test, save={warm},
                config={"lam": lam, "eta0": eta},
            )  # fmt: skip
            record(c, seed, "margin")
            curves.append(c)
        mc, mrow = best(curves, SELECT)
        if seed == 0:
            chosen["margin"] = {"key": (mc.config["lam"], mc.config["eta0"])}
        lam, eta = chosen["margin"]["key"]
        if "margin" in methods:
            rows.append(_result(base, "margin", "sgd", "convex-hull", mc, mrow))
        start = mc.rows[warm - 1]
        for method in methods:
            if method == "margin":
                continue
            surr, srch = method_specs[method]
            factors = phase_factors if seed == 0 else [chosen[method]["f"]]
            curves = []
            for f in factors:
                c = curve(
                    s, corpus.X_train, corpus.Y_train,
                    surrogate=surr, search=srch, learner="sgd",
                    params=sgd(lam, eta * f, seed), epochs=epochs - warm,
                    evaluate_dev=dev, evaluate_test=test, w0=mc.saved[warm],
                    first_epoch=warm + 1, start_cpu=start["cpu_time"],
                    start_calls=start["cumulative_calls"],
                    start_inferences=start["cumulative_inferences"],
                    config={"lam": lam, "eta0": eta * f, "warmup": warm},
                )  # fmt: skip
                record(c, seed, method)
                curves.append(c)
            pc, prow = best(curves, SELECT)
            if seed == 0:
                chosen[method] = {"f": phase_factors[curves.index(pc)]}
            rows.append(_result(base, method, "sgd", search_name(srch), pc, prow))
        if bcfw_cs:
            cs = bcfw_cs if seed == 0 else [chosen["bcfw"]["C"]]
            curves = []
            for C in cs:
                c = curve(
                    s, corpus.X_train, corpus.Y_train,
                    surrogate="margin", search="convex-hull", learner="bcfw",
                    params={"C": C, "random_state": seed, "n_jobs": 1}, epochs=epochs,
                    evaluate_dev=dev, evaluate_test=test, config={"C": C},
                )  # fmt: skip
                record(c, seed, "margin-bcfw")
                curves.append(c)
            bc, brow = best(curves, SELECT)
            if seed == 0:
                chosen["bcfw"] = {"C": bc.config["C"]}
            rows.append(_result(base, "margin-bcfw", "bcfw", "convex-hull", bc, brow))
    if crfsuite is not None:
        t0 = time.process_time()
        out = crfsuite(corpus)
        if out is not None:
            scores, dev_scores, _seconds = out
            rows.append(
                {
                    "dataset": corpus.name, "seed": 0, "n_train": n, "method": "crfsuite",
                    "learner": "lbfgs", "search": "-", "config": "c1=0.1, c2=0.01",
                    "epochs": 100, "dev_f1": dev_scores[SELECT], **scores,
                    "cpu_time": time.process_time() - t0,
                    "calls_per_inference": None, "fractional": None,
                }
            )  # fmt: skip
    return rows, hist


def summarize(table: pl.DataFrame) -> pl.DataFrame:
    """Mean and standard deviation (ddof = 1; 0 for one seed) over seeds per dataset × method."""
    cols = ["dev_f1", *METRICS, "cpu_time", "epochs", "calls_per_inference"]
    aggs: list[Any] = [pl.len().alias("seeds")]
    for c in cols:
        aggs += [
            pl.col(c).mean().alias(f"{c}_mean"),
            pl.col(c).std().fill_null(0.0).alias(f"{c}_sd"),
        ]
    return table.group_by(["dataset", "method"], maintain_order=True).agg(aggs)
