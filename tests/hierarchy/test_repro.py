"""The synthetic-table reproduction (``benches/hierarchy/synthetic_table.py``) at a small size:
``BICRIT_REPRO_SCALE`` (default 0.1) of the fixed number of instances; the unbalanced set with one
seed below full scale, everything at full scale. The numbers are the script's to report (at 0.1
scale HSVM falls below the majority-leaf baseline, so no accuracy is asserted); here the table
must come out whole."""

from __future__ import annotations

import os

import pytest

from bicrit.datasets.synthetic import REPRO_SEEDS

pytestmark = pytest.mark.slow

SCALE = float(os.environ.get("BICRIT_REPRO_SCALE", "0.1"))


def test_synthetic_table_small() -> None:
    from benches.hierarchy import synthetic_table as st

    full = SCALE >= 1
    seeds = REPRO_SEEDS if full else REPRO_SEEDS[:1]
    kinds = st.KINDS if full else ("unbalanced",)
    per_seed, summary = st.run(SCALE, seeds=seeds, kinds=kinds, verbose=False)
    assert per_seed.height == len(kinds) * len(st.MODELS) * len(seeds)
    assert summary.height == len(kinds) * len(st.MODELS)
    assert summary["thesis"].null_count() == 0
    assert per_seed["accuracy"].is_between(0.0, 100.0).all()
    assert set(per_seed["C"].to_list()) <= set(st.C_GRID)
    side = st.side_by_side(summary)
    assert side.height == len(st.MODELS)
    assert set(st.ordering(summary)) == {
        "ssvm >= nhsvm",
        "nhsvm > hsvm by more than the spread",
        "nhsvm > flat by more than the spread",
    }
