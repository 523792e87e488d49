"""The dev-selection protocol of the NER reproduction (``_devgrid``, ``ner_protocol``): choices
use the dev scores only, the test scores are those of the chosen epoch, warm starts continue the
numbering and the totals of the margin phase."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from bicrit.reproduce import _devgrid, ner_protocol
from bicrit.reproduce._devgrid import Curve


def _curve(dev, test, config):
    rows = [
        {"epoch": e + 1, "dev_f1_micro": d, "f1_micro": t}
        for e, (d, t) in enumerate(zip(dev, test, strict=True))
    ]
    return Curve(config, rows)


def test_best_uses_dev_only_and_prefers_earlier_on_ties():
    a = _curve([0.1, 0.5, 0.5], [0.9, 0.2, 0.3], {"k": 1})
    b = _curve([0.4, 0.45, 0.2], [0.99, 0.99, 0.99], {"k": 2})
    c, row = _devgrid.best([a, b], "f1_micro")
    assert c is a and row["epoch"] == 2 and row["f1_micro"] == 0.2
    c, row = _devgrid.best([b, _curve([0.45], [0.0], {"k": 3})], "f1_micro")
    assert c.config == {"k": 2} and row["epoch"] == 2
    with pytest.raises(ValueError, match="no curve"):
        _devgrid.best([], "f1_micro")


def test_summarize_mean_and_sd_over_seeds():
    rows = []
    for seed, f1 in enumerate([0.5, 0.7, 0.9]):
        rows.append(
            {
                "dataset": "d",
                "method": "margin",
                "seed": seed,
                "dev_f1": f1,
                "f1_micro": f1,
                "f1_macro": f1,
                "sentence_f1": f1,
                "token_accuracy": f1,
                "cpu_time": 1.0,
                "epochs": 3,
                "calls_per_inference": 1.5,
            }
        )
    s = ner_protocol.summarize(pl.DataFrame(rows)).row(0, named=True)
    assert s["seeds"] == 3
    assert s["f1_micro_mean"] == pytest.approx(0.7)
    assert s["f1_micro_sd"] == pytest.approx(float(np.std([0.5, 0.7, 0.9], ddof=1)))
    one = ner_protocol.summarize(pl.DataFrame(rows[:1])).row(0, named=True)
    assert one["f1_micro_sd"] == 0.0


@pytest.mark.slow
def test_run_reports_the_dev_chosen_epoch(data_dir, tmp_path):
    from bicrit.reproduce import ner

    table = ner.run(
        0.01,
        2,
        tmp_path,
        datasets=("conll2002/esp",),
        epochs=2,
        lams=(1e-4,),
        etas=(0.003, 0.01),
        phase_factors=(1.0, 0.5),
        bcfw_cs=(0.1,),
        crfsuite=False,
        root=data_dir,
    )
    hist = pl.read_csv(tmp_path / "ner_history.csv")
    assert set(table["method"]) == {"margin", "probloss", "microf1", "margin-bcfw"}
    assert len(table) == 8  # 4 methods × 2 seeds
    for r in table.iter_rows(named=True):
        h = hist.filter((pl.col("seed") == r["seed"]) & (pl.col("method") == r["method"]))
        assert r["dev_f1"] == pytest.approx(h["dev_f1_micro"].max())
        chosen = h.filter(pl.col("dev_f1_micro") == h["dev_f1_micro"].max()).row(0, named=True)
        assert r["f1_micro"] == pytest.approx(chosen["f1_micro"])
        assert r["epochs"] == chosen["epoch"]
        if r["method"] in ("probloss", "microf1"):
            # warm-started after epochs // 2 = 1 margin epoch: own epochs are numbered from 2
            assert h["epoch"].min() == 2 and r["cpu_time"] > 0
    # seed 1 retrains only the configurations chosen with seed 0
    assert (
        hist.filter((pl.col("seed") == 1) & (pl.col("method") == "margin"))["eta0"].n_unique() == 1
    )
    assert (tmp_path / "ner_summary.csv").exists()
