"""The synthetic-table reproduction (``benches/hierarchy/synthetic_table.py``) at a small size:
``BICRIT_REPRO_SCALE`` (default 0.1) of the fixed number of instances, a two-value C grid; the
unbalanced set with one seed below full scale, both sets and every seed at full scale. The numbers
are the script's to report (at 0.1 scale HSVM falls below the majority-leaf baseline, so no
accuracy is asserted); here the table must come out whole, with the hyper-parameters chosen from
the candidates, and the CSV files the script appends to must hold the same rows."""

from __future__ import annotations

import os

import polars as pl
import pytest

from bicrit.datasets.synthetic import REPRO_SEEDS

pytestmark = pytest.mark.slow

SCALE = float(os.environ.get("BICRIT_REPRO_SCALE", "0.1"))


def test_synthetic_table_small(monkeypatch, tmp_path) -> None:
    from benches.hierarchy import synthetic_table as st

    monkeypatch.setattr(st, "C_GRID", (1.0, 10.0))
    full = SCALE >= 1
    seeds = REPRO_SEEDS if full else REPRO_SEEDS[:1]
    kinds = st.KINDS if full else ("unbalanced",)
    out, valid_out = tmp_path / "per_seed.csv", tmp_path / "valid.csv"
    per_seed, summary = st.run(
        SCALE, seeds=seeds, kinds=kinds, verbose=False, out=out, valid_out=valid_out
    )
    assert per_seed.height == len(kinds) * len(st.MODELS) * len(seeds)
    assert summary.height == len(kinds) * len(st.MODELS)
    assert summary["thesis"].null_count() == 0
    assert per_seed["accuracy"].is_between(0.0, 100.0).all()
    assert set(per_seed["C"].to_list()) <= {1.0, 10.0}
    ssvm = per_seed.filter(pl.col("model") == "ssvm")
    assert set(ssvm["ssvm_loss"].to_list()) <= set(st.SSVM_LOSS_GRID)
    # the CSV files: every per-seed row, and one validation row per candidate of every model
    written = pl.read_csv(out, schema_overrides={"ssvm_loss": pl.Utf8})
    assert written.height == per_seed.height
    assert written["accuracy"].to_list() == pytest.approx(per_seed["accuracy"].to_list())
    valid = pl.read_csv(valid_out, schema_overrides={"ssvm_loss": pl.Utf8})
    n_cand = sum(len(st.candidates(m)) for m in st.MODELS)
    # SSVM: every (loss, C); the three others: every C
    assert n_cand == len(st.SSVM_LOSS_GRID) * 2 + 3 * 2
    assert valid.height == len(kinds) * n_cand
    side = st.side_by_side(summary)
    assert side.height == len(st.MODELS)
    assert st.markdown(summary).count("\n") == 1 + summary.height
    assert set(st.ordering(summary)) == {
        "ssvm >= nhsvm",
        "nhsvm > hsvm by more than the spread",
        "nhsvm > flat by more than the spread",
    }
