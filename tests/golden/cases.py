"""The fits the golden test pins: one small fit per estimator × learner on real data (yeast,
CoNLL-2002 and UD English EWT slices, the thesis's synthetic hierarchy with every model).

Each case returns a digest of its fit: the trained weights (a SHA-256 of their float64 bytes,
their norm and a fixed sample of entries), the test predictions and the epoch history without
its wall-time columns. ``python -m tests.golden.record`` writes the digests of the code as it
stands to ``golden.json``; ``test_golden.py`` refits and compares. The digests were recorded
before the fit engine was rewritten, so the test shows that the rewrite left every result as
it was (docs/architecture.md, "The path of one fit").
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

#: History columns that measure wall time (they differ between runs by nature).
TIME_COLUMNS = ("time",)

_SAMPLE = 48


def _weights_digest(w: np.ndarray) -> dict[str, Any]:
    w = np.ascontiguousarray(np.asarray(w, dtype=np.float64).ravel())
    idx = np.linspace(0, w.size - 1, num=min(_SAMPLE, w.size)).astype(np.int64)
    nz = np.flatnonzero(w)
    nz_idx = nz[np.linspace(0, nz.size - 1, num=min(_SAMPLE, nz.size)).astype(np.int64)]
    return {
        "sha256": hashlib.sha256(w.tobytes()).hexdigest(),
        "size": int(w.size),
        "norm": float(np.linalg.norm(w)),
        "nnz": int(nz.size),
        "sample_index": nz_idx.tolist() + idx.tolist(),
        "sample": [float(w[i]) for i in nz_idx.tolist() + idx.tolist()],
    }


def _jsonable(x: Any) -> Any:
    if isinstance(x, np.ndarray):
        return _jsonable(x.tolist())
    if isinstance(x, list | tuple):
        return [_jsonable(v) for v in x]
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, float) and not math.isfinite(x):
        return repr(x)
    return x


def _history(est: Any) -> list[dict[str, Any]]:
    rows = est.history_.to_dicts()
    return [{k: _jsonable(v) for k, v in r.items() if k not in TIME_COLUMNS} for r in rows]


def digest(est: Any, predictions: Any) -> dict[str, Any]:
    """What the golden test compares of one fitted estimator."""
    return {
        "weights": _weights_digest(est.coef_),
        "predictions": _jsonable(predictions),
        "history": _history(est),
        "n_epochs": int(est.n_epochs_),
    }


# ---------------------------------------------------------------------------- data


def _yeast(root: Path) -> tuple[Any, Any]:
    from bicrit import datasets

    tr = datasets.load("yeast", "train", root=root)
    te = datasets.load("yeast", "test", root=root)
    return replace(tr, X=tr.X[:120], Y=tr.Y[:120]), replace(te, X=te.X[:60], Y=te.Y[:60])


def _conll(root: Path) -> tuple[Any, Any]:
    from bicrit import datasets

    d = datasets.load("conll2002/esp", "testa", root=root)

    def part(a: int, b: int) -> Any:
        return replace(
            d,
            tokens=d.tokens[a:b],
            tags=d.tags[a:b],
            columns={k: v[a:b] for k, v in d.columns.items()},
            doc_starts=[],
        )

    return part(0, 100), part(100, 160)


def _ewt(root: Path) -> tuple[list[Any], list[Any]]:
    from bicrit import datasets
    from bicrit.estimators.dependency import sentences_of

    s = sentences_of(datasets.load("ud_english_ewt", "dev", root=root))
    return s[:40], s[40:70]


def _synthetic() -> Any:
    from bicrit import datasets

    return datasets.synthetic_hierarchy("unbalanced", n=300, d=20, seed=3)


# ---------------------------------------------------------------------------- cases

Case = Callable[[Path], dict[str, Any]]
CASES: dict[str, Case] = {}

LEARNERS = ("sgd", "bcfw", "cutting-plane", "cutting-plane-n")


def _multilabel(learner: str, surrogate: str) -> Case:
    def run(root: Path) -> dict[str, Any]:
        from bicrit import MultiLabelSVM

        tr, te = _yeast(root)
        est = MultiLabelSVM(
            edges="full",
            surrogate=surrogate,
            # the recording's search: "auto" has picked the one-pass frontier for exact
            # multi-label inference since issue 16 (convex hull before)
            search="convex-hull",
            learner=learner,
            C=0.1,
            max_epochs=4,
            random_state=0,
        ).fit(tr)
        return digest(est, est.predict(te))

    return run


def _multiclass(learner: str) -> Case:
    def run(root: Path) -> dict[str, Any]:
        from sklearn.preprocessing import StandardScaler

        from bicrit import StructuredSVM

        tr, te = _yeast(root)
        sc = StandardScaler().fit(tr.X)
        # a real multiclass target: the first label each yeast gene has (one class per row)
        y_tr = np.argmax(tr.Y, axis=1)
        est = StructuredSVM(
            structure="multiclass",
            surrogate="slack",
            search="convex-hull",  # the recording's (auto: the one-pass frontier since issue 16)
            learner=learner,
            C=0.1,
            max_epochs=4,
            random_state=0,
        ).fit(sc.transform(tr.X), y_tr)
        return digest(est, est.predict(sc.transform(te.X)))

    return run


def _sequence(learner: str, surrogate: str) -> Case:
    def run(root: Path) -> dict[str, Any]:
        from bicrit import SequenceSVM
        from bicrit.datasets import SequenceFeaturizer

        tr, te = _conll(root)
        est = SequenceSVM(
            featurizer=SequenceFeaturizer(2**14),
            surrogate=surrogate,
            learner=learner,
            C=0.1,
            max_epochs=4,
            random_state=0,
        ).fit(tr)
        return digest(est, est.predict(te))

    return run


def _dependency(learner: str, surrogate: str) -> Case:
    def run(root: Path) -> dict[str, Any]:
        from bicrit import DependencySVM

        tr, te = _ewt(root)
        est = DependencySVM(
            n_features=2**14,
            surrogate=surrogate,
            learner=learner,
            C=0.1,
            max_epochs=3,
            random_state=0,
        ).fit(tr)
        return digest(est, [list(p) if isinstance(p, tuple) else p for p in est.predict(te)])

    return run


def _hierarchy(model: str, learner: str) -> Case:
    def run(root: Path) -> dict[str, Any]:
        from bicrit import HierarchicalSVM

        data = _synthetic()
        tr, te = data.splits["train"], data.splits["test"]
        X = data.X
        Y = data.Y
        est = HierarchicalSVM(
            hierarchy=data,
            model=model,
            learner=learner,
            C=1.0,
            max_epochs=4,
            random_state=0,
            alpha_every=2,
            max_alternations=2,
            # the defaults of the recording (issue 18 later turned scaling and node biases on)
            scale=False,
            fit_intercept=False,
        ).fit(X[tr], [Y[i] for i in tr])
        return digest(est, est.predict(X[te]))

    return run


for _l in LEARNERS:
    CASES[f"multilabel-{_l}-margin"] = _multilabel(_l, "margin")
    CASES[f"multilabel-{_l}-slack"] = _multilabel(_l, "slack")
    CASES[f"multiclass-{_l}-slack"] = _multiclass(_l)
    CASES[f"sequence-{_l}-margin"] = _sequence(_l, "margin")
    CASES[f"sequence-{_l}-slack"] = _sequence(_l, "slack")
CASES["multilabel-sgd-probloss"] = _multilabel("sgd", "probloss")
CASES["sequence-sgd-probloss"] = _sequence("sgd", "probloss")
for _l in ("sgd", "bcfw"):
    CASES[f"dependency-{_l}-margin"] = _dependency(_l, "margin")
    CASES[f"dependency-{_l}-slack"] = _dependency(_l, "slack")
for _m in ("flat", "hsvm", "nhsvm", "nhsvm3", "ssvm"):
    CASES[f"hierarchy-{_m}-sgd"] = _hierarchy(_m, "sgd")
CASES["hierarchy-nhsvm-bcfw"] = _hierarchy("nhsvm", "bcfw")
CASES["hierarchy-ssvm-bcfw"] = _hierarchy("ssvm", "bcfw")
