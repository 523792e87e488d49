"""Fixtures of the estimator tests: small real data sets (bundled emotions; slices of yeast,
CoNLL-2002 and UD English EWT from the development data, skipped when it is absent)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from bicrit import datasets


@pytest.fixture(scope="session")
def emotions() -> tuple[datasets.MultiLabelDataset, datasets.MultiLabelDataset]:
    """The bundled emotions set (train, test), unscaled as shipped."""
    return datasets.load_bundled("train"), datasets.load_bundled("test")


@pytest.fixture(scope="session")
def emotions_scaled(emotions):
    """Standardized features (statistics of train), labels as int8 0/1."""
    tr, te = emotions
    mu, sd = tr.X.mean(0), tr.X.std(0)
    sd[sd == 0] = 1.0
    return (tr.X - mu) / sd, tr.Y, (te.X - mu) / sd, te.Y


@pytest.fixture(scope="session")
def iris_scaled() -> tuple[np.ndarray, np.ndarray]:
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    return (X - X.mean(0)) / X.std(0), y


@pytest.fixture(scope="session")
def yeast_slice(data_dir: Path):
    tr = datasets.load("yeast", "train", root=data_dir)
    te = datasets.load("yeast", "test", root=data_dir)
    return replace(tr, X=tr.X[:150], Y=tr.Y[:150]), replace(te, X=te.X[:100], Y=te.Y[:100])


def _slice_seq(d: datasets.SequenceDataset, a: int, b: int) -> datasets.SequenceDataset:
    return replace(
        d,
        tokens=d.tokens[a:b],
        tags=d.tags[a:b],
        columns={k: v[a:b] for k, v in d.columns.items()},
        doc_starts=[],
    )


@pytest.fixture(scope="session")
def conll_slice(data_dir: Path):
    """CoNLL-2002 Spanish: 150 training and 100 test sentences of the testa split."""
    d = datasets.load("conll2002/esp", "testa", root=data_dir)
    return _slice_seq(d, 0, 150), _slice_seq(d, 150, 250)


@pytest.fixture(scope="session")
def ud_slice(data_dir: Path):
    """UD English EWT dev: 80 training and 60 test sentences as sentence dicts."""
    from bicrit.estimators.dependency import sentences_of

    s = sentences_of(datasets.load("ud_english_ewt", "dev", root=data_dir))
    return s[:80], s[80:140]
