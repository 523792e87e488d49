"""Shared data for the learner benchmarks: MULAN sets from the data folder (BICRIT_DATA),
standardised and with a bias column exactly as ``bicrit reproduce`` prepares them."""

from __future__ import annotations

import os
import platform
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from bicrit.reproduce.multilabel import prepare


def data_root() -> Path:
    here = Path(__file__).resolve().parents[2]
    return Path(os.environ.get("BICRIT_DATA", here.parent / "shared" / "data"))


def load(name: str, n_train: int | None = None, skip: bool = True, standardize: bool = True):
    """(X_train, Y_train, X_test, Y_test) of MULAN set ``name``, prepared (``standardize=False``:
    only the bias column is added); ``n_train`` keeps the first rows of train. Skips (under
    pytest) when the set is absent."""
    from bicrit import datasets

    if not (data_root() / name).is_dir():
        if skip:
            pytest.skip(f"{name} not found under {data_root()} (set BICRIT_DATA)")
        raise FileNotFoundError(name)
    tr = datasets.load(name, "train", root=data_root())
    te = datasets.load(name, "test", root=data_root())

    def dense(Y):
        return np.asarray(Y.toarray() if sp.issparse(Y) else Y, dtype=np.int64)

    Xtr, Ytr = tr.X, dense(tr.Y)
    if n_train is not None:
        Xtr, Ytr = Xtr[:n_train], Ytr[:n_train]
    Xa, (Xt,) = prepare(Xtr, [te.X], standardize=standardize)
    return Xa, Ytr, Xt, dense(te.Y)


def machine_note() -> str:
    return (
        f"{platform.machine()}, {os.cpu_count()} cores (shared with other jobs), "
        f"Python {platform.python_version()}"
    )
