"""The Clus HMC benchmark's path (``benches/hierarchy/clus_hmc_table.py``) at a small size: one
FunCat tree set, one C, one epoch, with the featureless reference row and hiclass when installed.
The numbers are the script's to report; here the table must come out whole, the chosen
hyper-parameters must come from the grids, and the reference row must match its definition."""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.slow


def test_clus_hmc_table_small(data_dir, monkeypatch) -> None:
    from benches.hierarchy import clus_hmc_table as bench
    from bicrit.metrics.hierarchy import hierarchical_f1

    monkeypatch.setitem(bench.FIT, "max_epochs", 1)
    monkeypatch.setattr(bench, "C_GRID", (0.1,))
    monkeypatch.setattr(bench, "TAU_FRACTIONS", (0.1,))
    name = "clus_hmc/pheno_FUN"
    table = bench.run((name,), models=("flat", "nhsvm"), verbose=False)
    models = table["model"].to_list()
    assert models[0].startswith("constant") and models[1:3] == ["flat", "nhsvm"]
    try:
        import hiclass  # noqa: F401
    except ImportError:
        assert table.height == 3
    else:
        assert table.height == 4 and models[3].startswith("hiclass")
    for c in ("hF1", "hP", "hR", "valid_hF1", "acc_L1"):
        assert table[c].is_between(0.0, 1.0).all(), c
    ours = table.filter(table["model"].is_in(["flat", "nhsvm"]))
    assert set(ours["C"].to_list()) == {0.1}
    assert set(ours["tau_frac"].to_list()) <= {0.0, 0.1}
    # the featureless row: one closed set for every test instance, scored independently here
    h, _, Y, _, _, _, Yt = bench._data(name)
    k = int(models[0].split("top ")[1].split(" ")[0])
    counts = np.bincount(np.concatenate(Y), minlength=h.n_nodes)
    counts[h.root] = 0
    top = np.argsort(-counts, kind="stable")[:k]
    guess = np.setdiff1d(h.closure(top.tolist()), [h.root])
    assert table["hF1"][0] == pytest.approx(hierarchical_f1(Yt, [guess] * len(Yt), root=h.root))
    assert table["pred_per_inst"][0] == pytest.approx(len(guess))
    # the constant bias column is the last feature
    X = bench._data(name)[1]
    assert np.all(X[:, -1] == 1.0)
    assert "**clus_hmc/pheno_FUN**" in bench.markdown(table)
