"""Issue 5, item 4(b): named-entity recognition — margin rescaling vs ProbLoss vs the Micro-F1
surrogate on CoNLL-2002 (Spanish, Dutch) and WNUT-17, beside a CRF (sklearn-crfsuite) on the
same features and splits (thesis §``sec:NER``, table ``table:result_NER``).

Setup
    * Features: :class:`bicrit.datasets.SequenceFeaturizer` (word, lower case, affixes ≤ 4,
      shapes, flags, words at ±1, ±2, and the POS column at −1, 0, +1 where the corpus has one),
      hashed into ``n_features`` columns. The CRF gets the *same feature strings*, unhashed.
    * Structure: ``chain`` over the IOB2 tags, task loss = token Hamming (ProbLoss is defined for
      g = Hamming); the Micro-F1 surrogate uses the chain's indicator-set Hamming term
      and the size |y| (non-O tokens; docs/architecture.md, Structures).
    * Learner: SGD (constant step η, weighted averaging, warm-started searches), at most
      ``epochs`` epochs, regularisation given in the thesis's form λ (``(λ/2)‖w‖² + (1/n)Σℓ``;
      C = 1/(n·λ)); λ, η and the number of epochs are chosen on the official dev split
      (:mod:`bicrit.reproduce.ner_protocol`); margin rescaling with BCFW beside it.
    * Searches: margin — ``convex-hull`` (ψ = h + g: the λ = 1 call, i.e. Viterbi with the loss
      added, plus the certificate); ProbLoss and Micro-F1 — ``convex-hull-ban``: the convex-hull
      search, then the ban-list loop of the thesis until the answer is integral, **capped at
      20 oracle calls per inference** (:data:`BAN`; the best integral label seen is returned).
      Uncapped, the exact loop is pathological here: on 25 CoNLL sentences in the second epoch
      it made 9168 ban-list calls for 25 inferences (367 per inference, 94 s against 0.1 s
      capped) — many labels lie just under the fractional optimum, and banning two at a time
      walks through them. The thesis reports ~2 calls (§``sec:NER``).
    * Warm start: ProbLoss and the Micro-F1 surrogate train margin rescaling for the first
      ``epochs // 2`` epochs and continue from its weights (``warmup``; the thesis's parsing run
      does the same). From scratch, ProbLoss's subgradient factor √g·exp(−πh²/(4g)) vanishes once
      the margins are large: on 250 CoNLL sentences, 5 epochs from scratch ended with entity
      F1 0.0 (every token O) against 0.48 for margin.
    * Training data: the official training split (``scale`` < 1: a seeded fraction of it);
      choices on the full dev split (CoNLL-2002 ``testa``, WNUT-17 ``dev``), evaluation on the
      full test split (CoNLL-2002 ``testb``, WNUT-17 ``test``).
    * Metrics (:func:`bicrit.metrics.sequence.sequence_report`, conlleval chunk rules): corpus
      entity F1 micro (pooled over chunks — CoNLL's "F1", the thesis's "Macro-F1" column) and
      macro (mean over entity types), and ``sentence_f1``: per-sentence entity F1 averaged over
      sentences (a sentence with no gold and no predicted entity scores 1) — the thesis's NER
      "Micro-F1".

Differences from the thesis: it used CoNLL-2003 English (not redistributable here), gazetteer
features, a validation grid over C and the learning rate and 100 epochs; here the corpora of the
issue, no gazetteers, a small dev grid and at most 12 epochs (``epochs`` and the grids are
parameters of :func:`run`).

Run: ``python -m bicrit.reproduce.ner [--scale 1.0] [--seeds 3] [--out DIR]`` or
``bicrit reproduce ner``; :func:`train_method` is the single run of the small-scale checks.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

import bicrit
from bicrit._atomic import atomic_write
from bicrit.datasets import SequenceFeaturizer, load
from bicrit.metrics.sequence import sequence_report
from bicrit.reproduce import ner_protocol
from bicrit.reproduce._seq_common import (
    Outcome,
    fit,
    main,
    plot_convergence,
    sklearn_c,
    subsample,
    timed,
)

__all__ = [
    "BAN",
    "DATASETS",
    "METHODS",
    "SGD",
    "Corpus",
    "chosen_history",
    "plot",
    "prepare",
    "run",
    "run_crfsuite",
    "sklearn_c",
    "train_method",
]

DATASETS: tuple[str, ...] = ("conll2002/esp", "conll2002/ned", "wnut17")

#: The ban-list recovery, capped: ``max_calls`` oracle calls per inference (see the module
#: docstring — uncapped, the exact loop needs hundreds of ban-list calls per inference here).
BAN: tuple[str, dict[str, Any]] = ("convex-hull-ban", {"max_calls": 20})

#: method → (surrogate, search) of the training run.
METHODS: dict[str, tuple[str, Any]] = {
    "margin": ("margin", "convex-hull"),
    "probloss": ("probloss", BAN),
    "microf1": ("microf1", BAN),
}

#: Defaults of the runs (thesis form of the regularisation, see the module docstring) and the
#: SGD step sizes: a constant step (Pegasos' 1/(λt) makes the first steps huge on these sparse
#: 0/1 features and 5 epochs do not recover from them).
LAM = 1e-3
EPOCHS = 12
N_FEATURES = 2**18
SGD: dict[str, Any] = {"schedule": "constant", "eta0": 0.003}


class Corpus:
    """A dataset prepared once: tags, features of the (subsampled) training and test sets."""

    def __init__(
        self,
        name: str,
        scale: float,
        seed: int,
        n_features: int = N_FEATURES,
        root: Path | None = None,
    ) -> None:
        train = load(name, "train", root=root).to_iob2()
        test = load(name, "test", root=root).to_iob2()
        dev = load(name, "dev", root=root).to_iob2()
        keep = subsample(len(train), scale, seed)
        self.name = name
        self.train_tokens = [train.tokens[i] for i in keep]
        self.train_tags = [train.tags[i] for i in keep]
        self.test_tokens, self.test_tags = test.tokens, test.tags
        self.columns = tuple(c for c in ("pos",) if c in train.columns)
        self.train_columns = {c: [train.columns[c][i] for i in keep] for c in self.columns}
        self.test_columns = {c: test.columns[c] for c in self.columns}
        self.dev_tokens, self.dev_tags = dev.tokens, dev.tags
        self.dev_columns = {c: dev.columns[c] for c in self.columns}
        tags = set(train.tag_names) | set(test.tag_names) | set(dev.tag_names)
        self.tag_names = sorted(tags, key=lambda t: (t != "O", t[2:], t[:2]))
        self.tag_index = {t: i for i, t in enumerate(self.tag_names)}
        self.featurizer = SequenceFeaturizer(n_features=n_features, columns=self.columns)
        self.X_train = tuple(self.featurizer.transform(self.train_tokens, self.train_columns))
        self.X_test = tuple(self.featurizer.transform(self.test_tokens, self.test_columns))
        self.X_dev = tuple(self.featurizer.transform(self.dev_tokens, self.dev_columns))
        self.Y_train = [
            np.array([self.tag_index[t] for t in s], dtype=np.int64) for s in self.train_tags
        ]

    @property
    def n_train(self) -> int:
        return len(self.train_tokens)

    def structure(self) -> Any:
        """The chain over this corpus's tags, initialised on the training set."""
        s = bicrit.structure("chain", tag_names=self.tag_names)
        return s.initialize(self.X_train, self.Y_train)

    def decode(self, labels: Sequence[np.ndarray]) -> list[list[str]]:
        return [[self.tag_names[int(k)] for k in y] for y in labels]

    def scores(
        self, pred: list[list[str]], gold: list[list[str]] | None = None
    ) -> dict[str, float]:
        """Entity and token scores of ``pred`` against ``gold`` (default: the test tags)."""
        rep = sequence_report(self.test_tags if gold is None else gold, pred, "iob2")
        return {
            "f1_micro": rep["f1"],
            "f1_macro": rep["macro_f1"],
            "sentence_f1": rep["sentence_f1"],
            "token_accuracy": rep["token_accuracy"],
        }

    def crf_features(self, tokens: list[list[str]], columns: dict[str, Any]) -> list[Any]:
        """The featurizer's feature strings (before hashing) per token, per sentence."""
        cache: dict[str, list[str]] = {}
        return [
            self.featurizer.token_features(s, {c: columns[c][i] for c in self.columns}, cache)
            for i, s in enumerate(tokens)
        ]


def prepare(name: str, scale: float, seed: int = 0, **kw: Any) -> Corpus:
    """Loads and featurizes ``name`` (see :class:`Corpus`)."""
    return Corpus(name, scale, seed, **kw)


def train_method(
    corpus: Corpus,
    method: str,
    *,
    epochs: int = EPOCHS,
    lam: float = LAM,
    seed: int = 0,
    search: Any = None,
    surrogate: str | None = None,
    track: bool = True,
    params: dict[str, Any] | None = None,
    warmup: int | None = None,
) -> tuple[Outcome, dict[str, float]]:
    """Trains one method (``METHODS`` names; ``search``/``surrogate`` override) and returns the
    fit and the test scores of its averaged weights; ``track`` evaluates on test every epoch.
    ``warmup``: margin epochs before the method's own loss (default: ``epochs // 2`` for every
    surrogate but margin, see the module docstring; 0 trains the loss from scratch)."""
    surr, srch = METHODS[method]
    surr, srch = surrogate or surr, search or srch
    s = corpus.structure()

    def evaluate(w: np.ndarray) -> dict[str, float]:
        return corpus.scores(corpus.decode(s.batch_predict(w, corpus.X_test)))

    p = {"C": sklearn_c(lam, corpus.n_train), "random_state": seed, **SGD, **(params or {})}
    result = fit(
        s,
        corpus.X_train,
        corpus.Y_train,
        surrogate=surr,
        search=srch,
        epochs=epochs,
        params=p,
        evaluate=evaluate if track else None,
        warmup=(epochs // 2 if surr != "margin" else 0) if warmup is None else warmup,
    )
    return result, evaluate(result.w)


def _search_name(search: Any) -> str:
    if isinstance(search, tuple):
        opts = ",".join(f"{k}={v}" for k, v in search[1].items())
        return f"{search[0]}({opts})"
    return str(search)


def run_crfsuite(
    corpus: Corpus, *, c1: float = 0.1, c2: float = 0.01, max_iterations: int = 100
) -> tuple[dict[str, float], dict[str, float], float] | None:
    """sklearn-crfsuite's L-BFGS CRF on the same feature strings; ``(test scores, dev scores,
    fit seconds)``, or None when the ``peers`` extra is not installed."""
    try:
        import sklearn_crfsuite
    except ImportError:
        return None
    X_tr = corpus.crf_features(corpus.train_tokens, corpus.train_columns)
    X_te = corpus.crf_features(corpus.test_tokens, corpus.test_columns)
    X_dv = corpus.crf_features(corpus.dev_tokens, corpus.dev_columns)
    crf = sklearn_crfsuite.CRF(
        algorithm="lbfgs",
        c1=c1,
        c2=c2,
        max_iterations=max_iterations,
        all_possible_transitions=True,
    )
    _, seconds = timed(lambda: crf.fit(X_tr, corpus.train_tags))
    test = corpus.scores([list(p) for p in crf.predict(X_te)])
    dev = corpus.scores([list(p) for p in crf.predict(X_dv)], corpus.dev_tags)
    return test, dev, seconds


def run(
    scale: float = 1.0,
    seeds: int = 3,
    out: Path | None = None,
    *,
    datasets: Sequence[str] = DATASETS,
    methods: Sequence[str] = tuple(METHODS),
    epochs: int = EPOCHS,
    lams: Sequence[float] = ner_protocol.LAMS,
    etas: Sequence[float] = ner_protocol.ETAS,
    phase_factors: Sequence[float] = ner_protocol.PHASE_FACTORS,
    bcfw_cs: Sequence[float] = ner_protocol.BCFW_CS,
    crfsuite: bool = True,
    root: Path | None = None,
) -> pl.DataFrame:
    """The NER table of :mod:`bicrit.reproduce.ner_protocol` (hyper-parameters and epochs
    chosen on the official dev split, test scores of the chosen models): one row per dataset ×
    method × seed. ``scale`` < 1 trains on that fraction of the training sentences (subsample
    seed 0; the seeds then vary the instance order only). With ``out``, also writes ``ner.csv``,
    ``ner_summary.csv`` (mean ± sd over seeds), ``ner_history.csv`` (every run of the grid, per
    epoch: objective, calls, CPU time, dev and test scores) and ``ner_<dataset>.png`` (test
    entity F1 of the chosen runs vs epochs and vs oracle calls, seed 0)."""
    rows: list[dict[str, Any]] = []
    hist: list[dict[str, Any]] = []
    for name in datasets:
        corpus = prepare(name, scale, 0, root=root)
        r, h = ner_protocol.run_dataset(
            corpus,
            seeds,
            methods=methods,
            method_specs=METHODS,
            search_name=_search_name,
            epochs=epochs,
            lams=lams,
            etas=etas,
            phase_factors=phase_factors,
            bcfw_cs=bcfw_cs,
            crfsuite=run_crfsuite if crfsuite else None,
        )
        rows += r
        hist += h
        if out is not None:  # write as we go: a long run keeps its finished datasets
            _write(Path(out), rows, hist, scale)
    table = pl.DataFrame(rows)
    if out is not None:
        _write(Path(out), rows, hist, scale)
    return table


def _write(out: Path, rows: list[dict[str, Any]], hist: list[dict[str, Any]], scale: float):
    out.mkdir(parents=True, exist_ok=True)
    table = pl.DataFrame(rows)
    with atomic_write(out / "ner.csv") as f:
        table.write_csv(f)
    with atomic_write(out / "ner_summary.csv") as f:
        ner_protocol.summarize(table).write_csv(f)
    with atomic_write(out / "ner_history.csv") as f:
        pl.DataFrame(hist, infer_schema_length=None).write_csv(f)
    plot(out, scale)


def chosen_history(history: pl.DataFrame, row: dict[str, Any]) -> pl.DataFrame:
    """The history rows of the run a result ``row`` reports (its dataset, seed, method and
    configuration; the config string holds 6 significant digits, hence the tolerance)."""
    part = history.filter(
        (pl.col("dataset") == row["dataset"])
        & (pl.col("seed") == row["seed"])
        & (pl.col("method") == row["method"])
    )
    for kv in row["config"].split(", "):
        k, v = kv.split("=")
        if k in part.columns:
            part = part.filter((pl.col(k) - float(v)).abs() <= 1e-5 * abs(float(v)))
    return part.sort("epoch")


def plot(out: Path, scale: float) -> None:
    """``ner_<dataset>.png`` from ``ner.csv`` and ``ner_history.csv`` in ``out``: test entity
    F1 of the dev-chosen run of each method (seed 0) vs epochs and vs oracle calls."""
    table = pl.read_csv(out / "ner.csv")
    history = pl.read_csv(out / "ner_history.csv", infer_schema_length=None)
    for name in table["dataset"].unique(maintain_order=True):
        picked = table.filter(
            (pl.col("dataset") == name) & (pl.col("seed") == 0) & (pl.col("method") != "crfsuite")
        )
        parts = [
            chosen_history(history, r).select("method", "epoch", "cumulative_calls", "f1_micro")
            for r in picked.iter_rows(named=True)
        ]
        if parts:
            plot_convergence(
                pl.concat(parts),
                "f1_micro",
                ["method"],
                out / f"ner_{name.replace('/', '_')}.png",
                title=f"{name}: test entity F1 of the dev-chosen runs (scale {scale})",
            )


if __name__ == "__main__":
    main(
        run,
        "NER: margin vs ProbLoss vs Micro-F1 surrogate (issue 5, 4(b))",
        default_scale=1.0,
        default_seeds=3,
    )
